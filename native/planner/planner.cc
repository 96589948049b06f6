// The lifelong planner of one level (planner.h): its state and the order of one step's work,
// PIBT adapted to bots that turn before they move (Okumura et al.), one timestep at a time, with
// heading-aware distance costs, multi-step actions, stall (deadlock/livelock) detection,
// priority escalation and escapes. Each part has its own file: pibt.h, escape.h, improvement.h,
// flow_weights.h, progress.h, over the state in planner_state.h. Reasons and rules:
// docs/planner.md.
#include "planner.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "distance_tables.h"
#include "escape.h"
#include "flow_weights.h"
#include "improvement.h"
#include "pibt.h"
#include "planner_state.h"
#include "progress.h"

namespace wh::planner {

PlannerState::PlannerState(const Grid& g, const Options& options)
    : grid(g),
      opt(options),
      tables(g, options.heuristicMemoryBytes, options.corridorGuidance ? corridorCosts(g, options.againstFlowCost, options.openLaneCost, options.openMoveCost) : std::vector<uint8_t>{}),
      rng{options.seed} {
  const size_t cells = static_cast<size_t>(g.width) * static_cast<size_t>(g.height);
  occNow.assign(cells, kNone);
  resNext.assign(cells, kNone);
  if (flowCosts(opt)) flow.baseCost = corridorCosts(g, options.againstFlowCost, options.openLaneCost, options.openMoveCost);
  if (opt.heatWeight || flowCosts(opt)) flow.heat.assign(cells, 0.0f);
  if (flowCosts(opt) && opt.contraflowWeight) flow.flow.assign(cells * 4, 0.0f);
}

namespace {

BotData* find(PlannerState& s, BotId id) {
  auto it = s.slotOf.find(id);
  return it == s.slotOf.end() ? nullptr : &s.bots[static_cast<size_t>(it->second)];
}

bool cellOk(const PlannerState& s, Cell c) { return c >= 0 && c < s.grid.width * s.grid.height; }

void reserveCapacity(PlannerState& s) {
  // doubling, so that adding bots one by one stays linear
  const size_t n = s.bots.size();
  if (s.result.bots.capacity() >= n) return;
  const size_t cap = std::max<size_t>(16, n * 2);
  s.result.bots.reserve(cap);
  s.result.events.reserve(cap * 3);
  s.order.reserve(cap);
  s.improve.passOrder.reserve(cap);
  s.stack.reserve(cap);
  s.touchedNow.reserve(cap * 2);
  s.touchedNext.reserve(cap * 2);
}

void ensureTables(PlannerState& s, Deadline deadline, Clock::time_point start) {
  // Reserve time for the PIBT pass itself: twice the last one, at least 2 ms plus 2 us a bot
  // (the first step has no measure yet), and a tenth of the step's budget, because on a
  // shared machine the pass can be preempted (a 1 s step overran by 70 ms at load 6).
  const uint64_t guess = 2'000'000 + 2'000 * static_cast<uint64_t>(s.order.size());
  const auto budget = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - start).count();
  const uint64_t tenth = budget > 0 ? static_cast<uint64_t>(budget) / 10 : 0;
  const auto reserve = std::chrono::nanoseconds(std::max({guess, s.lastPibtNanos * 2, tenth}));
  const Deadline stopAt = deadline - reserve;
  s.tables.refresh(stopAt, flowCosts(s.opt) ? s.opt.flowRefreshPerStep : SIZE_MAX);
  uint32_t sinceCheck = 0;
  bool late = false;
  for (int32_t i : s.order) {
    BotData& b = s.bots[static_cast<size_t>(i)];
    if (!b.hasGoal) continue;
    if (b.table >= 0 && b.tableLifted == b.state.lifted) continue;
    const bool cached = s.tables.cached(b.goal.cell, b.state.lifted);
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
    dropTable(s, b);
    b.table = s.tables.acquire(b.goal.cell, b.state.lifted);
    b.tableLifted = b.state.lifted;
    if (b.table >= 0) b.tableVersion = s.tables.version(b.table);
  }
  s.counters.heuristicTables = s.tables.computed();
  s.counters.heuristicEvictions = s.tables.evicted();
  s.counters.heuristicBytes = s.tables.bytes();
}

void sortByPriority(PlannerState& s) {
  s.order.clear();
  for (size_t i = 0; i < s.bots.size(); ++i) {
    if (s.bots[i].present) s.order.push_back(static_cast<int32_t>(i));
  }
  std::sort(s.order.begin(), s.order.end(), [&s](int32_t x, int32_t y) {
    const BotData& a = s.bots[static_cast<size_t>(x)];
    const BotData& b = s.bots[static_cast<size_t>(y)];
    if (a.stalled != b.stalled) return a.stalled;
    if (a.elapsed != b.elapsed) return a.elapsed > b.elapsed;
    if (a.tie != b.tie) return a.tie > b.tie;
    return x < y;
  });
}

}  // namespace

