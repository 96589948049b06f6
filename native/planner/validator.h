// An independent plan validator: it replays, step by step, the actions bots were given from
// their start states on a Grid and checks every movement rule. It is written from the rules
// below and shares no code with the planner (only the plain data of model.h).
//
// Time: a bot's state holds at instants t = 0, 1, 2, ...; "step t" is the interval from t to
// t + 1. Every present bot has exactly one record per step. An action of duration d (see
// Durations; Wait is always 1) started at step s fills the records of steps s .. s+d-1, all with
// the same action; its effect (the state `to`) holds from instant s + d. Records before the last
// carry the unchanged state in `after`.
//
// Rules (the Rule enum names them):
//  - Forward: the target is the neighbour in the bot's heading (without rotations: in the
//    heading given by the record's `after`, turning is free, and every record of a multi-step
//    Forward carries that heading); it must be inside the grid, not
//    kBlocked, and not kBarredLoaded when the bot holds a carrier. TurnLeft/TurnRight change
//    the heading by 90 degrees in place. Lift needs an empty bot, Lower a lifted one; both stay
//    in place. Wait does nothing. A bot already in a barred cell may stay and leave it.
//  - Occupancy: a bot occupies its cell; while a Forward from u to v of duration d started at
//    s is under way, it occupies u at instant s, both u and v at instants s+1 .. s+d-1, and v
//    at s+d. Turning, lifting, lowering and waiting occupy the bot's cell only.
//  - Vertex: no two bots occupy one cell at one instant.
//  - Swap (edge): no two bots traverse one edge in opposite directions in overlapping steps.
//  - Following: a bot may enter a cell at step s whose occupant at instant s leaves it during
//    step s (one-step moves: the occupancy rule then holds at s+1). With Forward durations
//    above 1 the occupancy rule forbids it, so a follower starts one step later.
//  - Cycle (only with forbidCycles): no closed ring of bots each entering, in the same step,
//    the cell the next one occupies at its start.
//  - Frozen (paused or stuck) bots start nothing but Wait.
//  - Durations: an action runs its full duration before another starts.
//  - Goal claims: a claimed goal holds the bot's replayed state at that instant.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "model.h"

namespace wh::planner {

enum class Rule : uint8_t {
  UnknownBot = 0,      // a record or call names a bot that is not present
  MissingRecord,       // a present bot has no record for a step, or two records
  BadStart,            // a bot starts (or is resynced) off the grid, on a blocked cell or on another
  OffGrid,             // Forward leaves the grid
  BlockedCell,         // Forward into a kBlocked cell
  BarredLoaded,        // Forward into a kBarredLoaded cell while holding a carrier
  IllegalAction,       // Lift while lifted, Lower while empty, unknown action value
  Duration,            // an action changed before its duration ran out
  StateMismatch,       // the record's `after` is not the replayed state
  Vertex,              // two bots in one cell at one instant
  Swap,                // two bots crossed one edge in opposite directions
  Cycle,               // a ring of bots each entering the next one's cell (forbidCycles)
  FrozenMoved,         // a paused/stuck bot started an action other than Wait
  GoalNotReached,      // a goal was claimed where the bot is not
};

/** The rule's name in docs and reports, e.g. "vertex". */
const char* ruleName(Rule rule);

struct ValidatorOptions {
  Durations durations;
  bool rotations = true;      // false: MovingAI moves (any of 4 directions, no turns)
  bool forbidCycles = false;
  size_t maxViolations = 100;  // kept in detail; all are counted
};

/** One bot's action for one step and its state at the end of that step. */
struct Record {
  BotId bot = 0;
  Action action = Action::Wait;
  State after;
};

struct Violation {
  int64_t step = 0;      // the step (interval) or instant it concerns
  BotId bot = 0;
  BotId other = -1;      // the other bot of a conflict, -1 if none
  Rule rule = Rule::UnknownBot;
  Cell cell = kNoCell;
  std::string detail;
};

class Validator {
 public:
  Validator(const Grid& grid, const ValidatorOptions& options);

  /** A bot appears at `state` at the current instant. */
  void addBot(BotId id, const State& state);
  /** The bot leaves (any action under way is dropped with it). */
  void removeBot(BotId id);
  /** Frozen bots (paused, stuck) may start only Wait. */
  void setFrozen(BotId id, bool frozen);
  /** Telemetry moved the bot (resync): checked as a start, any action under way is dropped. */
  void teleport(BotId id, const State& state);
  void setCellFlags(Cell cell, uint8_t flags);

  /** Checks one step: exactly one record per present bot, any order. */
  void step(const std::vector<Record>& records);
  /** Checks that the bot is at `cell` now (and faces `heading`, and is lifted as given). */
  void claimGoal(BotId id, Cell cell, std::optional<Heading> heading = std::nullopt,
                 std::optional<bool> lifted = std::nullopt);

  int64_t now() const { return now_; }
  uint64_t violationCount() const { return count_; }
  const std::vector<Violation>& violations() const { return violations_; }
  /** The first violations as text, one a line (empty when none). */
  std::string report(size_t max = 10) const;

 private:
  struct Bot {
    State state;            // at the start of the running action (or now when idle)
    bool present = false;
    bool frozen = false;
    bool running = false;   // an action of duration > 1 is under way
    Action action = Action::Wait;
    int64_t started = 0;
    int32_t duration = 1;
    State target;           // state once the running action completes
  };
  void flag(int64_t step, BotId bot, BotId other, Rule rule, Cell cell, std::string detail);
  int32_t durationOf(Action a) const;
  bool checkStart(BotId id, const State& s);

  Grid grid_;
  ValidatorOptions opt_;
  int64_t now_ = 0;
  uint64_t count_ = 0;
  std::vector<Violation> violations_;
  std::unordered_map<BotId, Bot> bots_;
  // scratch for step(): cell -> bot occupying it, rebuilt per instant
  std::unordered_map<Cell, BotId> occNow_, occNext_;
};

}  // namespace wh::planner
