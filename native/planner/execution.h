// Robust execution of the lifelong planner's plans on real bots: an action dependency graph
// (ADG; Hönig, Kiesel, Tinka, Durham, Ayanian, "Persistent and robust execution of MAPF
// schedules in warehouses", RA-L 2019). Every planned action of every bot is a node; a bot's
// actions follow each other (type 1), and an action that enters a cell waits until the bot that
// was there before it, in the plan's order, has left (type 2: an edge from that bot's leaving
// action). A bot is given an action only when the actions it depends on are confirmed done by
// telemetry, so bots that run late or early keep the planned order through every cell, and the
// plan's timing stops mattering. Waits are not nodes: they are only timing.
//
// The planner plans ahead of execution by at most `window` steps, so that a change (new goal,
// pause, fault) costs at most that many planned steps. Dropping a bot's actions from a point
// (a fault, a pause, a goal changed or cancelled, telemetry that contradicts the plan, a bot
// removed) also drops, transitively, every action of other bots that waits on a dropped one;
// each bot that lost actions is moved back in the planner (Planner::resync) to the end of what
// it keeps. What is kept is closed under dependencies, so the planner's state stays free of
// conflicts and the plan goes on from there.
//
// Plain C++20 like the planner: no Node headers, no exceptions, not thread-safe (the level
// thread owns it). docs/planner-realtime.md.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_map>
#include <vector>

#include "model.h"
#include "planner.h"
#include "validator.h"

namespace wh::planner {

struct ExecutionOptions {
  // The planner plans step T only while every bot that is not paused or stuck has confirmed
  // all its actions that start before T - window + 1.
  int32_t window = 8;
  // Actions a bot holds at once (released and not yet confirmed). 1: every action's start
  // state is confirmed before the bot gets it. More: a bot gets the next actions whose other
  // bots' preconditions are confirmed, and runs them in order without stopping in between.
  int32_t maxReleased = 1;
};

/** An action given to a bot: every action of other bots it depends on is confirmed done. */
struct Release {
  BotId bot = 0;
  Action action = Action::Wait;
  State from;
  State to;            // what telemetry will show once it is done
  uint16_t duration = 1;
  int64_t planStep = 0;  // the planned step it starts at
  uint64_t input = 0;    // set by the level engine: inputs applied when it was released
};

/** An unconfirmed action and its bot. */
struct Holding {
  BotId bot = -1;
  uint64_t seq = 0;       // the action's number in the plan
  Action action = Action::Wait;
  State from, to;
  int64_t planStep = 0;   // the planned step it starts at
  bool released = false;  // given to the bot; else it waits for nothing (about to be released)
};

/** Why an operation was refused. */
enum class Refusal : uint8_t {
  None = 0,
  UnknownBot,
  BotExists,
  CellBlocked,  // off the grid or blocked
  CellTaken,    // another bot is there or on its way there
};

const char* refusalName(Refusal r);

enum class ExecEventKind : uint8_t {
  GoalReached = 0,   // telemetry confirmed the bot's last action to its goal
  GoalUnreachable,   // the planner found no path for the bot (the goal stays)
  Stalled,           // the planner detected a deadlock or livelock around the bot
  Unstalled,         // broken
  Replanned,         // `count` actions of the bot were dropped; it is planned again from what it kept
  Deviation,         // telemetry put the bot where the plan did not (`state`); `placed`: accepted there
  Escaped,           // the bot's stall went on: `count` bots around it follow a joint plan
};

struct ExecEvent {
  ExecEventKind kind = ExecEventKind::GoalReached;
  BotId bot = 0;
  Cell cell = kNoCell;
  int64_t step = 0;  // planned step (planner events) or the planner's time when it happened
  uint64_t goal = 0;  // the tag of the goal it concerns (setGoal), 0 if none
  uint32_t count = 0;
  State state;
  bool placed = false;
};

struct ExecutionCounters {
  uint64_t planned = 0;     // actions added to the graph (waits excluded)
  uint64_t released = 0;    // given to bots
  uint64_t confirmed = 0;   // confirmed done by telemetry
  uint64_t dropped = 0;     // removed unexecuted (released ones included)
  uint64_t truncations = 0; // drops, each with its cascade
  uint64_t deviations = 0;
  uint64_t goalsReached = 0;  // confirmed by telemetry
  uint64_t heldCells = 0;     // cells now blocked for the planner around stuck bots
  uint64_t frozenCells = 0;   // cells now blocked for the planner under paused, stuck or staying bots
};

class Execution {
 public:
  /** Drives `planner` (which must use forbidCycles); `validator`, if given, replays every planned
   *  step and every change of the planner's bots, cells and goals (in-engine validation). */
  Execution(Planner& planner, const ExecutionOptions& options, Validator* validator = nullptr);