const StepResult& Planner::step(Deadline deadline) {
  PlannerState& s = *state_;
  const auto t0 = Clock::now();
  const int64_t t = s.now;
  s.result.step = t;
  s.result.complete = true;
  s.result.bots.clear();
  s.result.events.clear();

  sortByPriority(s);
  ensureTables(s, deadline, t0);
  const auto t1 = Clock::now();

  // occupancy now; running and frozen bots are decided already
  clearOccupancy(s);
  for (size_t i = 0; i < s.bots.size(); ++i) {
    BotData& b = s.bots[i];
    if (!b.present) continue;
    b.decided = false;
    occupyNow(s, b.state.cell, static_cast<int32_t>(i));
    if (b.running && b.action == Action::Forward) occupyNow(s, b.target.cell, static_cast<int32_t>(i));
  }
  for (size_t i = 0; i < s.bots.size(); ++i) {
    BotData& b = s.bots[i];
    if (!b.present) continue;
    const int32_t self = static_cast<int32_t>(i);
    if (b.running) {
      const bool completes = b.started + b.duration == t + 1;
      if (b.action == Action::Forward) {
        reserveNext(s, b.target.cell, self);
        if (!completes) reserveNext(s, b.state.cell, self);
      } else {
        reserveNext(s, b.state.cell, self);
      }
      b.decided = true;
      b.nextCell = b.action == Action::Forward && completes ? b.target.cell : b.state.cell;
    } else if (frozen(b)) {
      holdInPlace(s, self);
    }
  }
  maybeStartEscape(s, deadline);
  driveEscape(s);
  const bool operations = operationsApply(s.opt);
  const bool improving = s.opt.improvePasses > 0;
  if (improving && !operations) markBeforePibt(s);
  if (operations) {
    finalize(s);  // an escape's move into a cell its bot does not face yet becomes a turn
    planOperations(s, deadline);
  } else {
    for (int32_t i : s.order) {
      if (!s.bots[static_cast<size_t>(i)].decided) pibt(s, i, kNone);
    }
    finalize(s);
  }
  auto t2 = Clock::now();
  s.lastPibtNanos = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(t2 - t1).count());
  if (improving && t2 < deadline) {
    // the first answer stands; improve it until the setting's budget ends or the deadline
    // nears (the same reserve as the distance tables keep for a pass: a preempted pass on a
    // shared machine must still end in time)
    const auto budget = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - t0).count();
    const auto reserve = std::chrono::nanoseconds(std::max<int64_t>({static_cast<int64_t>(s.lastPibtNanos) * 2, budget > 0 ? budget / 10 : 0}));
    Clock::time_point end = deadline - reserve;
    if (s.opt.improveBudget.count() > 0) end = std::min(end, t2 + s.opt.improveBudget);
    if (operations) improveOperations(s, end);
    else improve(s, end);
    t2 = Clock::now();
  }
  if (operations) carryOutOperations(s);
  if (t2 > deadline) {
    // too late: nothing new starts, actions under way go on
    s.result.complete = false;
    ++s.counters.incompleteSteps;
    for (BotData& b : s.bots) {
      if (b.present && !b.running) decide(b, Action::Wait, b.state.cell, b.state.heading);
    }
  }

  updateFlowWeights(s, t);
  // start the decided actions, report, advance
  for (BotData& b : s.bots) {
    if (!b.present) continue;
    if (!b.running) {
      b.running = true;
      b.action = b.next;
      b.started = t;
      b.duration = durationOf(s, b.next);
      b.target = b.state;
      b.target.cell = b.nextCell;
      b.target.heading = b.nextHeading;
      if (b.next == Action::Lift) b.target.lifted = true;
      if (b.next == Action::Lower) b.target.lifted = false;
    }
    BotStep out;
    out.bot = b.id;
    out.action = b.action;
    out.starts = b.started == t;
    out.duration = static_cast<uint16_t>(b.duration);
    out.endStep = b.started + b.duration;
    out.from = b.state;
    out.to = b.target;
    s.result.bots.push_back(out);
    if (b.started + b.duration == t + 1) {
      b.state = b.target;
      b.running = false;
    }
  }
  s.now = t + 1;
  if (s.escape.active) advanceEscape(s);
  updateProgress(s);

  const auto t3 = Clock::now();
  const uint64_t ns = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(t3 - t0).count());
  ++s.counters.steps;
  s.counters.planNanosLast = ns;
  s.counters.planNanosTotal += ns;
  s.counters.planNanosMax = std::max(s.counters.planNanosMax, ns);
  return s.result;
}

// ---- the public face ----

Planner::Planner(const Grid& grid, const Options& options) : state_(std::make_unique<PlannerState>(grid, options)) {}
Planner::~Planner() = default;

