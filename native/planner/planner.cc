// The lifelong planner: Priority Inheritance with Backtracking (PIBT, Okumura et al.) adapted
// to bots that turn before they move, one timestep at a time, with heading-aware distance
// costs, multi-step actions, stall (deadlock/livelock) detection and priority escalation.
// Reasons and rules: docs/planner.md.
#include "planner.h"
#include "rng.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <unordered_map>

#include "distance_tables.h"
#include "escape.h"

namespace wh::planner {

namespace {

// Guidance costs (Options::corridorGuidance): 4 per cell, the cost of leaving it each way.
std::vector<uint8_t> corridorCosts(const Grid& g, uint8_t against, uint8_t lane, uint8_t openMove) {
  if (against <= 1) return {};
  against = std::min<uint8_t>(against, 15);  // DistanceTables' bucket ring holds 16
  lane = std::min<uint8_t>(lane, 15);
  openMove = std::clamp<uint8_t>(openMove, 1, 15);
  const int32_t w = g.width, h = g.height;
  auto open = [&](int32_t x, int32_t y) { return g.inside(x, y) && !(g.flags[static_cast<size_t>(y * w + x)] & kBlocked); };
  std::vector<uint8_t> horiz(static_cast<size_t>(w) * static_cast<size_t>(h), 0), vert(horiz.size(), 0);
  std::vector<int32_t> rowCount(static_cast<size_t>(h), 0), colCount(static_cast<size_t>(w), 0);
  for (int32_t y = 0; y < h; ++y) {
    for (int32_t x = 0; x < w; ++x) {
      if (!open(x, y)) continue;
      const size_t c = static_cast<size_t>(y * w + x);
      if (!open(x, y - 1) && !open(x, y + 1) && (open(x - 1, y) || open(x + 1, y))) {
        horiz[c] = 1;
        ++rowCount[static_cast<size_t>(y)];
      }
      if (!open(x - 1, y) && !open(x + 1, y) && (open(x, y - 1) || open(x, y + 1))) {
        vert[c] = 1;
        ++colCount[static_cast<size_t>(x)];
      }
    }
  }
  // alternate the ways of successive corridor rows and aisle columns
  std::vector<int8_t> rowWay(static_cast<size_t>(h), -1), colWay(static_cast<size_t>(w), -1);
  int k = 0;
  for (int32_t y = 0; y < h; ++y) {
    if (rowCount[static_cast<size_t>(y)] >= 2) rowWay[static_cast<size_t>(y)] = static_cast<int8_t>(k++ % 2 == 0 ? Heading::East : Heading::West);
  }
  k = 0;
  for (int32_t x = 0; x < w; ++x) {
    if (colCount[static_cast<size_t>(x)] >= 2) colWay[static_cast<size_t>(x)] = static_cast<int8_t>(k++ % 2 == 0 ? Heading::South : Heading::North);
  }
  std::vector<uint8_t> cost(horiz.size() * 4, 1);
  for (int32_t y = 0; y < h; ++y) {
    for (int32_t x = 0; x < w; ++x) {
      const Cell c = y * w + x;
      if (!open(x, y)) continue;
      for (int d = 0; d < 4; ++d) {
        const Cell n = g.neighbour(c, static_cast<Heading>(d));
        if (n < 0) continue;
        const bool horizontal = d == 0 || d == 2;
        const auto& mark = horizontal ? horiz : vert;
        if (!mark[static_cast<size_t>(c)] && !mark[static_cast<size_t>(n)]) {
          // open area: lanes by row and column parity
          const int way = horizontal ? (y % 2 == 0 ? 0 : 2) : (x % 2 == 0 ? 1 : 3);
          uint8_t& k = cost[static_cast<size_t>(c) * 4 + static_cast<size_t>(d)];
          k = openMove;
          if (lane > 1 && way != d) k = std::max(lane, openMove);
          continue;
        }
        const int8_t way = horizontal ? rowWay[static_cast<size_t>(y)] : colWay[static_cast<size_t>(x)];
        if (way >= 0 && way != d) cost[static_cast<size_t>(c) * 4 + static_cast<size_t>(d)] = against;
      }
    }
  }
  return cost;
}

constexpr uint32_t kInf = 0x3FFFFFFF;
constexpr int32_t kNone = -1;
// How far the cycle check follows a chain of bots moving into each other's cells before it
// treats the chain as a ring (forbidCycles only).
constexpr int kCycleWalk = 256;
// With Options::heatWeight, PIBT's costs count eighths of a step so that congestion can weigh in.
constexpr uint32_t kHeatScale = 8;
// Its moving average: a standing bot's weight halves in about 140 steps, so the average maps
// where jams keep forming rather than where one is now (MR23-I-10, 2,000 steps: decay 0.9 25.0,
// 0.95 26.3, 0.98 28.6, 0.99 28.7, 0.995 29.4, 0.999 27.9 errands/step).
constexpr float kHeatDecay = 0.995f;

int turnsBetween(Heading a, Heading b) {
  const int d = (static_cast<int>(b) - static_cast<int>(a) + 4) & 3;
  return d == 3 ? 1 : d;
}

// Bots farther than this (Manhattan) from the stalled bot are left out of its escape.
constexpr int32_t kEscapeRadius = 12;

struct Candidate {
  Action action;
  Cell cell;        // the cell it occupies next (its own for turning, waiting, lifting)
  Heading heading;  // heading once done
  uint32_t cost;
  uint32_t order;   // tie-break
};

}  // namespace

struct BotData {
  BotId id = 0;
  bool present = false;
  State state;  // at the current instant; while an action runs: where it started
  // The action under way (`running`) or just decided.
  bool running = false;
  Action action = Action::Wait;
  int64_t started = 0;
  int32_t duration = 1;
  State target;
  bool paused = false;
  bool stuck = false;
  bool hasGoal = false;
  Goal goal;
  DistanceTables::Handle table = -1;
  bool tableLifted = false;
  uint32_t tableVersion = 0;  // Options::flowCostPeriod: the version of the table bestDist was measured in
  bool atGoal = false;  // for kept goals: reached and not left since
  bool unreachableReported = false;
  uint64_t elapsed = 0;  // steps with a goal and not at it: PIBT's priority
  double tie = 0;
  uint32_t bestDist = kInf;
  int64_t bestStep = 0;
  bool stalled = false;
  bool escaping = false;  // one of the bots of the escape under way
  // per step
  bool decided = false;
  Action next = Action::Wait;
  Cell nextCell = kNoCell;
  Heading nextHeading = Heading::East;
};

class PlannerImpl {
 public:
  PlannerImpl(const Grid& grid, const Options& options)
      : grid_(grid),
        opt_(options),
        tables_(grid, options.heuristicMemoryBytes, options.corridorGuidance ? corridorCosts(grid, options.againstFlowCost, options.openLaneCost, options.openMoveCost) : std::vector<uint8_t>{}),
        rng_{options.seed} {
    const size_t cells = static_cast<size_t>(grid.width) * static_cast<size_t>(grid.height);
    occNow_.assign(cells, kNone);
    resNext_.assign(cells, kNone);
    if (flowCosts()) baseCost_ = corridorCosts(grid, options.againstFlowCost, options.openLaneCost, options.openMoveCost);
    if (opt_.heatWeight || flowCosts()) heat_.assign(cells, 0.0f);
    if (flowCosts() && opt_.contraflowWeight) flow_.assign(cells * 4, 0.0f);
  }

