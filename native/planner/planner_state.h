// The lifelong planner's state, one plain struct that its parts take by reference: the bots
// with their planned states, who stands where now and next, the priority order and the step's
// output, plus the state of each part (escape.h, improvement.h, flow_weights.h). The small
// helpers PIBT's inner loop calls are inline here so that every part's calls stay inlined.
// Algorithm and reasons: docs/planner.md.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <unordered_map>
#include <vector>

#include "distance_tables.h"
#include "escape.h"
#include "flow_weights.h"
#include "improvement.h"
#include "operations.h"
#include "planner.h"
#include "rng.h"

namespace wh::planner {

constexpr uint32_t kInf = 0x3FFFFFFF;
constexpr int32_t kNone = -1;

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

struct PlannerState {
  PlannerState(const Grid& grid, const Options& options);

  Grid grid;
  Options opt;
  DistanceTables tables;
  Rng rng;
  int64_t now = 0;
  Counters counters;
  std::vector<BotData> bots;
  std::vector<int32_t> freeSlots;
  std::unordered_map<BotId, int32_t> slotOf;
  std::vector<int32_t> occNow;   // cell -> bot at the current instant
  std::vector<int32_t> resNext;  // cell -> bot at the next instant
  std::vector<Cell> touchedNow, touchedNext;
  std::vector<int32_t> order;  // present bots, highest priority first
  std::vector<int32_t> stack;  // finalize()'s work list
  StepResult result;
  uint64_t lastPibtNanos = 0;
  FlowWeights flow;
  ImproveState improve;
  EscapeRun escape;
  OperationRun operations;
};

inline bool frozen(const BotData& b) { return b.paused || b.stuck; }

inline int turnsBetween(Heading a, Heading b) {
  const int d = (static_cast<int>(b) - static_cast<int>(a) + 4) & 3;
  return d == 3 ? 1 : d;
}

inline int32_t durationOf(const PlannerState& s, Action a) {
  int32_t d = 1;
  switch (a) {
    case Action::Forward: d = s.opt.durations.forward; break;
    case Action::TurnLeft:
    case Action::TurnRight: d = s.opt.durations.turn; break;
    case Action::Lift: d = s.opt.durations.lift; break;
    case Action::Lower: d = s.opt.durations.lower; break;
    case Action::Wait: d = 1; break;
  }
  return d < 1 ? 1 : d;
}

inline void dropTable(PlannerState& s, BotData& b) {
  if (b.table >= 0) s.tables.release(b.table);
  b.table = -1;
}

inline void resetProgress(const PlannerState& s, BotData& b) {
  b.bestDist = kInf;
  b.bestStep = s.now;
  if (b.stalled) {
    b.stalled = false;  // a new goal or position ends the stall without counting it broken
  }
  b.unreachableReported = false;
  b.atGoal = false;
}

// ---- distances ----

inline uint32_t movesTo(const PlannerState& s, const BotData& b, Cell c) {
  if (b.table >= 0) {
    const uint16_t d = s.tables.at(b.table, c);
    return d == DistanceTables::kUnreachable ? kInf : d;
  }
  // no table yet (deadline or memory bound): Manhattan distance
  const int32_t w = s.grid.width;
  return static_cast<uint32_t>(std::abs(c % w - b.goal.cell % w) + std::abs(c / w - b.goal.cell / w));
}

inline uint32_t goalHeadingCost(const PlannerState& s, const BotData& b, Heading h) {
  if (!s.opt.rotations || !b.goal.heading) return 0;
  return static_cast<uint32_t>(turnsBetween(h, *b.goal.heading)) * static_cast<uint32_t>(durationOf(s, Action::TurnLeft));
}

/** Steps from (cell, heading) to the goal, ignoring others; exact for the first move. */
inline uint32_t costFrom(const PlannerState& s, const BotData& b, Cell c, Heading h) {
  if (!b.hasGoal) return 0;
  if (c == b.goal.cell) return goalHeadingCost(s, b, h);
  const uint32_t fwd = static_cast<uint32_t>(durationOf(s, Action::Forward));
  if (!s.opt.rotations) {
    const uint32_t m = movesTo(s, b, c);
    return m >= kInf ? kInf : m * fwd;
  }
  const uint32_t turn = static_cast<uint32_t>(durationOf(s, Action::TurnLeft));
  uint32_t best = kInf;
  for (int d = 0; d < 4; ++d) {
    const Cell n = s.grid.neighbour(c, static_cast<Heading>(d));
    if (n < 0 || !s.grid.passable(n, b.state.lifted)) continue;
    const uint32_t m = movesTo(s, b, n);
    if (m >= kInf) continue;
    uint32_t cost = static_cast<uint32_t>(turnsBetween(h, static_cast<Heading>(d))) * turn + (s.tables.moveCost(c, static_cast<Heading>(d)) + m) * fwd;
    if (n == b.goal.cell) cost += goalHeadingCost(s, b, static_cast<Heading>(d));
    best = std::min(best, cost);
  }
  return best;
}

inline bool goalActPending(const BotData& b) {
  return (b.goal.act == GoalAct::Lift && !b.state.lifted) || (b.goal.act == GoalAct::Lower && b.state.lifted);
}

inline bool goalSatisfied(const PlannerState& s, const BotData& b) {
  if (!b.hasGoal || b.state.cell != b.goal.cell) return false;
  if (s.opt.rotations && b.goal.heading && b.state.heading != *b.goal.heading) return false;
  return !goalActPending(b);
}

// ---- occupancy and decisions ----

inline void occupyNow(PlannerState& s, Cell c, int32_t i) {
  if (s.occNow[static_cast<size_t>(c)] == kNone) s.touchedNow.push_back(c);
  s.occNow[static_cast<size_t>(c)] = i;
}

// Always inlined: PIBT calls it on every move it tries, and in pibt.cc GCC's inline limits
// would otherwise leave those calls out of line (1 % more instructions a step).
[[gnu::always_inline]] inline void reserveNext(PlannerState& s, Cell c, int32_t i) {
  if (s.resNext[static_cast<size_t>(c)] == kNone) s.touchedNext.push_back(c);
  s.resNext[static_cast<size_t>(c)] = i;
}

inline void clearOccupancy(PlannerState& s) {
  for (Cell c : s.touchedNow) s.occNow[static_cast<size_t>(c)] = kNone;
  for (Cell c : s.touchedNext) s.resNext[static_cast<size_t>(c)] = kNone;
  s.touchedNow.clear();
  s.touchedNext.clear();
}

inline void decide(BotData& b, Action a, Cell cell, Heading h) {
  b.decided = true;
  b.next = a;
  b.nextCell = cell;
  b.nextHeading = h;
}

inline void emit(PlannerState& s, EventKind kind, const BotData& b, int64_t at) {
  s.result.events.push_back(Event{kind, b.id, at, b.state.cell, 0});
}

}  // namespace wh::planner