bool Planner::addBot(BotId id, const State& state) {
  PlannerState& p = *state_;
  if (p.slotOf.count(id) || !cellOk(p, state.cell) || (p.grid.flags[static_cast<size_t>(state.cell)] & kBlocked)) return false;
  for (const BotData& o : p.bots) {
    if (!o.present) continue;
    if (o.state.cell == state.cell || (o.running && o.action == Action::Forward && o.target.cell == state.cell)) return false;
  }
  int32_t slot;
  if (!p.freeSlots.empty()) {
    slot = p.freeSlots.back();
    p.freeSlots.pop_back();
  } else {
    slot = static_cast<int32_t>(p.bots.size());
    p.bots.emplace_back();
  }
  BotData& b = p.bots[static_cast<size_t>(slot)];
  b = BotData{};
  b.id = id;
  b.present = true;
  b.state = state;
  b.tie = p.rng.unit();
  b.bestStep = p.now;
  p.slotOf[id] = slot;
  reserveCapacity(p);
  return true;
}

bool Planner::removeBot(BotId id) {
  PlannerState& p = *state_;
  auto it = p.slotOf.find(id);
  if (it == p.slotOf.end()) return false;
  BotData& b = p.bots[static_cast<size_t>(it->second)];
  leaveEscape(p, b);
  dropTable(p, b);
  b.present = false;
  p.freeSlots.push_back(it->second);
  p.slotOf.erase(it);
  return true;
}

bool Planner::setPaused(BotId id, bool paused) {
  BotData* b = find(*state_, id);
  if (!b) return false;
  if (paused) leaveEscape(*state_, *b);
  b->paused = paused;
  return true;
}

bool Planner::setStuck(BotId id, bool stuck) {
  BotData* b = find(*state_, id);
  if (!b) return false;
  if (stuck) leaveEscape(*state_, *b);
  b->stuck = stuck;
  return true;
}

bool Planner::setGoal(BotId id, const Goal& goal) {
  PlannerState& p = *state_;
  BotData* b = find(p, id);
  if (!b || !cellOk(p, goal.cell) || (p.grid.flags[static_cast<size_t>(goal.cell)] & kBlocked)) return false;
  if (b->hasGoal) ++p.counters.replans;
  leaveEscape(p, *b);
  dropTable(p, *b);
  b->hasGoal = true;
  b->goal = goal;
  b->elapsed = 0;
  resetProgress(p, *b);
  ++p.counters.goalsSet;
  return true;
}

bool Planner::cancelGoal(BotId id) {
  PlannerState& p = *state_;
  BotData* b = find(p, id);
  if (!b) return false;
  if (b->hasGoal) {
    ++p.counters.goalsCancelled;
    ++p.counters.replans;
  }
  leaveEscape(p, *b);
  dropTable(p, *b);
  b->hasGoal = false;
  b->elapsed = 0;
  resetProgress(p, *b);
  return true;
}

bool Planner::resync(BotId id, const State& state) {
  PlannerState& p = *state_;
  BotData* b = find(p, id);
  if (!b || !cellOk(p, state.cell)) return false;
  leaveEscape(p, *b);
  b->state = state;
  b->running = false;
  if (b->table >= 0 && b->tableLifted != state.lifted) dropTable(p, *b);
  resetProgress(p, *b);
  ++p.counters.resyncs;
  ++p.counters.replans;
  return true;
}

bool Planner::setCellFlags(Cell cell, uint8_t flags) {
  PlannerState& p = *state_;
  if (!cellOk(p, cell)) return false;
  const bool reshaped = (p.grid.flags[static_cast<size_t>(cell)] ^ flags) & kBlocked;
  p.grid.flags[static_cast<size_t>(cell)] = flags;
  p.tables.setCellFlags(cell, flags);
  if (reshaped && p.opt.corridorGuidance) {
    p.tables.setMoveCosts(corridorCosts(p.grid, p.opt.againstFlowCost, p.opt.openLaneCost, p.opt.openMoveCost));
    if (flowCosts(p.opt)) p.flow.baseCost = corridorCosts(p.grid, p.opt.againstFlowCost, p.opt.openLaneCost, p.opt.openMoveCost);  // congestion comes back at the next period
  }
  return true;
}

const State* Planner::planned(BotId id) const {
  const BotData* b = find(*state_, id);
  return b ? &b->state : nullptr;
}

const Goal* Planner::goal(BotId id) const {
  const BotData* b = find(*state_, id);
  return b && b->hasGoal ? &b->goal : nullptr;
}

bool Planner::has(BotId id) const { return find(*state_, id) != nullptr; }
size_t Planner::botCount() const { return state_->slotOf.size(); }
int64_t Planner::now() const { return state_->now; }
const Counters& Planner::counters() const { return state_->counters; }
const Grid& Planner::grid() const { return state_->grid; }
const Options& Planner::options() const { return state_->opt; }

}  // namespace wh::planner