  bool flowCosts() const { return opt_.flowCostPeriod > 0 && opt_.flowCostWeight > 0 && opt_.corridorGuidance && opt_.againstFlowCost > 1; }

  Grid grid_;
  Options opt_;
  DistanceTables tables_;
  Rng rng_;
  int64_t now_ = 0;
  Counters counters_;
  std::vector<BotData> bots_;
  std::vector<int32_t> freeSlots_;
  std::unordered_map<BotId, int32_t> slotOf_;
  std::vector<int32_t> occNow_;   // cell -> bot at the current instant
  std::vector<int32_t> resNext_;  // cell -> bot at the next instant
  std::vector<float> heat_;       // Options::heatWeight: per cell, moving average of bots standing
  std::vector<uint8_t> baseCost_; // Options::flowCostPeriod: the guidance costs congestion is added to
  std::vector<float> flow_;       // Options::contraflowWeight: per cell and heading, moving average of bots leaving that way
  std::vector<Cell> touchedNow_, touchedNext_;
  std::vector<int32_t> order_;
  std::vector<int32_t> stack_;
  StepResult result_;
  uint64_t lastPibtNanos_ = 0;

  // Improvement passes (Options::improvePasses): the decisions before PIBT (bots under way,
  // frozen, escaping) to go back to, the best plan so far, and each bot's cost to go now.
  struct Decision {
    bool decided;
    Action next;
    Cell cell;
    Heading heading;
  };
  std::vector<Decision> before_, best_;
  std::vector<int32_t> resBefore_;  // resNext_ of touchedNext_[0, resBefore_.size())
  std::vector<uint32_t> costNow_;
  std::vector<int32_t> passOrder_;
  std::vector<uint8_t> promoted_;

  // The escape under way (escape.h): its bots follow `configs` in lockstep, ahead of PIBT.
  struct EscapeRun {
    bool active = false;
    std::vector<int32_t> slots;  // its bots
    std::vector<std::vector<Cell>> configs;
    std::vector<size_t> at;      // per bot: the last configuration it has reached
    std::vector<uint8_t> left;   // per bot: it left the escape (leaveEscape)
    int64_t progressAt = 0;      // when a bot of it last moved on
  } escape_;
  int64_t nextEscapeAt_ = 0;  // no new escape before this step

  BotData* find(BotId id) {
    auto it = slotOf_.find(id);
    return it == slotOf_.end() ? nullptr : &bots_[static_cast<size_t>(it->second)];
  }
  const BotData* find(BotId id) const {
    auto it = slotOf_.find(id);
    return it == slotOf_.end() ? nullptr : &bots_[static_cast<size_t>(it->second)];
  }

  bool cellOk(Cell c) const { return c >= 0 && c < grid_.width * grid_.height; }
  bool frozen(const BotData& b) const { return b.paused || b.stuck; }

  int32_t durationOf(Action a) const {
    int32_t d = 1;
    switch (a) {
      case Action::Forward: d = opt_.durations.forward; break;
      case Action::TurnLeft:
      case Action::TurnRight: d = opt_.durations.turn; break;
      case Action::Lift: d = opt_.durations.lift; break;
      case Action::Lower: d = opt_.durations.lower; break;
      case Action::Wait: d = 1; break;
    }
    return d < 1 ? 1 : d;
  }

  void reserveCapacity() {
    // doubling, so that adding bots one by one stays linear
    const size_t n = bots_.size();
    if (result_.bots.capacity() >= n) return;
    const size_t cap = std::max<size_t>(16, n * 2);
    result_.bots.reserve(cap);
    result_.events.reserve(cap * 3);
    order_.reserve(cap);
    passOrder_.reserve(cap);
    stack_.reserve(cap);
    touchedNow_.reserve(cap * 2);
    touchedNext_.reserve(cap * 2);
  }

  void dropTable(BotData& b) {
    if (b.table >= 0) tables_.release(b.table);
    b.table = -1;
  }

  void resetProgress(BotData& b) {
    b.bestDist = kInf;
    b.bestStep = now_;
    if (b.stalled) {
      b.stalled = false;  // a new goal or position ends the stall without counting it broken
    }
    b.unreachableReported = false;
    b.atGoal = false;
  }

  // ---- distances ----

  uint32_t movesTo(const BotData& b, Cell c) const {
    if (b.table >= 0) {
      const uint16_t d = tables_.at(b.table, c);
      return d == DistanceTables::kUnreachable ? kInf : d;
    }
    // no table yet (deadline or memory bound): Manhattan distance
    const int32_t w = grid_.width;
    return static_cast<uint32_t>(std::abs(c % w - b.goal.cell % w) + std::abs(c / w - b.goal.cell / w));
  }

  uint32_t goalHeadingCost(const BotData& b, Heading h) const {
    if (!opt_.rotations || !b.goal.heading) return 0;
    return static_cast<uint32_t>(turnsBetween(h, *b.goal.heading)) * static_cast<uint32_t>(durationOf(Action::TurnLeft));
  }

  /** Steps from (cell, heading) to the goal, ignoring others; exact for the first move. */
  uint32_t costFrom(const BotData& b, Cell c, Heading h) const {
    if (!b.hasGoal) return 0;
    if (c == b.goal.cell) return goalHeadingCost(b, h);
    const uint32_t fwd = static_cast<uint32_t>(durationOf(Action::Forward));
    if (!opt_.rotations) {
      const uint32_t m = movesTo(b, c);
      return m >= kInf ? kInf : m * fwd;
    }
    const uint32_t turn = static_cast<uint32_t>(durationOf(Action::TurnLeft));
    uint32_t best = kInf;
    for (int d = 0; d < 4; ++d) {
      const Cell n = grid_.neighbour(c, static_cast<Heading>(d));
      if (n < 0 || !grid_.passable(n, b.state.lifted)) continue;
      const uint32_t m = movesTo(b, n);
      if (m >= kInf) continue;
      uint32_t cost = static_cast<uint32_t>(turnsBetween(h, static_cast<Heading>(d))) * turn + (tables_.moveCost(c, static_cast<Heading>(d)) + m) * fwd;
      if (n == b.goal.cell) cost += goalHeadingCost(b, static_cast<Heading>(d));
      best = std::min(best, cost);
    }
    return best;
  }

  bool goalActPending(const BotData& b) const {
    return (b.goal.act == GoalAct::Lift && !b.state.lifted) || (b.goal.act == GoalAct::Lower && b.state.lifted);
  }

