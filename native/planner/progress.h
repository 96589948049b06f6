// Each bot's progress after a step: goals reached (reported, then cleared or kept), PIBT's
// priority (steps waited with a goal), and stalls: a bot whose cost to go has not improved for
// Options::stallSteps is stalled (deadlock or livelock) and gets top priority until it improves
// again. docs/planner.md, "Deadlock and livelock".
#pragma once

namespace wh::planner {

struct PlannerState;

/** Judges every bot not in the middle of an action once the step's actions have been applied. */
void updateProgress(PlannerState& s);

}  // namespace wh::planner
