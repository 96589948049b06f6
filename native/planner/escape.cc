// Escapes: see escape.h.
#include "escape.h"

#include <deque>

#include "one_shot.h"

namespace wh::planner {

namespace {

constexpr uint32_t kFar = 0xFFFFFFFF;

// The cell nearest to bot i's goal that it can reach through `grid` and nobody has taken, by the
// planner's own distance (breadth-first from the bot, so ties go to the nearer cell).
Cell nearestReachable(const EscapeProblem& p, const Grid& grid, size_t i, const std::vector<uint8_t>& taken) {
  const EscapeBot& b = p.bots[i];
  std::vector<uint8_t> seen(grid.flags.size(), 0);
  std::deque<Cell> queue{b.cell};
  seen[static_cast<size_t>(b.cell)] = 1;
  Cell best = kNoCell;
  uint32_t bestMoves = kFar;
  while (!queue.empty()) {
    const Cell c = queue.front();
    queue.pop_front();
    if (!taken[static_cast<size_t>(c)]) {
      const uint32_t m = b.goal == kNoCell ? 0 : p.movesToGoal(i, c);
      if (m < bestMoves) {
        bestMoves = m;
        best = c;
        if (m == 0) break;
      }
    }
    for (int d = 0; d < 4; ++d) {
      const Cell n = grid.neighbour(c, static_cast<Heading>(d));
      if (n < 0 || seen[static_cast<size_t>(n)] || !grid.passable(n, b.lifted)) continue;
      seen[static_cast<size_t>(n)] = 1;
      queue.push_back(n);
    }
  }
  return best;
}

}  // namespace

std::vector<std::vector<Cell>> planEscape(const EscapeProblem& p, Deadline deadline) {
  Grid grid = *p.grid;
  for (Cell c : p.walls) grid.flags[static_cast<size_t>(c)] |= kBlocked;
  const size_t n = p.bots.size();
  std::vector<Cell> starts(n), targets(n, kNoCell);
  std::vector<uint8_t> taken(grid.flags.size(), 0);
  OneShotOptions o;
  o.seed = p.seed;
  o.forbidCycles = true;
  o.heuristicMemoryBytes = size_t{64} << 20;
  o.nodeMemoryBytes = size_t{64} << 20;
  o.maxGenerated = p.maxGenerated;
  o.lifted.resize(n);
  for (size_t i = 0; i < n; ++i) {
    starts[i] = p.bots[i].cell;
    o.lifted[i] = p.bots[i].lifted ? 1 : 0;
  }
  // Bots with goals choose first, in priority order; a bot without one keeps its cell unless
  // that is somebody's target, and then takes the nearest free one.
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < n; ++i) {
      if ((p.bots[i].goal != kNoCell) != (pass == 0)) continue;
      const Cell t = nearestReachable(p, grid, i, taken);
      if (t == kNoCell) return {};
      targets[i] = t;
      taken[static_cast<size_t>(t)] = 1;
    }
  }
  OneShotResult r = solveOneShot(grid, starts, targets, deadline, o);
  if (!r.solved) return {};
  if (r.configs.size() > p.maxConfigs) r.configs.resize(p.maxConfigs);
  return std::move(r.configs);
}

}  // namespace wh::planner
