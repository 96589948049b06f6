// The lifelong planner of one level: it keeps a planned state per bot and, once per timestep,
// decides one action per bot so that no two bots ever collide (see validator.h for the rules,
// written independently). Goals arrive, change and are cancelled at any step; bots are added,
// removed, paused or stuck at any step. Algorithm and reasons: docs/planner.md.
//
// Plain C++20: no Node headers, no exceptions, no global state, one instance per level, not
// thread-safe (the caller's level thread owns it). step() does not allocate once every bot has
// been seen once (distance tables are allocated when a goal is new, within Options' memory bound).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "model.h"

namespace wh::planner {

using Clock = std::chrono::steady_clock;
/** step() returns before this instant (robots wait when planning could not finish in time). */
using Deadline = Clock::time_point;

/** What a bot should do where its goal is, once there. */
enum class GoalAct : uint8_t { None = 0, Lift = 1, Lower = 2 };

/** A target cell, optionally with a heading to face and a lift or lower on arrival. */
struct Goal {
  Cell cell = kNoCell;
  std::optional<Heading> heading;  // face this way before the goal counts as reached
  GoalAct act = GoalAct::None;     // then lift (must be empty) or lower (must be lifted)
  // One-shot MAPF: keep the goal after arrival (the bot returns if pushed away). Lifelong use
  // leaves it false: the goal is cleared when reached and the bot idles until the next one.
  bool keep = false;
};

/** When following and cycles are allowed; see validator.h for the exact rules. */
struct Options {
  Durations durations;
  // false: MovingAI one-shot model, bots move in any of the 4 directions without turning
  // (a Forward whose `to.heading` gives the direction); headings are then ignored.
  bool rotations = true;
  // Forbid a closed ring of bots each entering the cell the next one leaves in the same step
  // (LoRR allows it; bots executed through an action dependency graph cannot do it safely).
  bool forbidCycles = false;
  // Traffic guidance: one-way preference in 1-wide corridors. Corridor rows (cells walled north
  // and south) alternate east/west in order of their row, aisle columns (walled east and west)
  // alternate south/north; a move against the preferred way costs `againstFlowCost` instead of
  // 1 in the distance tables, so bots take the opposite way only when it is much shorter.
  bool corridorGuidance = false;
  uint8_t againstFlowCost = 8;  // 2..15
  // With corridorGuidance, lanes in open areas too (cells that are neither corridor nor aisle):
  // east on even rows, west on odd rows, south on even columns, north on odd ones; a move
  // against its lane costs `openLaneCost` (0: no lanes, 2..15).
  uint8_t openLaneCost = 0;
  // With corridorGuidance, the cost of a move along its lane in open areas (1: like anywhere
  // else). Above 1 it keeps through traffic out of the open strips in front of pick-up cells
  // (docs/planner.md, "Open-area cost"); bots still cross them to reach a cell there.
  uint8_t openMoveCost = 1;
  // Congestion in PIBT's move preferences (0: off): each cell keeps a moving average (over some
  // hundred steps) of how often a bot with a goal stood in it (waiting or turning, not moving
  // on); among the moves a
  // bot considers, a cell's average times `heatWeight` eighths of a step is added to its cost,
  // so with a weight above 8 a bot takes an equally short way that needs a turn instead of
  // queueing into a jam. Staying never becomes cheaper than a move by it.
  uint8_t heatWeight = 0;
  // Congestion in the distance tables (0: off; needs corridorGuidance): every `flowCostPeriod`
  // steps the cost of a move becomes its guidance cost plus `flowCostWeight` eighths of a step
  // times h / (1 - h), h the entered cell's congestion average (as for heatWeight, capped at
  // 0.9), at most 15; so bots route round the places where queues keep forming, not only
  // choose between moves of equal length. Held tables are searched again a few per step
  // (`flowRefreshPerStep`), the bots keeping their old distances meanwhile.
  uint32_t flowCostPeriod = 0;
  uint8_t flowCostWeight = 0;
  uint32_t flowRefreshPerStep = 256;
  // With the flow costs: head-on traffic too (0: off). Each cell keeps, per heading, a moving
  // average of bots leaving it that way; a move from c into n also costs `contraflowWeight`
  // eighths of a step times f / (1 - f), f the average of bots leaving n towards c, so the
  // busier way of a two-way stretch wins it and the traffic sorts itself into lanes (the
  // contraflow term of Chen, Harabor, Li and Stuckey, AAAI 2024).
  uint16_t contraflowWeight = 0;  // 16 bits: the LoRR 2023 crowd default is 510 (docs/benchmarks-planner.md)
  // Upper bound of the distance-table cache (tables per goal cell and lifted state).
  size_t heuristicMemoryBytes = size_t{1} << 30;
  // A bot with a goal whose distance has not improved for this many steps counts as stalled
  // (deadlock or livelock): it is then given top priority and a random tie-break until it
  // improves again (counted as broken). Stalled for twice this, the bots nearest to it get a
  // joint plan from a complete search (an escape, see Counters).
  uint32_t stallSteps = 24;
  // Most bots in one escape (the nearest to the stalled bot; the others are obstacles to it).
  uint32_t escapeBots = 16;
  // Improvement of the first answer (docs/planner.md, "Using the rest of the step"): after the
  // PIBT pass, up to `improvePasses` more passes with the bots that made no progress moved
  // forward in the order; the plan with the most progress towards the goals wins. Bounded by
  // `improveBudget` after the first pass and by the deadline minus a reserve; 0 passes (the
  // product's default) leaves the first answer as it is. The first answer is always kept when
  // no pass beats it, so the improvement never makes a plan worse by its own measure. With
  // operations (below) the same two bound rounds of large-neighbourhood search instead.
  uint32_t improvePasses = 0;
  std::chrono::nanoseconds improveBudget{0};
  // Multi-action operations (docs/planner.md, "Operations"; operations.h): each bot chooses a
  // sequence of this many actions instead of a neighbour cell (0: one-step PIBT, the product's
  // way). Only with every action one step long and rings allowed (the LoRR model); ignored
  // otherwise. A bot in the way of another's sequence chooses again at most
  // `operationRevisits` times a step.
  uint8_t operationDepth = 0;  // 0..4
  uint8_t operationRevisits = 2;
  uint64_t seed = 1;
};

/** What one bot does in the step just planned. */
struct BotStep {
  BotId bot = 0;
  Action action = Action::Wait;  // the action it performs during this step
  bool starts = true;            // false: the continuation of an action started earlier
  uint16_t duration = 1;         // steps the action takes in all
  int64_t endStep = 0;           // the step after which it is complete (`to` holds from then on)
  State from;                    // state when the action started
  State to;                      // state when it completes
};

enum class EventKind : uint8_t {
  GoalReached = 0,       // at the goal cell (and heading), the goal's lift/lower done
  Stalled = 1,           // a bot stopped getting closer to its goal (deadlock/livelock detected)
  Unstalled = 2,         // it got closer again (broken)
  GoalUnreachable = 3,   // no path for the bot's lifted state: the goal stays, the bot waits
  Escaped = 4,           // a stall went on: `count` bots around the bot got a joint plan (escape)
};

struct Event {
  EventKind kind = EventKind::GoalReached;
  BotId bot = 0;
  int64_t step = 0;  // the step (time) at which it happened: after `StepResult::step` was executed
  Cell cell = kNoCell;
  uint32_t count = 0;  // Escaped: the bots in the escape
};

/** One planned timestep: `step` is the time the actions start at; states hold at `step + 1`. */
struct StepResult {
  int64_t step = 0;
  bool complete = true;  // false: the deadline passed, every free bot waits (nothing started)
  std::vector<BotStep> bots;  // one per present bot, in a stable internal order
  std::vector<Event> events;
};

struct Counters {
  uint64_t steps = 0;
  uint64_t incompleteSteps = 0;   // deadline passed: everyone waited
  uint64_t goalsSet = 0;
  uint64_t goalsReached = 0;
  uint64_t goalsCancelled = 0;
  uint64_t resyncs = 0;
  uint64_t replans = 0;           // bots re-planned after a goal change, cancel or resync
  uint64_t stallsDetected = 0;    // deadlock/livelock detected
  uint64_t stallsBroken = 0;
  // A stall that priority alone did not break within another `stallSteps`: the bots around it
  // get a joint plan from a complete search (LaCAM) and follow it (docs/planner.md).
  uint64_t escapesPlanned = 0;
  uint64_t escapesDone = 0;      // followed to the end
  uint64_t escapesAborted = 0;   // a member's goal, state or cell changed, or it made no progress
  uint64_t escapesUnsolved = 0;  // the search found no joint plan in its time (tried again later)
  uint64_t pushes = 0;            // priority inheritance: a bot asked another to move away (first pass)
  uint64_t improvePasses = 0;     // extra PIBT passes run to improve a step's first answer
  uint64_t improveWins = 0;       // steps whose plan came from an extra pass (more progress)
  uint64_t flowUpdates = 0;       // Options::flowCostPeriod: congestion put into the move costs
  uint64_t heuristicTables = 0;   // distance tables computed
  uint64_t heuristicEvictions = 0;
  uint64_t heuristicBytes = 0;    // now held
  uint64_t planNanosTotal = 0;
  uint64_t planNanosLast = 0;
  uint64_t planNanosMax = 0;
};

struct PlannerState;  // planner_state.h

/** The lifelong planner of one level. */
class Planner {
 public:
  Planner(const Grid& grid, const Options& options);
  ~Planner();
  Planner(const Planner&) = delete;
  Planner& operator=(const Planner&) = delete;

