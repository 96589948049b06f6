// One-shot MAPF (every agent to a fixed goal, MovingAI rules: moves to any of the 4 neighbours
// or waits, no turns, unit durations): LaCAM (Okumura, AAAI-23), a depth-first search over
// whole configurations whose successors come from PIBT under lazily added constraints. It finds
// a first solution where PIBT alone livelocks (10,000 agents on warehouse-20-40-10-2-2). Used by
// planner-cli's MovingAI mode; the lifelong Planner is the product's planner.
#pragma once

#include <cstdint>
#include <vector>

#include "model.h"
#include "planner.h"

namespace wh::planner {

struct OneShotOptions {
  uint64_t seed = 1;
  size_t heuristicMemoryBytes = size_t{2} << 30;
  size_t nodeMemoryBytes = size_t{4} << 30;  // give up (not solved) beyond this
  // Give up after this many configuration generator calls (0: no bound). Unlike the deadline, a
  // bound in work gives the same answer on a busy machine.
  uint64_t maxGenerated = 0;
  // Per agent: holds a carrier (kBarredLoaded cells are closed to it). Empty: nobody does.
  std::vector<uint8_t> lifted;
  // No ring of agents each entering the cell the next one leaves (the lifelong planner's rule
  // for bots run through an action dependency graph).
  bool forbidCycles = false;
};

struct OneShotResult {
  bool solved = false;
  std::vector<std::vector<Cell>> configs;  // configs[t][agent], t = 0 .. makespan
  uint64_t nodes = 0;          // high-level nodes (configurations) created
  uint64_t generated = 0;      // configuration generator calls
  uint64_t revisits = 0;       // generated configurations that were known already
  double heuristicSeconds = 0; // time spent on distance tables
};

/** Searches until solved, the deadline, or the node memory bound. */
OneShotResult solveOneShot(const Grid& grid, const std::vector<Cell>& starts, const std::vector<Cell>& goals,
                           Deadline deadline, const OneShotOptions& options);

}  // namespace wh::planner
