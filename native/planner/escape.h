// Escapes: when PIBT's priorities leave bots stalled (typically loaded bots meeting in a
// one-wide aisle, where getting past each other needs several of them to back off into side
// pockets in the right order, which a one-step greedy rule does not find), the planner takes the
// bots nearest to the stall, treats everyone else as a wall, and asks a complete search (LaCAM,
// one_shot.h) for a joint plan that brings each of them to its goal, or as near to it as the
// walls allow. The plan is a list of configurations; the planner then makes the bots follow it
// in lockstep (planner.cc). docs/planner.md, "Deadlock and livelock".
#pragma once

#include <functional>
#include <vector>

#include "model.h"
#include "planner.h"

namespace wh::planner {

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

}  // namespace wh::planner
