// Multi-action operations: see operations.h. Reasons and rules: docs/planner.md, "Operations".
#include "operations.h"

#include <algorithm>

#include "planner_state.h"

namespace wh::planner {

namespace {

constexpr int32_t kMany = -2;  // clash(): more than one bot in the way

// Placed: the bot is in the table with a new operation. Failed: no operation fits, try another.
// Undone: the deadline passed or an improvement chain lowered the score; undo the whole chain.
enum class Outcome { Placed, Failed, Undone };

// Every sequence of `depth` actions but those that undo a turn (a left next to a right) or turn
// three quarters one way (one turn the other way does it sooner). Listed with Forward first,
// then the turns, then Wait at each place, so that among sequences of equal cost the one that
// moves earlier comes first; the last one waits throughout.
std::vector<Operation> operationSet(int depth) {
  static constexpr Action kOrder[4] = {Action::Forward, Action::TurnRight, Action::TurnLeft, Action::Wait};
  std::vector<Operation> out;
  int total = 1;
  for (int d = 0; d < depth; ++d) total *= 4;
  for (int code = 0; code < total; ++code) {
    Operation op{};
    int rest = code;
    for (int d = depth - 1; d >= 0; --d) {
      op.act[d] = kOrder[rest % 4];
      rest /= 4;
    }
    bool keep = true;
    for (int d = 1; d < depth; ++d) {
      const Action a = op.act[d - 1], b = op.act[d];
      const bool turn = a == Action::TurnLeft || a == Action::TurnRight;
      if (turn && b != a && (b == Action::TurnLeft || b == Action::TurnRight)) keep = false;
      if (turn && d >= 2 && b == a && op.act[d - 2] == a) keep = false;
    }
    if (keep) out.push_back(op);
  }
  return out;
}

// The cells and headings of bot b after each action of `op`; false when a move leaves the grid
// or enters a cell the bot may not enter.
bool trace(const PlannerState& s, const BotData& b, const Operation& op, int depth, Cell* cells, Heading* heads) {
  Cell c = b.state.cell;
  Heading h = b.state.heading;
  for (int d = 0; d < depth; ++d) {
    switch (op.act[d]) {
      case Action::Forward: {
        const Cell v = s.grid.neighbour(c, h);
        if (v < 0 || !s.grid.passable(v, b.state.lifted)) return false;
        c = v;
        break;
      }
      case Action::TurnRight: h = turnRight(h); break;
      case Action::TurnLeft: h = turnLeft(h); break;
      default: break;
    }
    cells[d] = c;
    heads[d] = h;
  }
  return true;
}

// What an operation is worth to its bot, less being better: the number of actions after which
// it stands on its goal, or else the operation's length plus the cost to go from where it ends.
// A bot without a goal prefers to stay put, but can be pushed.
uint32_t operationCost(const PlannerState& s, const BotData& b, const Operation& op, int depth, const Cell* cells, const Heading* heads) {
  if (!b.hasGoal) {
    uint32_t acts = 0;
    for (int d = 0; d < depth; ++d) acts += op.act[d] != Action::Wait;
    return acts;
  }
  for (int d = 0; d < depth; ++d) {
    if (cells[d] == b.goal.cell && goalHeadingCost(s, b, heads[d]) == 0) return static_cast<uint32_t>(d);
  }
  const uint32_t rest = costFrom(s, b, cells[depth - 1], heads[depth - 1]);
  return rest >= kInf ? kInf : rest + static_cast<uint32_t>(depth);
}

size_t cellCount(const PlannerState& s) { return s.occNow.size(); }

// Writes bot i's path along operation `op` (one its preferences hold, or waiting: both valid).
void setPath(PlannerState& s, int32_t i, int32_t op) {
  OperationRun& o = s.operations;
  const size_t at = static_cast<size_t>(i) * static_cast<size_t>(o.depth);
  trace(s, s.bots[static_cast<size_t>(i)], o.ops[static_cast<size_t>(op)], o.depth, &o.path[at], &o.heading[at]);
}

// What bot i's operation adds to the score: its gain over waiting, weighted by priority.
double gain(const OperationRun& o, int32_t i) {
  const size_t slot = static_cast<size_t>(i);
  const int32_t op = o.opOf[slot];
  const int32_t waiting = static_cast<int32_t>(o.ops.size()) - 1;
  if (op < 0 || op == waiting) return 0;
  const uint32_t* cost = &o.costOf[slot * o.ops.size()];
  return o.weight[slot] * (static_cast<double>(cost[waiting]) - static_cast<double>(cost[op]));
}

// Puts bot i's path into the space-time table (who = i) or takes it out (who = kNone).
void place(PlannerState& s, int32_t i, int32_t who) {
  OperationRun& o = s.operations;
  const size_t cells = cellCount(s);
  const Cell* p = &o.path[static_cast<size_t>(i) * static_cast<size_t>(o.depth)];
  for (int d = 0; d < o.depth; ++d) o.occ[static_cast<size_t>(d) * cells + static_cast<size_t>(p[d])] = who;
  o.score += who == kNone ? -gain(o, i) : gain(o, i);
}

// The one bot whose path meets bot i's (on a cell at the same instant, or swapping cells with
// it): kNone when none does, kMany when several do.
int32_t clash(const PlannerState& s, int32_t i) {
  const OperationRun& o = s.operations;
  const size_t cells = cellCount(s);
  const size_t depth = static_cast<size_t>(o.depth);
  const Cell* p = &o.path[static_cast<size_t>(i) * depth];
  int32_t found = kNone;
  auto meets = [&](int32_t k) {
    if (k == kNone || k == i || k == found) return true;
    if (found != kNone) return false;
    found = k;
    return true;
  };
  Cell prev = s.bots[static_cast<size_t>(i)].state.cell;
  for (size_t d = 0; d < depth; ++d) {
    if (!meets(o.occ[d * cells + static_cast<size_t>(p[d])])) return kMany;
    if (prev != p[d]) {
      // coming the other way: the bot at this move's start afterwards was at its end before
      // (it can be another bot than the one entering the end, which follows it)
      const int32_t back = o.occ[d * cells + static_cast<size_t>(prev)];
      if (back != kNone && back != i) {
        const Cell was = d == 0 ? s.bots[static_cast<size_t>(back)].state.cell : o.path[static_cast<size_t>(back) * depth + d - 1];
        if (was == p[d] && !meets(back)) return kMany;
      }
    }
    prev = p[d];
  }
  return found;
}

// Bot i's operations that stay on the grid, best first; computed once a pass, when first needed.
void preferences(PlannerState& s, int32_t i) {
  OperationRun& o = s.operations;
  if (o.prefsAt[static_cast<size_t>(i)] == o.step) return;
  o.prefsAt[static_cast<size_t>(i)] = o.step;
  const BotData& b = s.bots[static_cast<size_t>(i)];
  auto* out = &o.prefs[static_cast<size_t>(i) * o.ops.size()];
  uint16_t n = 0;
  Cell cells[kMaxOperationDepth];
  Heading heads[kMaxOperationDepth];
  for (size_t k = 0; k < o.ops.size(); ++k) {
    if (!trace(s, b, o.ops[k], o.depth, cells, heads)) continue;
    const uint32_t c = operationCost(s, b, o.ops[k], o.depth, cells, heads);
    // Congestion where the operation ends weighs as in one-step PIBT (Options::heatWeight); a
    // stalled bot breaks ties at random.
    uint32_t key = 0xFFFFFFF0u;
    if (c < kInf) {
      key = c * kHeatScale + (b.stalled ? static_cast<uint32_t>(s.rng.next() & 7) : 0u);
      if (s.opt.heatWeight) key += static_cast<uint32_t>(s.flow.heat[static_cast<size_t>(cells[o.depth - 1])] * static_cast<float>(s.opt.heatWeight));
    }
    out[n++] = {key, static_cast<uint16_t>(k)};
    o.costOf[static_cast<size_t>(i) * o.ops.size() + k] = key;
  }
  std::sort(out, out + n);
  o.prefCount[static_cast<size_t>(i)] = n;
}

// Bot i (out of the table) takes its best operation that meets no bot, or meets one bot that
// can choose again around it (priority inheritance; in the main pass only a bot of lower
// priority than the pass's root). Placed: i is in the table again; otherwise i's operation is
// the one it had, out of the table.
Outcome choose(PlannerState& s, int32_t i) {
  OperationRun& o = s.operations;
  if ((++o.calls & 15) == 0 && Clock::now() >= o.deadline) o.late = true;
  if (o.late) return Outcome::Undone;
  const size_t slot = static_cast<size_t>(i);
  if (o.visitedAt[slot] != o.pass) {
    o.visitedAt[slot] = o.pass;
    o.visits[slot] = 0;
  }
  ++o.visits[slot];
  o.choosingAt[slot] = o.pass;
  const int32_t old = o.opOf[slot];
  preferences(s, i);
  const auto* pref = &o.prefs[slot * o.ops.size()];
  Outcome out = Outcome::Failed;
  for (uint16_t x = 0; x < o.prefCount[slot]; ++x) {
    const int32_t op = pref[x].second;
    o.opOf[slot] = op;
    setPath(s, i, op);
    const int32_t k = clash(s, i);
    if (k == kNone) {
      place(s, i, i);
      if (!o.improving || o.score >= o.scoreBefore - 1e-9) return Outcome::Placed;
      place(s, i, kNone);
      out = Outcome::Undone;
      break;
    }
    if (k == kMany) continue;
    const size_t ks = static_cast<size_t>(k);
    if (o.choosingAt[ks] == o.pass || (o.visitedAt[ks] == o.pass && o.visits[ks] >= s.opt.operationRevisits) || o.rank[ks] <= o.rootRank) continue;
    place(s, k, kNone);
    place(s, i, i);
    const Outcome r = choose(s, k);
    if (r == Outcome::Placed) return r;
    place(s, i, kNone);
    place(s, k, k);
    if (r == Outcome::Undone) {
      out = r;
      break;
    }
  }
  o.opOf[slot] = old;
  setPath(s, i, old);
  o.choosingAt[slot] = 0;
  return out;
}

// Bot i chooses again from the top: its old operation stays when nothing better fits.
void rechoose(PlannerState& s, int32_t i) {
  place(s, i, kNone);
  if (choose(s, i) != Outcome::Placed) place(s, i, i);
}

}  // namespace

bool operationsApply(const Options& o) {
  const Durations& d = o.durations;
  return o.operationDepth > 0 && o.operationDepth <= kMaxOperationDepth && o.rotations && !o.forbidCycles && d.forward <= 1 && d.turn <= 1 && d.lift <= 1 && d.lower <= 1;
}

void planOperations(PlannerState& s, Deadline deadline) {
  OperationRun& o = s.operations;
  const size_t cells = cellCount(s);
  if (o.depth != s.opt.operationDepth) {
    o.depth = s.opt.operationDepth;
    o.ops = operationSet(o.depth);
    o.occ.assign(static_cast<size_t>(o.depth) * cells, kNone);
  }
  const size_t n = s.bots.size();
  const size_t depth = static_cast<size_t>(o.depth);
  if (o.opOf.size() < n) {
    o.path.resize(n * depth);
    o.heading.resize(n * depth);
    o.opOf.resize(n);
    o.rank.resize(n);
    o.visitedAt.resize(n, 0);
    o.visits.resize(n, 0);
    o.choosingAt.resize(n, 0);
    o.prefs.resize(n * o.ops.size());
    o.costOf.resize(n * o.ops.size());
    o.prefCount.resize(n, 0);
    o.prefsAt.resize(n, 0);
    o.weight.resize(n, 0);
  }
  ++o.step;
  ++o.pass;
  o.late = false;
  o.calls = 0;
  o.deadline = deadline;
  o.score = 0;
  const int32_t waiting = static_cast<int32_t>(o.ops.size()) - 1;
  // the free bots' ranks, and their weights in the improvement's score: the square of the
  // share of bots below them in priority
  for (size_t i = 0; i < n; ++i) o.rank[i] = -1;
  int32_t free = 0;
  for (int32_t i : s.order) {
    BotData& b = s.bots[static_cast<size_t>(i)];
    if (!b.decided && b.hasGoal && b.state.cell == b.goal.cell && goalActPending(b) && goalHeadingCost(s, b, b.state.heading) == 0) {
      // at its goal, facing the right way: the lift or lowering is not a move to choose
      decide(b, b.goal.act == GoalAct::Lift ? Action::Lift : Action::Lower, b.state.cell, b.state.heading);
      reserveNext(s, b.state.cell, i);
    }
    if (!b.decided) o.rank[static_cast<size_t>(i)] = free++;
  }
  for (size_t i = 0; i < n; ++i) {
    if (o.rank[i] < 0) continue;
    const double share = static_cast<double>(free - o.rank[i]) / static_cast<double>(free);
    o.weight[i] = share * share;
  }
  // Everyone starts waiting, the bots decided already after their action: a plan free of
  // collisions from the outset, which each choice below keeps so.
  for (size_t i = 0; i < n; ++i) {
    BotData& b = s.bots[i];
    if (!b.present) continue;
    if (b.decided) {
      o.opOf[i] = -1;
      for (size_t d = 0; d < depth; ++d) {
        o.path[i * depth + d] = b.nextCell;
        o.heading[i * depth + d] = b.nextHeading;
      }
    } else {
      o.opOf[i] = waiting;
      setPath(s, static_cast<int32_t>(i), waiting);
    }
    place(s, static_cast<int32_t>(i), static_cast<int32_t>(i));
  }
  for (int32_t i : s.order) {
    if (o.late) break;
    const size_t slot = static_cast<size_t>(i);
    // a bot placed by another's chain keeps that place; one a push only tried chooses now
    if (o.rank[slot] < 0 || o.choosingAt[slot] == o.pass) continue;
    o.rootRank = o.rank[slot];
    rechoose(s, i);
  }
}

void carryOutOperations(PlannerState& s) {
  OperationRun& o = s.operations;
  const size_t depth = static_cast<size_t>(o.depth);
  for (size_t i = 0; i < s.bots.size(); ++i) {
    BotData& b = s.bots[i];
    if (!b.present) continue;
    const int32_t self = static_cast<int32_t>(i);
    if (o.opOf[i] >= 0) {
      decide(b, o.ops[static_cast<size_t>(o.opOf[i])].act[0], o.path[i * depth], o.heading[i * depth]);
      reserveNext(s, o.path[i * depth], self);
    }
    place(s, self, kNone);
  }
}

void improveOperations(PlannerState& s, Clock::time_point end) {
  OperationRun& o = s.operations;
  o.shuffled.clear();
  for (int32_t i : s.order) {
    if (o.rank[static_cast<size_t>(i)] >= 0) o.shuffled.push_back(i);
  }
  const double start = o.score;
  o.deadline = end;
  o.improving = true;
  o.rootRank = -1;  // any bot but the decided ones may be pushed
  for (uint32_t round = 0; round < s.opt.improvePasses && !o.late && Clock::now() < end; ++round) {
    ++s.counters.improvePasses;
    for (size_t k = o.shuffled.size(); k > 1; --k) std::swap(o.shuffled[k - 1], o.shuffled[static_cast<size_t>(s.rng.below(k))]);
    ++o.pass;
    for (int32_t i : o.shuffled) {
      if (o.late) break;
      if (o.visitedAt[static_cast<size_t>(i)] == o.pass) continue;
      o.scoreBefore = o.score;
      rechoose(s, i);
    }
  }
  o.improving = false;
  if (o.score > start + 1e-9) ++s.counters.improveWins;
}

}  // namespace wh::planner