  bool goalSatisfied(const BotData& b) const {
    if (!b.hasGoal || b.state.cell != b.goal.cell) return false;
    if (opt_.rotations && b.goal.heading && b.state.heading != *b.goal.heading) return false;
    return !goalActPending(b);
  }

  // ---- occupancy ----

  void occupyNow(Cell c, int32_t i) {
    if (occNow_[static_cast<size_t>(c)] == kNone) touchedNow_.push_back(c);
    occNow_[static_cast<size_t>(c)] = i;
  }
  void reserveNext(Cell c, int32_t i) {
    if (resNext_[static_cast<size_t>(c)] == kNone) touchedNext_.push_back(c);
    resNext_[static_cast<size_t>(c)] = i;
  }
  void clearOccupancy() {
    for (Cell c : touchedNow_) occNow_[static_cast<size_t>(c)] = kNone;
    for (Cell c : touchedNext_) resNext_[static_cast<size_t>(c)] = kNone;
    touchedNow_.clear();
    touchedNext_.clear();
  }

  // With forbidCycles: would bot `i` entering `to` close a ring of bots moving into each other's
  // cells? Follows the decided movers from `to` on.
  bool closesRing(int32_t i, Cell to) const {
    const Cell home = bots_[static_cast<size_t>(i)].state.cell;
    Cell cell = to;
    for (int n = 0; n < kCycleWalk; ++n) {
      const int32_t k = occNow_[static_cast<size_t>(cell)];
      if (k == kNone || k == i) return k == i;
      const BotData& o = bots_[static_cast<size_t>(k)];
      if (!o.decided || o.nextCell == cell || o.running) return false;
      if (o.nextCell == home) return true;
      cell = o.nextCell;
    }
    return true;  // too long to tell: be safe
  }

  void decide(BotData& b, Action a, Cell cell, Heading h) {
    b.decided = true;
    b.next = a;
    b.nextCell = cell;
    b.nextHeading = h;
  }

  // Bot i waits this step and keeps its cell.
  void holdInPlace(int32_t i) {
    BotData& b = bots_[static_cast<size_t>(i)];
    reserveNext(b.state.cell, i);
    decide(b, Action::Wait, b.state.cell, b.state.heading);
  }

  // The best use of a step in place: the goal's act, a turn that brings the bot closer, or a wait.
  void stayAction(BotData& b) {
    const Cell c = b.state.cell;
    const Heading hd = b.state.heading;
    decide(b, Action::Wait, c, hd);
    if (!b.hasGoal) return;
    if (c == b.goal.cell && goalActPending(b) && goalHeadingCost(b, hd) == 0) {
      decide(b, b.goal.act == GoalAct::Lift ? Action::Lift : Action::Lower, c, hd);
      return;
    }
    if (!opt_.rotations) return;
    const uint32_t here = costFrom(b, c, hd);
    const uint32_t l = costFrom(b, c, turnLeft(hd));
    const uint32_t r = costFrom(b, c, turnRight(hd));
    if (l < here && l <= r) decide(b, Action::TurnLeft, c, turnLeft(hd));
    else if (r < here) decide(b, Action::TurnRight, c, turnRight(hd));
  }

  // Turns a bot towards neighbour `v` (it stays in its cell this step).
  void turnTowards(BotData& b, Cell v) {
    const Cell c = b.state.cell;
    const Heading hd = b.state.heading;
    int dir = 0;
    while (dir < 4 && grid_.neighbour(c, static_cast<Heading>(dir)) != v) ++dir;
    const int delta = (dir - static_cast<int>(hd) + 4) & 3;
    bool left = delta == 3;
    if (delta == 2) {
      // about-turn: the side the bot's own goal prefers (a coin when it does not care)
      const uint32_t l = costFrom(b, c, turnLeft(hd)), r = costFrom(b, c, turnRight(hd));
      left = l != r ? l < r : (rng_.next() & 1);
    }
    decide(b, left ? Action::TurnLeft : Action::TurnRight, c, left ? turnLeft(hd) : turnRight(hd));
  }

  /**
   * PIBT for bot i; `pusher` (kNone: nobody) has reserved i's cell for the next instant.
   * Candidates are the four neighbours and staying, by cost to the goal including the turns to
   * face a neighbour. A bot that picks a neighbour it does not face turns towards it this step
   * instead of moving (finalize() makes the bots behind it wait): the reservation still makes
   * the occupant of that cell give way, so the move happens a step or two later.
   */
  bool pibt(int32_t i, int32_t pusher) {
    BotData& b = bots_[static_cast<size_t>(i)];
    const Cell c = b.state.cell;
    const Heading hd = b.state.heading;
    const uint32_t fwd = static_cast<uint32_t>(durationOf(Action::Forward));
    const uint32_t turn = static_cast<uint32_t>(durationOf(Action::TurnLeft));
    const bool slowForward = fwd > 1;
    Candidate cand[5];
    int n = 0;
    const uint32_t noiseMask = b.stalled ? 0x7 : 0x1;
    for (int d = 0; d < 4; ++d) {
      const Cell v = grid_.neighbour(c, static_cast<Heading>(d));
      if (v < 0 || !grid_.passable(v, b.state.lifted)) continue;
      const uint32_t turns = opt_.rotations ? static_cast<uint32_t>(turnsBetween(hd, static_cast<Heading>(d))) : 0;
      uint32_t cost = turns * turn;
      uint32_t m = 0;
      if (b.hasGoal) {
        m = movesTo(b, v);
        if (m >= kInf) continue;
        cost += (tables_.moveCost(c, static_cast<Heading>(d)) + m) * fwd;
        if (v == b.goal.cell) cost += goalHeadingCost(b, static_cast<Heading>(d));
      }
      // Ties go to the cell nearer the goal, then to fewer turns: facing away from the goal, the
      // about-turn (2 turns, then closer) costs as much as a step away (no turn, 2 further),
      // and preferring the step away would walk the bot off for good.
      uint32_t order = std::min<uint32_t>(m, 0xFFFF) * 64 + turns * 16 + static_cast<uint32_t>(rng_.next() & noiseMask);
      if (!opt_.rotations && occNow_[static_cast<size_t>(v)] != kNone) order += 8;  // prefer free cells
      if (opt_.heatWeight) cost = cost * kHeatScale + static_cast<uint32_t>(heat_[static_cast<size_t>(v)] * static_cast<float>(opt_.heatWeight));
      cand[n++] = {Action::Forward, v, static_cast<Heading>(d), cost, order};
    }
    if (pusher == kNone) {
      uint32_t stay = 0;
      if (b.hasGoal) {
        const uint32_t here = costFrom(b, c, hd);
        stay = here >= kInf ? kInf - 1 : (here == 0 || (c == b.goal.cell && goalActPending(b)) ? 0 : here + 1);
        // scaled like the moves, above any congestion a move at the same cost can carry
        if (opt_.heatWeight && stay != 0 && stay < kInf - 1) stay = stay * kHeatScale + opt_.heatWeight + 1u;
      }
      cand[n++] = {Action::Wait, c, hd, stay, stay == 0 ? 0u : 0xFFFFFFFFu};
    }
    // insertion sort: at most 5 candidates
    for (int x = 1; x < n; ++x) {
      const Candidate y = cand[x];
      int j = x - 1;
      while (j >= 0 && (cand[j].cost > y.cost || (cand[j].cost == y.cost && cand[j].order > y.order))) {
        cand[j + 1] = cand[j];
        --j;
      }
      cand[j + 1] = y;
    }
    const Cell pusherCell = pusher == kNone ? kNoCell : bots_[static_cast<size_t>(pusher)].state.cell;
    for (int k = 0; k < n; ++k) {
      const Candidate& x = cand[k];
      const int32_t mine = resNext_[static_cast<size_t>(c)];
      if (x.cell == c) {
        if (mine != kNone && mine != i) continue;  // the pusher takes this cell
        reserveNext(c, i);
        stayAction(b);
        return true;
      }
      const Cell v = x.cell;
      const bool faces = !opt_.rotations || x.heading == hd;
      if (slowForward) {
        // a move over several steps holds both cells: only into a cell nobody is in, and the
        // bot's own cell stays taken (a pushed bot cannot give way in one step)
        if (mine != kNone && mine != i) continue;
        if (!faces) {
          reserveNext(c, i);
          turnTowards(b, v);
          return true;
        }
        if (occNow_[static_cast<size_t>(v)] != kNone || resNext_[static_cast<size_t>(v)] != kNone) continue;
        reserveNext(v, i);
        reserveNext(c, i);
        decide(b, Action::Forward, v, x.heading);
        return true;
      }
      if (resNext_[static_cast<size_t>(v)] != kNone) continue;
      const int32_t k2 = occNow_[static_cast<size_t>(v)];
      if (k2 != kNone && k2 != i) {
        const BotData& o = bots_[static_cast<size_t>(k2)];
        if (o.decided && o.nextCell == c) continue;  // swap
        if (!o.decided && o.escaping) continue;  // follows its escape: not to be pushed
        if (opt_.forbidCycles && closesRing(i, v)) continue;
      }
      reserveNext(v, i);
      decide(b, Action::Forward, v, x.heading);
      if (k2 != kNone && k2 != i && !bots_[static_cast<size_t>(k2)].decided) {
        ++counters_.pushes;
        if (!pibt(k2, i)) {
          b.decided = false;  // k2 stays in v (it reserved v for itself)
          continue;
        }
      }
      return true;
    }
    // Pushed and no way out: stay, facing the best way out other than the pusher's cell, so
    // that a later push (or the bot's own move) can succeed.
    reserveNext(c, i);
    for (int k = 0; k < n; ++k) {
      if (cand[k].cell != c && cand[k].cell != pusherCell && opt_.rotations && cand[k].heading != hd && !slowForward) {
        turnTowards(b, cand[k].cell);
        return false;
      }
      if (cand[k].cell != c && cand[k].cell != pusherCell) break;
    }
    decide(b, Action::Wait, c, hd);
    return false;
  }

