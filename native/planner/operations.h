// Multi-action operations (EPIBT: Yukhnevich and Andreychuk, "Enhancing PIBT via Multi-Action
// Operations", 2025): PIBT in which each bot chooses a sequence of `Options::operationDepth`
// actions at once instead of a neighbour cell. A bot that has to turn before it moves then
// reserves the cells and instants of its whole turn-and-go, where one-step PIBT reserves a
// neighbour it cannot enter this step and makes the bot there give way for nothing. The bot in
// the way of a bot's best sequence is pushed to choose again, as in PIBT; only the first
// action is carried out and every bot chooses again at the next step. For the LoRR model only:
// every action takes one step and rings of bots are allowed (`operationsApply`).
// docs/planner.md, "Operations".
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "model.h"
#include "planner.h"

namespace wh::planner {

struct PlannerState;

constexpr int kMaxOperationDepth = 4;

/** One sequence of actions; `depth` of them are used. */
struct Operation {
  Action act[kMaxOperationDepth];
};

/** The per-level state of the operations pass: the operation set and the space-time table. */
struct OperationRun {
  int depth = 0;
  std::vector<Operation> ops;    // every sequence worth trying, preferred first among equals
  std::vector<int32_t> occ;      // depth * cells: the bot at a cell at the end of action d
  std::vector<Cell> path;        // slot * depth: a bot's cell at the end of action d
  std::vector<Heading> heading;  // slot * depth: its heading then
  std::vector<int32_t> opOf;     // slot: its chosen operation (-1: decided before, kept)
  std::vector<int32_t> rank;     // slot: place in the priority order (-1: not to be pushed)
  std::vector<uint32_t> visitedAt, visits, choosingAt;  // `pass` stamps
  std::vector<std::pair<uint32_t, uint16_t>> prefs;     // slot * ops: (cost, operation), best first
  std::vector<uint32_t> costOf;                         // slot * ops: the same costs by operation
  std::vector<uint16_t> prefCount;
  std::vector<uint32_t> prefsAt;                        // `step` stamps
  std::vector<double> weight;                           // slot: its priority's weight in `score`
  std::vector<int32_t> shuffled;
  uint32_t step = 0, pass = 0;
  int32_t rootRank = 0;
  uint32_t calls = 0;
  bool late = false;
  // Improvement rounds: the weighted sum of what each bot's operation gains over waiting, and
  // its value when the current round's chain began (a chain that lowers it is undone).
  bool improving = false;
  double score = 0, scoreBefore = 0;
  Deadline deadline{};
};

/** Whether `o` asks for operations and its model allows them. */
bool operationsApply(const Options& o);

/** Chooses an operation for every bot not decided yet; the decided bots (frozen, escaping)
 *  keep their cell after their action and are obstacles. The operations are free of collisions
 *  even when the deadline cuts the pass short. */
void planOperations(PlannerState& s, Deadline deadline);

/** Up to `Options::improvePasses` rounds of large-neighbourhood search on the last pass's
 *  operations until `end`: each bot in a random order chooses again, pushing any bot but the
 *  decided ones, and the chain stands only if the weighted sum of the bots' gains over waiting
 *  does not fall (weights favour higher priority). */
void improveOperations(PlannerState& s, Clock::time_point end);

/** Decides each bot's action for the step: the first of its operation. */
void carryOutOperations(PlannerState& s);

}  // namespace wh::planner