  /** Adds a bot at `state` (now); false if the id exists or the cell is blocked or taken. */
  bool addBot(BotId id, const State& state);
  /** Removes a bot; false if unknown. */
  bool removeBot(BotId id);
  /** A paused bot keeps its place (finishing the action it started) and others route around it. */
  bool setPaused(BotId id, bool paused);
  /** A stuck (faulted) bot is an obstacle until released; like paused, reported apart. */
  bool setStuck(BotId id, bool stuck);
  /** Sets or replaces the goal; false if unknown bot or the goal cell is off the grid/blocked. */
  bool setGoal(BotId id, const Goal& goal);
  /** Drops the goal: the bot idles (and can be pushed aside). */
  bool cancelGoal(BotId id);
  /** Moves the bot's planned state to what telemetry says; any action in progress is dropped. */
  bool resync(BotId id, const State& state);
  /** Changes a cell's flags (e.g. storage became occupied: barred when loaded). */
  bool setCellFlags(Cell cell, uint8_t flags);

  /** Plans one timestep and advances the planned states to the end of it. */
  const StepResult& step(Deadline deadline);

  /** The planned state now (after the last step); while a multi-step action runs, the state it
   *  started from (the BotStep says where it ends). nullptr if unknown. */
  const State* planned(BotId id) const;
  const Goal* goal(BotId id) const;  // nullptr: none
  bool has(BotId id) const;
  size_t botCount() const;
  int64_t now() const;  // steps planned so far
  const Counters& counters() const;
  const Grid& grid() const;
  const Options& options() const;

 private:
  std::unique_ptr<PlannerState> state_;
};

}  // namespace wh::planner