  /**
   * Turns PIBT's choices into actions: a bot that chose a neighbour it does not face turns
   * towards it and stays; then every bot that meant to enter the cell of a bot that stays waits
   * too, transitively (so nobody enters a cell that is not being vacated).
   */
  void finalize() {
    stack_.clear();
    for (size_t i = 0; i < bots_.size(); ++i) {
      BotData& b = bots_[i];
      if (!b.present) continue;
      if (!b.running && !frozen(b) && b.next == Action::Forward && opt_.rotations && b.nextHeading != b.state.heading) {
        turnTowards(b, b.nextCell);
      }
      const bool leaves = !b.running ? b.next == Action::Forward : (b.action == Action::Forward && b.started + b.duration == now_ + 1);
      if (!leaves) stack_.push_back(static_cast<int32_t>(i));
    }
    while (!stack_.empty()) {
      const int32_t s = stack_.back();
      stack_.pop_back();
      const Cell c = bots_[static_cast<size_t>(s)].state.cell;
      const int32_t j = resNext_[static_cast<size_t>(c)];
      if (j == kNone || j == s) continue;
      BotData& o = bots_[static_cast<size_t>(j)];
      if (o.running || o.next != Action::Forward || o.nextCell != c) continue;
      resNext_[static_cast<size_t>(c)] = s;
      decide(o, Action::Wait, o.state.cell, o.state.heading);
      stack_.push_back(j);
    }
  }

  // ---- escapes (escape.h) ----

  /** A bot whose goal or state changes leaves the escape: the plan goes on with the others
   *  (the bot is then like any other in their way), and ends if it makes no more progress. */
  void leaveEscape(BotData& b) {
    if (!b.escaping) return;
    b.escaping = false;
    bool anyone = false;
    for (size_t m = 0; m < escape_.slots.size(); ++m) {
      if (&bots_[static_cast<size_t>(escape_.slots[m])] == &b) escape_.left[m] = 1;
      anyone = anyone || !escape_.left[m];
    }
    if (!anyone) endEscape(false);
  }

  void endEscape(bool done) {
    escape_.active = false;
    for (size_t m = 0; m < escape_.slots.size(); ++m) {
      BotData& b = bots_[static_cast<size_t>(escape_.slots[m])];
      if (!escape_.left[m]) b.escaping = false;
    }
    ++(done ? counters_.escapesDone : counters_.escapesAborted);
    nextEscapeAt_ = now_ + static_cast<int64_t>(opt_.stallSteps);
  }

