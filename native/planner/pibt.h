// Priority Inheritance with Backtracking (PIBT, Okumura et al.) for one timestep, adapted to
// bots that turn before they move and to actions that take several steps: each free bot in
// priority order picks its best cell for the next instant, pushing the bot standing there to
// move first; finalize() then turns the choices into actions nobody collides in.
// docs/planner.md, "What the planner does per step".
#pragma once

#include <cstdint>

#include "model.h"

namespace wh::planner {

struct BotData;
struct PlannerState;

/**
 * PIBT for bot i; `pusher` (kNone: nobody) has reserved i's cell for the next instant. False
 * when i found no way out and stays (its cell reserved for itself).
 */
bool pibt(PlannerState& s, int32_t i, int32_t pusher);

/** Turns PIBT's choices into actions; see pibt.cc. */
void finalize(PlannerState& s);

/** Bot i waits this step and keeps its cell. */
void holdInPlace(PlannerState& s, int32_t i);

/** Turns a bot towards neighbour `v` (it stays in its cell this step). */
void turnTowards(PlannerState& s, BotData& b, Cell v);

/** With forbidCycles: would bot `i` entering `to` close a ring of bots moving into each
 *  other's cells? */
bool closesRing(const PlannerState& s, int32_t i, Cell to);

}  // namespace wh::planner