  /** A bot appears at `state` (telemetry): refused on a blocked cell or one another bot holds. */
  Refusal addBot(BotId id, const State& state);
  /** The bot left the level: its unexecuted actions and those waiting on them are dropped. */
  Refusal removeBot(BotId id);
  /** Paused: the actions it holds finish, nothing more is released, the rest is dropped. */
  Refusal setPaused(BotId id, bool paused);
  /** Stuck (faulted): every action not confirmed is dropped; the cells the bot may be in are
   *  blocked for the planner until it reports at rest on one of them (then that one only) or is
   *  released, then it is placed where telemetry last put it. */
  Refusal setStuck(BotId id, bool stuck);
  /** A new goal; a goal that replaces an open one drops the bot's unreleased actions. With
   *  `stay` the bot stays at the goal once there (an obstacle to the others, like a paused bot)
   *  until its next goal or cancelGoal: for work done there (charging, tags). */
  Refusal setGoal(BotId id, const Goal& goal, bool stay = false, uint64_t tag = 0);
  /** Drops the goal and the bot's unreleased actions. */
  Refusal cancelGoal(BotId id);
  /** Changes a cell's flags; unreleased actions that would break them are dropped first. */
  Refusal setCellFlags(Cell cell, uint8_t flags);
  /** Telemetry: the bot is at rest in `state`. Confirms the released actions up to the one that
   *  ends there; a state the plan does not explain is a deviation (the plan is redone from it). */
  Refusal report(BotId id, const State& state);

  /** True when some bot that can move has a goal the planner still works on. */
  bool wantsStep() const;
  /** True when planning the next step keeps the planner within the window. */
  bool windowOpen() const;
  /** Steps the planner by how much it is ahead of the slowest bot's confirmed actions. */
  int64_t lag() const;
  /** The action the window waits on: the oldest unconfirmed one, followed through the actions
   *  of other bots it waits on to one that is released or free to be; bot -1 when none. */
  Holding holding() const;
  /** Plans one step and adds its actions to the graph; returns the number of actions started. */
  size_t plan(Deadline deadline);
  const StepResult& lastStep() const { return *last_; }
  /** Appends every action that became releasable to `out`. */
  void release(std::vector<Release>& out);

  /** Events since the last call (the caller clears it). */
  std::vector<ExecEvent>& events() { return events_; }
  const ExecutionCounters& counters() const { return counters_; }
  size_t botCount() const { return bots_.size(); }
  /** Actions in the graph not yet confirmed (released ones included). */
  size_t queued() const;

 private:
  struct Node {
    uint64_t seq = 0;  // global, in plan order
    Action action = Action::Wait;
    State from, to;
    int64_t start = 0;
    uint16_t duration = 1;
    BotId depBot = -1;  // type-2 dependency: this bot's action `depSeq` must be done
    uint64_t depSeq = 0;
  };
  struct Bot {
    BotId id = 0;
    State confirmed;        // at rest, per telemetry (or where it was added)
    std::deque<Node> queue;  // actions not confirmed, in order; the first `released` are released
    size_t released = 0;
    bool paused = false;
    bool stuck = false;
    std::vector<Cell> held;              // stuck: cells blocked for the planner
    std::optional<State> lastReport;     // stuck: telemetry while stuck
    std::optional<Goal> goal;            // open until confirmed reached or cancelled
    uint64_t goalTag = 0;                // the caller's name for `goal`
    bool stay = false;                   // the goal asks the bot to stay there
    bool holding = false;                // it reached (in the plan) a goal with `stay`
    Cell under = kNoCell;                // frozen: its planned cell, blocked for the planner
    bool reachedInPlan = false;          // the planner reached `goal` at instant `reachedAt`
    int64_t reachedAt = 0;
  };
  struct Ref {
    BotId bot = -1;
    uint64_t seq = 0;  // 0: none
  };

  Bot* find(BotId id);
  bool done(BotId bot, uint64_t seq) const;
  State keptState(const Bot& b) const;
  /** Drops each root bot's actions from `seq` on and, transitively, every action waiting on a
   *  dropped one; resyncs every bot that lost actions. */
  void truncate(const std::vector<Ref>& roots);
  void dropUnreleased(Bot& b);
  void rebuildExits();
  bool takenByOther(Cell cell, BotId self) const;
  /** Drops other bots' unreleased actions that enter `cell`. */
  void clearEntries(Cell cell, BotId self);
  void hold(Bot& b, Cell cell);
  void unhold(Bot& b);
  /** A stuck bot reported at rest on `cell`, one of those it may be on: the others are freed. */
  void narrowHold(Bot& b, Cell cell);
  /** A paused, stuck or staying bot's cell is blocked for the planner (restored when it moves
   *  on): the planner's distances ignore bots, so without this a bot whose shortest way leads
   *  through a bot that will not move waits behind it instead of going round. */
  void syncUnder(Bot& b);
  void clearUnder(Bot& b);
  /** Moves a bot that is at rest in `s` there, in the graph and the planner; false if another
   *  bot holds the cell or the cell is blocked (nothing changed then). */
  bool place(Bot& b, const State& s);
  void checkGoal(Bot& b);
  void resync(BotId id, const State& s);
  void setFrozen(Bot& b);
  void plannerFlags(Cell cell, uint8_t flags);
  uint8_t flagsOf(Cell cell) const;

  Planner& planner_;
  ExecutionOptions opt_;
  Validator* validator_;
  std::unordered_map<BotId, Bot> bots_;
  std::vector<Ref> lastExit_;    // per cell: the latest planned action leaving it
  std::vector<Cell> exitCells_;  // cells with an entry in lastExit_
  std::unordered_map<Cell, uint8_t> heldFlags_;   // held cells: the flags to restore
  std::unordered_map<Cell, uint8_t> underFlags_;  // cells under frozen bots: the flags to restore
  uint64_t nextSeq_ = 1;
  std::vector<ExecEvent> events_;
  ExecutionCounters counters_;
  std::vector<Record> records_;
  const StepResult* last_ = nullptr;
  StepResult empty_;
};

}  // namespace wh::planner