  // A stall that top priority has not broken in another `stallSteps`: plan an escape for the
  // bots nearest to it (those not in the middle of an action and free to move).
  void maybeStartEscape(Deadline deadline) {
    if (escape_.active || now_ < nextEscapeAt_ || opt_.escapeBots < 2) return;
    const int64_t waited = 2 * static_cast<int64_t>(opt_.stallSteps);
    int32_t seed = kNone;
    for (int32_t i : order_) {
      const BotData& b = bots_[static_cast<size_t>(i)];
      if (!b.stalled || b.running || frozen(b) || now_ - b.bestStep < waited) continue;
      if (seed == kNone || b.bestStep < bots_[static_cast<size_t>(seed)].bestStep) seed = i;
    }
    if (seed == kNone) return;
    const Cell at = bots_[static_cast<size_t>(seed)].state.cell;
    auto far = [&](const BotData& b) {
      const int32_t w = grid_.width;
      return std::abs(b.state.cell % w - at % w) + std::abs(b.state.cell / w - at / w);
    };
    // the nearest ones (ties in priority order), then in priority order so that the first
    // choose their targets first
    std::vector<std::pair<int32_t, size_t>> byDistance;
    for (size_t r = 0; r < order_.size(); ++r) {
      const BotData& b = bots_[static_cast<size_t>(order_[r])];
      if (!b.running && !frozen(b) && far(b) <= kEscapeRadius) byDistance.emplace_back(far(b), r);
    }
    if (byDistance.size() < 2) return;
    std::sort(byDistance.begin(), byDistance.end());
    if (byDistance.size() > opt_.escapeBots) byDistance.resize(opt_.escapeBots);
    std::sort(byDistance.begin(), byDistance.end(), [](const auto& x, const auto& y) { return x.second < y.second; });
    std::vector<int32_t> near;
    for (const auto& [d, r] : byDistance) near.push_back(order_[r]);
    EscapeProblem problem;
    problem.grid = &grid_;
    problem.seed = opt_.seed + static_cast<uint64_t>(now_);
    std::vector<uint8_t> member(bots_.size(), 0);
    for (int32_t i : near) {
      const BotData& b = bots_[static_cast<size_t>(i)];
      member[static_cast<size_t>(i)] = 1;
      problem.bots.push_back(EscapeBot{b.state.cell, b.state.lifted, b.hasGoal ? b.goal.cell : kNoCell});
    }
    for (size_t i = 0; i < bots_.size(); ++i) {
      const BotData& b = bots_[i];
      if (!b.present || member[i]) continue;
      problem.walls.push_back(b.state.cell);
      if (b.running && b.action == Action::Forward) problem.walls.push_back(b.target.cell);
    }
    problem.movesToGoal = [&](size_t k, Cell c) { return movesTo(bots_[static_cast<size_t>(near[k])], c); };
    const auto now = Clock::now();
    // bounded in work (EscapeProblem::maxGenerated, the same plan on a busy machine) and, should the
    // machine be very busy, in time: a share of what is left of the step
    const Deadline until = now < deadline ? now + (deadline - now) / 4 : now;
    std::vector<std::vector<Cell>> configs = planEscape(problem, until);
    if (configs.size() < 2) {
      ++counters_.escapesUnsolved;
      nextEscapeAt_ = now_ + static_cast<int64_t>(opt_.stallSteps);
      return;
    }
    ++counters_.escapesPlanned;
    const BotData& s = bots_[static_cast<size_t>(seed)];
    result_.events.push_back(Event{EventKind::Escaped, s.id, now_, s.state.cell, static_cast<uint32_t>(near.size())});
    escape_.active = true;
    escape_.slots = near;
    for (int32_t i : near) bots_[static_cast<size_t>(i)].escaping = true;
    escape_.configs = std::move(configs);
    escape_.at.assign(near.size(), 0);
    escape_.left.assign(near.size(), 0);
    escape_.progressAt = now_;
  }

  // Moves each escape bot's mark past the configurations it is already in.
  void advanceEscape() {
    const size_t last = escape_.configs.size() - 1;
    for (size_t m = 0; m < escape_.slots.size(); ++m) {
      const BotData& b = bots_[static_cast<size_t>(escape_.slots[m])];
      if (escape_.left[m] || b.running) continue;
      size_t& k = escape_.at[m];
      while (k < last && escape_.configs[k + 1][m] == b.state.cell) {
        if (escape_.configs[k][m] != b.state.cell) escape_.progressAt = now_;
        ++k;
      }
    }
  }

  /**
   * Decides this step's actions of the escape's bots, before PIBT decides the others': a bot
   * makes its move from configuration T to T+1 once every bot of the escape has reached T
   * (lockstep keeps the plan valid when some must turn first), pushing a bot from outside out
   * of the way if needed; the others wait.
   */
  void driveEscape() {
    if (!escape_.active) return;
    advanceEscape();
    size_t t = escape_.configs.size() - 1;
    for (size_t m = 0; m < escape_.slots.size(); ++m) {
      if (!escape_.left[m]) t = std::min(t, escape_.at[m]);
    }
    if (t == escape_.configs.size() - 1) return endEscape(true);
    if (now_ - escape_.progressAt > 3 * static_cast<int64_t>(opt_.stallSteps)) return endEscape(false);
    const bool slowForward = durationOf(Action::Forward) > 1;
    for (size_t m = 0; m < escape_.slots.size(); ++m) {
      const int32_t i = escape_.slots[m];
      if (!escape_.left[m] && !bots_[static_cast<size_t>(i)].decided && escape_.at[m] != t) holdInPlace(i);
    }
    for (size_t pass = 0; pass <= escape_.slots.size(); ++pass) {
      bool changed = false;
      for (size_t m = 0; m < escape_.slots.size(); ++m) {
        const int32_t i = escape_.slots[m];
        BotData& b = bots_[static_cast<size_t>(i)];
        if (escape_.left[m] || b.decided) continue;
        const Cell c = b.state.cell;
        const Cell v = escape_.configs[t + 1][m];
        if (resNext_[static_cast<size_t>(v)] != kNone) continue;  // waits
        if (!grid_.passable(v, b.state.lifted)) return endEscape(false);  // a cell changed under the plan
        int dir = 0;
        while (dir < 4 && grid_.neighbour(c, static_cast<Heading>(dir)) != v) ++dir;
        if (dir == 4) return endEscape(false);
        if (opt_.rotations && static_cast<Heading>(dir) != b.state.heading) {
          reserveNext(c, i);
          turnTowards(b, v);
          changed = true;
          continue;
        }
        const int32_t k2 = occNow_[static_cast<size_t>(v)];
        if (k2 != kNone && k2 != i) {
          BotData& o = bots_[static_cast<size_t>(k2)];
          if (!o.decided && o.escaping) continue;  // its own move comes first
          if (slowForward || (o.decided && (o.nextCell == v || closesRing(i, v)))) continue;
          reserveNext(v, i);
          decide(b, Action::Forward, v, static_cast<Heading>(dir));
          if (!o.decided) {
            ++counters_.pushes;
            if (!pibt(k2, i)) b.decided = false;  // it stays (and holds v)
          }
        } else {
          reserveNext(v, i);
          if (slowForward) reserveNext(c, i);
          decide(b, Action::Forward, v, static_cast<Heading>(dir));
        }
        changed = changed || b.decided;
      }
      if (!changed) break;
    }
    for (size_t m = 0; m < escape_.slots.size(); ++m) {
      const int32_t i = escape_.slots[m];
      if (!escape_.left[m] && !bots_[static_cast<size_t>(i)].decided) holdInPlace(i);
    }
  }

  // ---- improving the first answer (Options::improvePasses) ----

  /** Cost to go of bot b from (cell, heading), plus one while its goal's lift or lower is due. */
  uint32_t toGo(const BotData& b, Cell c, Heading h, bool actDue) const {
    const uint32_t d = costFrom(b, c, h);
    return d >= kInf ? kInf : d + (actDue ? 1u : 0u);
  }

  /** How much closer the plan just decided brings bot i (negative: farther; 0 without a goal). */
  int64_t progressOf(int32_t i) const {
    const BotData& b = bots_[static_cast<size_t>(i)];
    const uint32_t now = costNow_[static_cast<size_t>(i)];
    if (!b.hasGoal || now >= kInf || b.running) return 0;
    const bool acts = b.next == Action::Lift || b.next == Action::Lower;
    const uint32_t after = toGo(b, b.nextCell, b.nextHeading, goalActPending(b) && !acts);
    return after >= kInf ? 0 : static_cast<int64_t>(now) - static_cast<int64_t>(after);
  }

