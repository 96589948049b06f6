// Escapes: when PIBT's priorities leave bots stalled (typically loaded bots meeting in a
// one-wide aisle, where getting past each other needs several of them to back off into side
// pockets in the right order, which a one-step greedy rule does not find), the planner takes the
// bots nearest to the stall, treats everyone else as a wall, and asks a complete search (LaCAM,
// one_shot.h) for a joint plan that brings each of them to its goal, or as near to it as the
// walls allow. The plan is a list of configurations; the planner then makes the bots follow it
// in lockstep, ahead of PIBT (driveEscape). docs/planner.md, "Deadlock and livelock".
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "model.h"
#include "planner.h"

namespace wh::planner {

struct BotData;
struct PlannerState;

struct EscapeBot {
  Cell cell = kNoCell;
  bool lifted = false;
  Cell goal = kNoCell;  // kNoCell: no goal (the bot may be moved aside and stays there)
};

struct EscapeProblem {
  const Grid* grid = nullptr;
  std::vector<EscapeBot> bots;  // highest priority first: earlier bots get their goals first
  std::vector<Cell> walls;      // cells of the bots left out (they do not move for the search)
  // Moves from `cell` to bot `i`'s goal as the planner counts them (kInf-like when unreachable).
  std::function<uint32_t(size_t i, Cell cell)> movesToGoal;
  uint64_t seed = 1;
  size_t maxConfigs = 64;  // a longer plan is cut: the stall is broken well before
  // The search's work bound (OneShotOptions::maxGenerated), 10 to 50 ms for 16 bots: the
  // escapes found on the random benchmark maps needed under 30,000; an unsolvable one costs this
  // much each time it is tried.
  uint64_t maxGenerated = 50'000;
};

/** A joint plan: configs[t][i] is bot i's cell at lockstep t (configs[0] is the start); empty
 *  when the search found none before the deadline. Consecutive configurations differ by moves
 *  to neighbouring cells with no shared cell, no swap and no ring. */
std::vector<std::vector<Cell>> planEscape(const EscapeProblem& problem, Deadline deadline);

// ---- following an escape (the planner's part) ----

/** The escape under way: its bots follow `configs` in lockstep, ahead of PIBT. */
struct EscapeRun {
  bool active = false;
  std::vector<int32_t> slots;  // its bots
  std::vector<std::vector<Cell>> configs;
  std::vector<size_t> at;      // per bot: the last configuration it has reached
  std::vector<uint8_t> left;   // per bot: it left the escape (leaveEscape)
  int64_t progressAt = 0;      // when a bot of it last moved on
  int64_t nextAt = 0;          // no new escape before this step
};

/** A stall that top priority has not broken in another `stallSteps`: plans an escape for the
 *  bots nearest to it, within a share of the time left before `deadline`. */
void maybeStartEscape(PlannerState& s, Deadline deadline);

/** Decides this step's actions of the escape's bots, before PIBT decides the others'. */
void driveEscape(PlannerState& s);

/** Moves each escape bot's mark past the configurations it is already in. */
void advanceEscape(PlannerState& s);

/** A bot whose goal or state changes leaves the escape under way (if it is in it). */
void leaveEscape(PlannerState& s, BotData& b);

}  // namespace wh::planner
