// The realtime planner of one level: a thread of its own that owns the level's Planner and its
// Execution (the action dependency graph, execution.h). Inputs (map, bots, goals, telemetry)
// arrive through a lock-protected queue that the caller only appends to; output (the actions
// released to bots, events) accumulates until the caller takes it. The thread plans a step
// whenever a bot that can move has a goal and the plan is less than the window ahead of the
// bots, each step within its budget; it never waits on the caller, so the caller (the JS event
// loop) never waits on planning. Plain C++20 like the planner: native/src/planner_binding.cc
// wraps it for Node. docs/planner-realtime.md.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "execution.h"
#include "model.h"
#include "planner.h"
#include "validator.h"

namespace wh::planner {

struct EngineOptions {
  Options planner;  // forbidCycles is forced on: a ring of bots cannot be ordered in the graph
  ExecutionOptions execution;
  uint32_t stepBudgetMs = 50;  // each planning step returns within this (the planner's deadline)
  // A step in which no bot starts an action (all wait: goals out of reach, bots in the way are
  // stuck) is followed by the next one only after this long, or sooner on any input.
  uint32_t idleStepMs = 100;
  bool validate = false;     // replay every planned step in the independent Validator
  size_t maxEvents = 10000;  // events waiting for the caller beyond this are dropped (counted)
  // An unconfirmed action that holds the planning window shut this long is told (HeldUp), once:
  // the level's plan cannot run ahead of it. A bot that sets the pace by moving without a
  // stop holds the window with one action after another, each briefly; one action held for
  // seconds is a confirmation that does not come. 0: never.
  uint32_t heldUpMs = 2000;
};

enum class InputKind : uint8_t { SetMap = 0, AddBot, RemoveBot, Pause, Stuck, SetGoal, CancelGoal, Telemetry, CellFlags };

const char* inputName(InputKind kind);

struct Input {
  InputKind kind = InputKind::Telemetry;
  BotId bot = 0;
  State state;                       // AddBot, Telemetry
  Goal goal;                         // SetGoal
  bool flag = false;                 // Pause, Stuck; SetGoal: stay at the goal
  Cell cell = kNoCell;               // CellFlags
  uint8_t flags = 0;                 // CellFlags
  std::shared_ptr<const Grid> grid;  // SetMap
};

enum class EngineEventKind : uint8_t {
  GoalReached = 0,  // confirmed by telemetry
  GoalUnreachable,
  Stalled,          // deadlock or livelock detected by the planner
  Unstalled,        // broken
  Escaped,          // the stall went on: `count` bots around the bot follow a joint plan
  Replanned,        // `count` actions dropped, the bot planned again from `state`
  Deviation,        // telemetry put the bot at `state`; `placed` false: refused there, the bot is stuck
  OverBudget,       // the step `step` took `ms` (over stepBudgetMs, or incomplete)
  BotAdded,
  Refused,          // input `op` for `bot` refused: `reason`
  Violation,        // validate: the Validator flagged the plan (`rule`, `text`)
  HeldUp,           // `bot`'s unconfirmed `action` (planned at `step`, to `state`; `placed`: released) held planning for `ms`
};

struct EngineEvent {
  EngineEventKind kind = EngineEventKind::GoalReached;
  BotId bot = -1;
  BotId other = -1;
  Cell cell = kNoCell;
  int64_t step = 0;
  uint64_t goal = 0;  // goal events: the number of the setGoal input
  uint32_t count = 0;
  State state;
  bool placed = false;
  double ms = 0;
  Action action = Action::Wait;  // HeldUp
  InputKind op = InputKind::SetMap;
  const char* reason = "";
  Rule rule = Rule::UnknownBot;
  std::string text;
};

/** What one pass of the thread produced: its events happened before its commands were released. */
struct EngineChunk {
  std::vector<EngineEvent> events;
  std::vector<Release> commands;
};

/** Output in the order it was produced. */
struct EngineOutput {
  std::vector<EngineChunk> chunks;
  size_t events = 0;
};

/** A bot the planner's window waited on, and for how long in all. */
struct HeldUp {
  BotId bot = -1;
  double ms = 0;
};

struct EngineStats {
  bool hasMap = false;
  bool suspended = false;
  int64_t now = 0;  // steps planned since the map was set
  size_t bots = 0;
  int64_t lag = 0;  // steps the plan is ahead of the slowest bot
  size_t queuedActions = 0;  // planned, not confirmed
  size_t inputsWaiting = 0;
  uint64_t inputs = 0;
  uint64_t refused = 0;
  uint64_t steps = 0;
  uint64_t idleSteps = 0;
  uint64_t overBudget = 0;
  uint64_t incompleteSteps = 0;
  uint64_t eventsDropped = 0;
  uint64_t violations = 0;
  double windowWaitMs = 0;     // time a step was wanted but the slowest bot held the window shut
  std::vector<HeldUp> heldUpBy;  // the bots it waited on longest, longest first (up to 3)
  HeldUp holding;                // the bot it waits on now (-1: none), its waits before this one
  std::chrono::steady_clock::time_point holdingSince;
  ExecutionCounters execution;
  Counters planner;
  double stepMsLast = 0, stepMsMax = 0;
  std::vector<uint32_t> stepMicros;  // the latest steps' planning times (up to 4096), unordered
};

class LevelEngine {
 public:
  explicit LevelEngine(const EngineOptions& options);
  ~LevelEngine();
  LevelEngine(const LevelEngine&) = delete;
  LevelEngine& operator=(const LevelEngine&) = delete;