  int64_t planProgress() const {
    int64_t sum = 0;
    for (int32_t i : order_) sum += progressOf(i);
    return sum;
  }

  void saveDecisions(std::vector<Decision>& into) const {
    into.resize(bots_.size());
    for (size_t i = 0; i < bots_.size(); ++i) {
      const BotData& b = bots_[i];
      into[i] = Decision{b.decided, b.next, b.nextCell, b.nextHeading};
    }
  }

  void loadDecisions(const std::vector<Decision>& from) {
    for (size_t i = 0; i < bots_.size(); ++i) {
      BotData& b = bots_[i];
      b.decided = from[i].decided;
      b.next = from[i].next;
      b.nextCell = from[i].cell;
      b.nextHeading = from[i].heading;
    }
  }

  /** Remembers the state before the PIBT pass: the decided bots and the reservations. */
  void markBeforePibt() {
    saveDecisions(before_);
    resBefore_.resize(touchedNext_.size());
    for (size_t k = 0; k < touchedNext_.size(); ++k) resBefore_[k] = resNext_[static_cast<size_t>(touchedNext_[k])];
  }

  /** Back to the state markBeforePibt() saw, for another pass. */
  void backToBeforePibt() {
    for (Cell c : touchedNext_) resNext_[static_cast<size_t>(c)] = kNone;
    touchedNext_.resize(resBefore_.size());
    for (size_t k = 0; k < resBefore_.size(); ++k) resNext_[static_cast<size_t>(touchedNext_[k])] = resBefore_[k];
    loadDecisions(before_);
  }

  /**
   * Spends up to `improvePasses` more PIBT passes, until `end`, on beating the first answer
   * (already decided and finalized): each pass moves a random half of the bots that made no
   * progress in the best plan so far ahead of the others (the rest keep their order), and the
   * plan with the largest total progress wins. Every pass is a complete PIBT pass, so every
   * candidate plan keeps the movement rules; only the choice between them is new.
   */
  void improve(Clock::time_point end) {
    costNow_.resize(bots_.size());
    for (int32_t i : order_) {
      const BotData& b = bots_[static_cast<size_t>(i)];
      costNow_[static_cast<size_t>(i)] = b.hasGoal && !b.running ? toGo(b, b.state.cell, b.state.heading, goalActPending(b)) : kInf;
    }
    int64_t best = planProgress();
    saveDecisions(best_);
    const uint64_t pushes = counters_.pushes;
    bool won = false;
    auto passStart = Clock::now();
    for (uint32_t pass = 0; pass < opt_.improvePasses; ++pass) {
      // the next pass would take about as long as the last one: stop if it would end after `end`
      const auto now = Clock::now();
      if (now + (pass == 0 ? std::chrono::nanoseconds(lastPibtNanos_) : now - passStart) > end) break;
      passStart = now;
      // the order: a random half of the bots that did not get closer in the best plan, first
      passOrder_.clear();
      promoted_.assign(bots_.size(), 0);
      for (int32_t i : order_) {
        const Decision& d = best_[static_cast<size_t>(i)];
        const BotData& b = bots_[static_cast<size_t>(i)];
        if (before_[static_cast<size_t>(i)].decided || !b.hasGoal) continue;
        const bool moved = d.cell != b.state.cell || d.heading != b.state.heading || d.next == Action::Lift || d.next == Action::Lower;
        if (!moved && (rng_.next() & 1)) {
          passOrder_.push_back(i);
          promoted_[static_cast<size_t>(i)] = 1;
        }
      }
      if (passOrder_.empty()) break;  // everyone moves already
      for (int32_t i : order_) {
        if (!promoted_[static_cast<size_t>(i)] && !before_[static_cast<size_t>(i)].decided) passOrder_.push_back(i);
      }
      backToBeforePibt();
      for (int32_t i : passOrder_) {
        if (!bots_[static_cast<size_t>(i)].decided) pibt(i, kNone);
      }
      finalize();
      ++counters_.improvePasses;
      const int64_t p = planProgress();
      if (p > best) {
        best = p;
        saveDecisions(best_);
        won = true;
      }
    }
    counters_.pushes = pushes;
    if (won) ++counters_.improveWins;
    loadDecisions(best_);
  }

  // ---- congestion in the distance tables (Options::flowCostPeriod) ----

  /** Guidance costs plus the congestion of the cell each move enters: a queue whose cells are
   *  taken a fraction h of the time costs about h / (1 - h) steps per cell to pass. */
  void reweigh() {
    std::vector<uint8_t> cost = baseCost_;
    const float w = static_cast<float>(opt_.flowCostWeight) / static_cast<float>(kHeatScale);
    const float wc = static_cast<float>(opt_.contraflowWeight) / static_cast<float>(kHeatScale);
    const Cell cells = grid_.width * grid_.height;
    for (Cell c = 0; c < cells; ++c) {
      if (grid_.flags[static_cast<size_t>(c)] & kBlocked) continue;
      for (int d = 0; d < 4; ++d) {
        const Cell n = grid_.neighbour(c, static_cast<Heading>(d));
        if (n < 0) continue;
        const float h = std::min(heat_[static_cast<size_t>(n)], 0.9f);
        float extra = w * h / (1.0f - h);
        if (!flow_.empty()) {
          // Options::contraflowWeight: bots leaving n towards c meet this move head-on
          const float f = std::min(flow_[static_cast<size_t>(n) * 4 + static_cast<size_t>((d + 2) & 3)], 0.9f);
          extra += wc * f / (1.0f - f);
        }
        uint8_t& k = cost[static_cast<size_t>(c) * 4 + static_cast<size_t>(d)];
        k = static_cast<uint8_t>(std::min(15.0f, static_cast<float>(k) + std::round(extra)));
      }
    }
    tables_.reweigh(std::move(cost));
    ++counters_.flowUpdates;
  }

  // ---- the step ----

  void emit(EventKind kind, const BotData& b, int64_t at) {
    result_.events.push_back(Event{kind, b.id, at, b.state.cell, 0});
  }

