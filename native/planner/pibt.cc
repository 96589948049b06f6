// PIBT for one timestep: see pibt.h. Reasons and rules: docs/planner.md.
#include "pibt.h"

#include <algorithm>
#include <cstdint>

#include "planner_state.h"

namespace wh::planner {

namespace {

// How far the cycle check follows a chain of bots moving into each other's cells before it
// treats the chain as a ring (forbidCycles only).
constexpr int kCycleWalk = 256;

struct Candidate {
  Action action;
  Cell cell;        // the cell it occupies next (its own for turning, waiting, lifting)
  Heading heading;  // heading once done
  uint32_t cost;
  uint32_t order;   // tie-break
};

// The best use of a step in place: the goal's act, a turn that brings the bot closer, or a wait.
void stayAction(PlannerState& s, BotData& b) {
  const Cell c = b.state.cell;
  const Heading hd = b.state.heading;
  decide(b, Action::Wait, c, hd);
  if (!b.hasGoal) return;
  if (c == b.goal.cell && goalActPending(b) && goalHeadingCost(s, b, hd) == 0) {
    decide(b, b.goal.act == GoalAct::Lift ? Action::Lift : Action::Lower, c, hd);
    return;
  }
  if (!s.opt.rotations) return;
  const uint32_t here = costFrom(s, b, c, hd);
  const uint32_t l = costFrom(s, b, c, turnLeft(hd));
  const uint32_t r = costFrom(s, b, c, turnRight(hd));
  if (l < here && l <= r) decide(b, Action::TurnLeft, c, turnLeft(hd));
  else if (r < here) decide(b, Action::TurnRight, c, turnRight(hd));
}

}  // namespace

// With forbidCycles: would bot `i` entering `to` close a ring of bots moving into each other's
// cells? Follows the decided movers from `to` on.
bool closesRing(const PlannerState& s, int32_t i, Cell to) {
  const Cell home = s.bots[static_cast<size_t>(i)].state.cell;
  Cell cell = to;
  for (int n = 0; n < kCycleWalk; ++n) {
    const int32_t k = s.occNow[static_cast<size_t>(cell)];
    if (k == kNone || k == i) return k == i;
    const BotData& o = s.bots[static_cast<size_t>(k)];
    if (!o.decided || o.nextCell == cell || o.running) return false;
    if (o.nextCell == home) return true;
    cell = o.nextCell;
  }
  return true;  // too long to tell: be safe
}

// Bot i waits this step and keeps its cell.
void holdInPlace(PlannerState& s, int32_t i) {
  BotData& b = s.bots[static_cast<size_t>(i)];
  reserveNext(s, b.state.cell, i);
  decide(b, Action::Wait, b.state.cell, b.state.heading);
}

// Turns a bot towards neighbour `v` (it stays in its cell this step).
void turnTowards(PlannerState& s, BotData& b, Cell v) {
  const Cell c = b.state.cell;
  const Heading hd = b.state.heading;
  int dir = 0;
  while (dir < 4 && s.grid.neighbour(c, static_cast<Heading>(dir)) != v) ++dir;
  const int delta = (dir - static_cast<int>(hd) + 4) & 3;
  bool left = delta == 3;
  if (delta == 2) {
    // about-turn: the side the bot's own goal prefers (a coin when it does not care)
    const uint32_t l = costFrom(s, b, c, turnLeft(hd)), r = costFrom(s, b, c, turnRight(hd));
    left = l != r ? l < r : (s.rng.next() & 1);
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
bool pibt(PlannerState& s, int32_t i, int32_t pusher) {
  BotData& b = s.bots[static_cast<size_t>(i)];
  const Cell c = b.state.cell;
  const Heading hd = b.state.heading;
  const uint32_t fwd = static_cast<uint32_t>(durationOf(s, Action::Forward));
  const uint32_t turn = static_cast<uint32_t>(durationOf(s, Action::TurnLeft));
  const bool slowForward = fwd > 1;
  Candidate cand[5];
  int n = 0;
  const uint32_t noiseMask = b.stalled ? 0x7 : 0x1;
  for (int d = 0; d < 4; ++d) {
    const Cell v = s.grid.neighbour(c, static_cast<Heading>(d));
    if (v < 0 || !s.grid.passable(v, b.state.lifted)) continue;
    const uint32_t turns = s.opt.rotations ? static_cast<uint32_t>(turnsBetween(hd, static_cast<Heading>(d))) : 0;
    uint32_t cost = turns * turn;
    uint32_t m = 0;
    if (b.hasGoal) {
      m = movesTo(s, b, v);
      if (m >= kInf) continue;
      cost += (s.tables.moveCost(c, static_cast<Heading>(d)) + m) * fwd;
      if (v == b.goal.cell) cost += goalHeadingCost(s, b, static_cast<Heading>(d));
    }
    // Ties go to the cell nearer the goal, then to fewer turns: facing away from the goal, the
    // about-turn (2 turns, then closer) costs as much as a step away (no turn, 2 further),
    // and preferring the step away would walk the bot off for good.
    uint32_t order = std::min<uint32_t>(m, 0xFFFF) * 64 + turns * 16 + static_cast<uint32_t>(s.rng.next() & noiseMask);
    if (!s.opt.rotations && s.occNow[static_cast<size_t>(v)] != kNone) order += 8;  // prefer free cells
    if (s.opt.heatWeight) cost = cost * kHeatScale + static_cast<uint32_t>(s.flow.heat[static_cast<size_t>(v)] * static_cast<float>(s.opt.heatWeight));
    cand[n++] = {Action::Forward, v, static_cast<Heading>(d), cost, order};
  }
  if (pusher == kNone) {
    uint32_t stay = 0;
    if (b.hasGoal) {
      const uint32_t here = costFrom(s, b, c, hd);
      stay = here >= kInf ? kInf - 1 : (here == 0 || (c == b.goal.cell && goalActPending(b)) ? 0 : here + 1);
      // scaled like the moves, above any congestion a move at the same cost can carry
      if (s.opt.heatWeight && stay != 0 && stay < kInf - 1) stay = stay * kHeatScale + s.opt.heatWeight + 1u;
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
  const Cell pusherCell = pusher == kNone ? kNoCell : s.bots[static_cast<size_t>(pusher)].state.cell;
  for (int k = 0; k < n; ++k) {
    const Candidate& x = cand[k];
    const int32_t mine = s.resNext[static_cast<size_t>(c)];
    if (x.cell == c) {
      if (mine != kNone && mine != i) continue;  // the pusher takes this cell
      reserveNext(s, c, i);
      stayAction(s, b);
      return true;
    }
    const Cell v = x.cell;
    const bool faces = !s.opt.rotations || x.heading == hd;
    if (slowForward) {
      // a move over several steps holds both cells: only into a cell nobody is in, and the
      // bot's own cell stays taken (a pushed bot cannot give way in one step)
      if (mine != kNone && mine != i) continue;
      if (!faces) {
        reserveNext(s, c, i);
        turnTowards(s, b, v);
        return true;
      }
      if (s.occNow[static_cast<size_t>(v)] != kNone || s.resNext[static_cast<size_t>(v)] != kNone) continue;
      reserveNext(s, v, i);
      reserveNext(s, c, i);
      decide(b, Action::Forward, v, x.heading);
      return true;
    }
    if (s.resNext[static_cast<size_t>(v)] != kNone) continue;
    const int32_t k2 = s.occNow[static_cast<size_t>(v)];
    if (k2 != kNone && k2 != i) {
      const BotData& o = s.bots[static_cast<size_t>(k2)];
      if (o.decided && o.nextCell == c) continue;  // swap
      if (!o.decided && o.escaping) continue;  // follows its escape: not to be pushed
      if (s.opt.forbidCycles && closesRing(s, i, v)) continue;
    }
    reserveNext(s, v, i);
    decide(b, Action::Forward, v, x.heading);
    if (k2 != kNone && k2 != i && !s.bots[static_cast<size_t>(k2)].decided) {
      ++s.counters.pushes;
      if (!pibt(s, k2, i)) {
        b.decided = false;  // k2 stays in v (it reserved v for itself)
        continue;
      }
    }
    return true;
  }
  // Pushed and no way out: stay, facing the best way out other than the pusher's cell, so
  // that a later push (or the bot's own move) can succeed.
  reserveNext(s, c, i);
  for (int k = 0; k < n; ++k) {
    if (cand[k].cell != c && cand[k].cell != pusherCell && s.opt.rotations && cand[k].heading != hd && !slowForward) {
      turnTowards(s, b, cand[k].cell);
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
 * too, transitively (so nobody enters a cell that is not being vacated). Bots not decided yet
 * are left alone (the operations pass decides them afterwards).
 */
void finalize(PlannerState& s) {
  s.stack.clear();
  for (size_t i = 0; i < s.bots.size(); ++i) {
    BotData& b = s.bots[i];
    if (!b.present || !b.decided) continue;
    if (!b.running && !frozen(b) && b.next == Action::Forward && s.opt.rotations && b.nextHeading != b.state.heading) {
      turnTowards(s, b, b.nextCell);
    }
    const bool leaves = !b.running ? b.next == Action::Forward : (b.action == Action::Forward && b.started + b.duration == s.now + 1);
    if (!leaves) s.stack.push_back(static_cast<int32_t>(i));
  }
  while (!s.stack.empty()) {
    const int32_t top = s.stack.back();
    s.stack.pop_back();
    const Cell c = s.bots[static_cast<size_t>(top)].state.cell;
    const int32_t j = s.resNext[static_cast<size_t>(c)];
    if (j == kNone || j == top) continue;
    BotData& o = s.bots[static_cast<size_t>(j)];
    if (o.running || o.next != Action::Forward || o.nextCell != c) continue;
    s.resNext[static_cast<size_t>(c)] = top;
    decide(o, Action::Wait, o.state.cell, o.state.heading);
    s.stack.push_back(j);
  }
}

}  // namespace wh::planner