  /** Starts the thread. `wake` runs on it (the lock held) when output is waiting and no delivery
   *  is pending; false means the delivery could not be queued (retried in 2 ms). `exited` is the
   *  thread's last act. */
  void start(std::function<bool()> wake, std::function<void()> exited, const char* threadName);
  /** Appends an input and returns its number (1, 2, ...; commands carry the number of inputs
   *  applied before their release); never waits for planning. */
  uint64_t post(Input&& input);
  /** Suspends (true) or resumes inputs, planning and releases; inputs still queue meanwhile. */
  void suspend(bool suspended);
  /** Takes the output accumulated so far and allows the next wake. */
  void take(EngineOutput& out);
  EngineStats stats() const;
  /** CPU time the thread has used, in nanoseconds. */
  uint64_t threadCpuNs() const;
  /** Asks the thread to end (it finishes the step under way); does not wait. */
  void stop();
  /** Waits for the thread to end (bounded by one step's budget). */
  void join();

 private:
  void run();
  void rebuild(const Grid& grid);
  bool apply(std::vector<Input>& inputs, std::vector<EngineEvent>& events);
  void collect(std::vector<EngineEvent>& events);
  void refresh(EngineStats& s) const;

  EngineOptions opt_;
  // engine thread only
  std::shared_ptr<const Grid> grid_;
  std::unique_ptr<Planner> planner_;
  std::unique_ptr<Validator> validator_;
  std::unique_ptr<Execution> exec_;
  size_t violationsSeen_ = 0;
  uint64_t steps_ = 0, idleSteps_ = 0, overBudget_ = 0, refused_ = 0, inputsDone_ = 0;
  // The window's waits, by the bot that held it: which bot (or link) keeps a level behind.
  BotId holder_ = -1;
  std::chrono::steady_clock::time_point heldSince_;
  uint64_t heldAction_ = 0;  // the holder's action holding the window now, since actionSince_
  std::chrono::steady_clock::time_point actionSince_;
  bool actionTold_ = false;
  std::unordered_map<BotId, uint64_t> heldUpMicros_;
  std::vector<HeldUp> heldUpTop_;  // the three largest of heldUpMicros_, longest first
  uint64_t windowWaitMicros_ = 0;
  /** Counts the window's wait (`shut`: a step is wanted and the window is shut) against the bot holding it. */
  void noteHolder(bool shut, std::vector<EngineEvent>& events);
  // shared, under mu_
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Input> inbox_;
  EngineOutput outbox_;
  uint64_t inputs_ = 0;
  uint64_t eventsDropped_ = 0;
  bool stop_ = false, suspend_ = false, suspended_ = false, deliveryQueued_ = false;
  EngineStats snapshot_;
  std::vector<uint32_t> ring_;
  size_t ringNext_ = 0;
  uint64_t cpuAtExit_ = 0;
  std::function<bool()> wake_;
  std::function<void()> exited_;
  std::thread thread_;
};

}  // namespace wh::planner