  void ensureTables(Deadline deadline, Clock::time_point start) {
    // Reserve time for the PIBT pass itself: twice the last one, at least 2 ms plus 2 us a bot
    // (the first step has no measure yet), and a tenth of the step's budget, because on a
    // shared machine the pass can be preempted (a 1 s step overran by 70 ms at load 6).
    const uint64_t guess = 2'000'000 + 2'000 * static_cast<uint64_t>(order_.size());
    const auto budget = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - start).count();
    const uint64_t tenth = budget > 0 ? static_cast<uint64_t>(budget) / 10 : 0;
    const auto reserve = std::chrono::nanoseconds(std::max({guess, lastPibtNanos_ * 2, tenth}));
    const Deadline stopAt = deadline - reserve;
    tables_.refresh(stopAt, flowCosts() ? opt_.flowRefreshPerStep : SIZE_MAX);
    uint32_t sinceCheck = 0;
    bool late = false;
    for (int32_t i : order_) {
      BotData& b = bots_[static_cast<size_t>(i)];
      if (!b.hasGoal) continue;
      if (b.table >= 0 && b.tableLifted == b.state.lifted) continue;
      const bool cached = tables_.cached(b.goal.cell, b.state.lifted);
      if (!cached) {
        if (late) continue;
        if (++sinceCheck >= 4) {
          sinceCheck = 0;
          if (Clock::now() > stopAt) {
            late = true;
            continue;
          }
        }
      }
      dropTable(b);
      b.table = tables_.acquire(b.goal.cell, b.state.lifted);
      b.tableLifted = b.state.lifted;
      if (b.table >= 0) b.tableVersion = tables_.version(b.table);
    }
    counters_.heuristicTables = tables_.computed();
    counters_.heuristicEvictions = tables_.evicted();
    counters_.heuristicBytes = tables_.bytes();
  }

  void sortByPriority() {
    order_.clear();
    for (size_t i = 0; i < bots_.size(); ++i) {
      if (bots_[i].present) order_.push_back(static_cast<int32_t>(i));
    }
    std::sort(order_.begin(), order_.end(), [this](int32_t x, int32_t y) {
      const BotData& a = bots_[static_cast<size_t>(x)];
      const BotData& b = bots_[static_cast<size_t>(y)];
      if (a.stalled != b.stalled) return a.stalled;
      if (a.elapsed != b.elapsed) return a.elapsed > b.elapsed;
      if (a.tie != b.tie) return a.tie > b.tie;
      return x < y;
    });
  }

  const StepResult& step(Deadline deadline) {
    const auto t0 = Clock::now();
    const int64_t t = now_;
    result_.step = t;
    result_.complete = true;
    result_.bots.clear();
    result_.events.clear();

    sortByPriority();
    ensureTables(deadline, t0);
    const auto t1 = Clock::now();

    // occupancy now; running and frozen bots are decided already
    clearOccupancy();
    for (size_t i = 0; i < bots_.size(); ++i) {
      BotData& b = bots_[i];
      if (!b.present) continue;
      b.decided = false;
      occupyNow(b.state.cell, static_cast<int32_t>(i));
      if (b.running && b.action == Action::Forward) occupyNow(b.target.cell, static_cast<int32_t>(i));
    }
    for (size_t i = 0; i < bots_.size(); ++i) {
      BotData& b = bots_[i];
      if (!b.present) continue;
      const int32_t self = static_cast<int32_t>(i);
      if (b.running) {
        const bool completes = b.started + b.duration == t + 1;
        if (b.action == Action::Forward) {
          reserveNext(b.target.cell, self);
          if (!completes) reserveNext(b.state.cell, self);
        } else {
          reserveNext(b.state.cell, self);
        }
        b.decided = true;
        b.nextCell = b.action == Action::Forward && completes ? b.target.cell : b.state.cell;
      } else if (frozen(b)) {
        holdInPlace(self);
      }
    }
    maybeStartEscape(deadline);
    driveEscape();
    const bool improving = opt_.improvePasses > 0;
    if (improving) markBeforePibt();
    for (int32_t i : order_) {
      if (!bots_[static_cast<size_t>(i)].decided) pibt(i, kNone);
    }
    finalize();
    auto t2 = Clock::now();
    lastPibtNanos_ = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(t2 - t1).count());
    if (improving && t2 < deadline) {
      // the first answer stands; improve it until the setting's budget ends or the deadline
      // nears (the same reserve as the distance tables keep for a pass: a preempted pass on a
      // shared machine must still end in time)
      const auto budget = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - t0).count();
      const auto reserve = std::chrono::nanoseconds(std::max<int64_t>({static_cast<int64_t>(lastPibtNanos_) * 2, budget > 0 ? budget / 10 : 0}));
      Clock::time_point end = deadline - reserve;
      if (opt_.improveBudget.count() > 0) end = std::min(end, t2 + opt_.improveBudget);
      improve(end);
      t2 = Clock::now();
    }
    if (t2 > deadline) {
      // too late: nothing new starts, actions under way go on
      result_.complete = false;
      ++counters_.incompleteSteps;
      for (BotData& b : bots_) {
        if (b.present && !b.running) decide(b, Action::Wait, b.state.cell, b.state.heading);
      }
    }

    if (!heat_.empty()) {
      for (float& x : heat_) x *= kHeatDecay;
      for (float& x : flow_) x *= kHeatDecay;
      for (const BotData& b : bots_) {
        if (b.present && b.hasGoal && !b.running && b.next != Action::Forward && !goalActPending(b)) heat_[static_cast<size_t>(b.state.cell)] += 1.0f - kHeatDecay;
        if (!flow_.empty() && b.present && !b.running && b.next == Action::Forward && b.nextCell != b.state.cell) {
          flow_[static_cast<size_t>(b.state.cell) * 4 + static_cast<size_t>(b.nextHeading)] += 1.0f - kHeatDecay;
        }
      }
      if (flowCosts() && (t + 1) % static_cast<int64_t>(opt_.flowCostPeriod) == 0) reweigh();
    }
    // start the decided actions, report, advance
    for (BotData& b : bots_) {
      if (!b.present) continue;
      if (!b.running) {
        b.running = true;
        b.action = b.next;
        b.started = t;
        b.duration = durationOf(b.next);
        b.target = b.state;
        b.target.cell = b.nextCell;
        b.target.heading = b.nextHeading;
        if (b.next == Action::Lift) b.target.lifted = true;
        if (b.next == Action::Lower) b.target.lifted = false;
      }
      BotStep s;
      s.bot = b.id;
      s.action = b.action;
      s.starts = b.started == t;
      s.duration = static_cast<uint16_t>(b.duration);
      s.endStep = b.started + b.duration;
      s.from = b.state;
      s.to = b.target;
      result_.bots.push_back(s);
      if (b.started + b.duration == t + 1) {
        b.state = b.target;
        b.running = false;
      }
    }
    now_ = t + 1;
    if (escape_.active) advanceEscape();
    afterStep();

    const auto t3 = Clock::now();
    const uint64_t ns = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(t3 - t0).count());
    ++counters_.steps;
    counters_.planNanosLast = ns;
    counters_.planNanosTotal += ns;
    counters_.planNanosMax = std::max(counters_.planNanosMax, ns);
    return result_;
  }

  // goals reached, priorities, stalls
  void afterStep() {
    for (BotData& b : bots_) {
      if (!b.present) continue;
      if (!b.hasGoal) {
        b.elapsed = 0;
        continue;
      }
      if (b.running) {  // mid-action: judged when it completes
        ++b.elapsed;
        continue;
      }
      if (goalSatisfied(b)) {
        if (!b.atGoal) {
          ++counters_.goalsReached;
          emit(EventKind::GoalReached, b, now_);
        }
        if (b.stalled) {
          b.stalled = false;
          ++counters_.stallsBroken;
          emit(EventKind::Unstalled, b, now_);
        }
        b.elapsed = 0;
        if (b.goal.keep) {
          b.atGoal = true;
          b.bestDist = 0;
          b.bestStep = now_;
        } else {
          b.hasGoal = false;
          dropTable(b);
          resetProgress(b);
        }
        continue;
      }
      b.atGoal = false;
      ++b.elapsed;
      const uint32_t d = costFrom(b, b.state.cell, b.state.heading) + (goalActPending(b) ? 1u : 0u);
      if (flowCosts() && b.table >= 0 && tables_.version(b.table) != b.tableVersion) {
        // the table was searched again with new costs: its distances are not comparable with
        // the best so far, which would make a bot look stalled; the stall clock runs on
        b.tableVersion = tables_.version(b.table);
        b.bestDist = d;
      }
      if (d >= kInf && b.table >= 0) {
        if (!b.unreachableReported) {
          b.unreachableReported = true;
          emit(EventKind::GoalUnreachable, b, now_);
        }
        b.bestStep = now_;  // not a stall: there is no way
        continue;
      }
      if (d < b.bestDist) {
        b.bestDist = d;
        b.bestStep = now_;
        if (b.stalled) {
          b.stalled = false;
          ++counters_.stallsBroken;
          emit(EventKind::Unstalled, b, now_);
        }
      } else if (!b.stalled && !frozen(b) && now_ - b.bestStep >= static_cast<int64_t>(opt_.stallSteps)) {
        b.stalled = true;
        b.tie = rng_.unit();
        ++counters_.stallsDetected;
        emit(EventKind::Stalled, b, now_);
      }
    }
  }
};

