// Improving a step's first answer (Options::improvePasses, docs/planner.md, "Using the rest of
// the step"): more PIBT passes with the bots that made no progress moved forward in the order;
// the plan with the most progress towards the goals wins, the first answer when none beats it.
#pragma once

#include <cstdint>
#include <vector>

#include "model.h"
#include "planner.h"

namespace wh::planner {

struct PlannerState;

/** One bot's decision for the step, as PIBT leaves it. */
struct Decision {
  bool decided;
  Action next;
  Cell cell;
  Heading heading;
};

/** The decisions before PIBT (bots under way, frozen, escaping) to go back to, the best plan so
 *  far, and each bot's cost to go now. */
struct ImproveState {
  std::vector<Decision> before, best;
  std::vector<int32_t> resBefore;  // PlannerState::resNext of touchedNext[0, resBefore.size())
  std::vector<uint32_t> costNow;
  std::vector<int32_t> passOrder;
  std::vector<uint8_t> promoted;
};

/** Remembers the state before the PIBT pass: the decided bots and the reservations. */
void markBeforePibt(PlannerState& s);

/** Spends up to `improvePasses` more PIBT passes, until `end`, on beating the first answer
 *  (already decided and finalized) and leaves the best plan decided. */
void improve(PlannerState& s, Clock::time_point end);

}  // namespace wh::planner