// ---- the public face ----

Planner::Planner(const Grid& grid, const Options& options) : impl_(std::make_unique<PlannerImpl>(grid, options)) {}
Planner::~Planner() = default;

bool Planner::addBot(BotId id, const State& state) {
  PlannerImpl& p = *impl_;
  if (p.slotOf_.count(id) || !p.cellOk(state.cell) || (p.grid_.flags[static_cast<size_t>(state.cell)] & kBlocked)) return false;
  for (const BotData& o : p.bots_) {
    if (!o.present) continue;
    if (o.state.cell == state.cell || (o.running && o.action == Action::Forward && o.target.cell == state.cell)) return false;
  }
  int32_t slot;
  if (!p.freeSlots_.empty()) {
    slot = p.freeSlots_.back();
    p.freeSlots_.pop_back();
  } else {
    slot = static_cast<int32_t>(p.bots_.size());
    p.bots_.emplace_back();
  }
  BotData& b = p.bots_[static_cast<size_t>(slot)];
  b = BotData{};
  b.id = id;
  b.present = true;
  b.state = state;
  b.tie = p.rng_.unit();
  b.bestStep = p.now_;
  p.slotOf_[id] = slot;
  p.reserveCapacity();
  return true;
}

bool Planner::removeBot(BotId id) {
  PlannerImpl& p = *impl_;
  auto it = p.slotOf_.find(id);
  if (it == p.slotOf_.end()) return false;
  BotData& b = p.bots_[static_cast<size_t>(it->second)];
  p.leaveEscape(b);
  p.dropTable(b);
  b.present = false;
  p.freeSlots_.push_back(it->second);
  p.slotOf_.erase(it);
  return true;
}

bool Planner::setPaused(BotId id, bool paused) {
  BotData* b = impl_->find(id);
  if (!b) return false;
  if (paused) impl_->leaveEscape(*b);
  b->paused = paused;
  return true;
}

bool Planner::setStuck(BotId id, bool stuck) {
  BotData* b = impl_->find(id);
  if (!b) return false;
  if (stuck) impl_->leaveEscape(*b);
  b->stuck = stuck;
  return true;
}

bool Planner::setGoal(BotId id, const Goal& goal) {
  PlannerImpl& p = *impl_;
  BotData* b = p.find(id);
  if (!b || !p.cellOk(goal.cell) || (p.grid_.flags[static_cast<size_t>(goal.cell)] & kBlocked)) return false;
  if (b->hasGoal) ++p.counters_.replans;
  p.leaveEscape(*b);
  p.dropTable(*b);
  b->hasGoal = true;
  b->goal = goal;
  b->elapsed = 0;
  p.resetProgress(*b);
  ++p.counters_.goalsSet;
  return true;
}

bool Planner::cancelGoal(BotId id) {
  PlannerImpl& p = *impl_;
  BotData* b = p.find(id);
  if (!b) return false;
  if (b->hasGoal) {
    ++p.counters_.goalsCancelled;
    ++p.counters_.replans;
  }
  p.leaveEscape(*b);
  p.dropTable(*b);
  b->hasGoal = false;
  b->elapsed = 0;
  p.resetProgress(*b);
  return true;
}

bool Planner::resync(BotId id, const State& state) {
  PlannerImpl& p = *impl_;
  BotData* b = p.find(id);
  if (!b || !p.cellOk(state.cell)) return false;
  p.leaveEscape(*b);
  b->state = state;
  b->running = false;
  if (b->table >= 0 && b->tableLifted != state.lifted) p.dropTable(*b);
  p.resetProgress(*b);
  ++p.counters_.resyncs;
  ++p.counters_.replans;
  return true;
}

bool Planner::setCellFlags(Cell cell, uint8_t flags) {
  PlannerImpl& p = *impl_;
  if (!p.cellOk(cell)) return false;
  const bool reshaped = (p.grid_.flags[static_cast<size_t>(cell)] ^ flags) & kBlocked;
  p.grid_.flags[static_cast<size_t>(cell)] = flags;
  p.tables_.setCellFlags(cell, flags);
  if (reshaped && p.opt_.corridorGuidance) {
    p.tables_.setMoveCosts(corridorCosts(p.grid_, p.opt_.againstFlowCost, p.opt_.openLaneCost, p.opt_.openMoveCost));
    if (p.flowCosts()) p.baseCost_ = corridorCosts(p.grid_, p.opt_.againstFlowCost, p.opt_.openLaneCost, p.opt_.openMoveCost);  // congestion comes back at the next period
  }
  return true;
}

const StepResult& Planner::step(Deadline deadline) { return impl_->step(deadline); }

const State* Planner::planned(BotId id) const {
  const BotData* b = impl_->find(id);
  return b ? &b->state : nullptr;
}

const Goal* Planner::goal(BotId id) const {
  const BotData* b = impl_->find(id);
  return b && b->hasGoal ? &b->goal : nullptr;
}

bool Planner::has(BotId id) const { return impl_->find(id) != nullptr; }
size_t Planner::botCount() const { return impl_->slotOf_.size(); }
int64_t Planner::now() const { return impl_->now_; }
const Counters& Planner::counters() const { return impl_->counters_; }
const Grid& Planner::grid() const { return impl_->grid_; }
const Options& Planner::options() const { return impl_->opt_; }

}  // namespace wh::planner
