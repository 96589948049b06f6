// Readers of the benchmark files the CLI runs (formats: ../shared/bench/mapf/README.md):
// MovingAI and LoRR maps (same header), MovingAI scenarios, LoRR instance JSON with its agent
// and task files. Errors come back as text; nothing throws.
#pragma once

#include <string>
#include <vector>

#include "model.h"

namespace wh::planner {

/** A map: `@`, `T`, `O` and `W` are blocked, anything else (`.`, `G`, `S`, `E`) is free. */
bool readMap(const std::string& path, Grid& grid, std::string& error);

struct ScenAgent {
  Cell start = kNoCell;
  Cell goal = kNoCell;
};
/** The first `limit` agents of a MovingAI .scen (all if limit is 0). */
bool readScen(const std::string& path, const Grid& grid, size_t limit, std::vector<ScenAgent>& agents, std::string& error);

struct LorrInstance {
  std::string name;           // file name of the JSON
  bool v2024 = false;         // "version": "2024 LoRR": tasks of several errands, own scheduler
  int32_t teamSize = 0;
  double numTasksReveal = 1;  // 2024: open pool = reveal x teamSize
  Grid grid;
  std::vector<Cell> starts;                // teamSize start cells
  std::vector<std::vector<Cell>> tasks;    // errand locations per task, in file order
};
bool readLorr(const std::string& jsonPath, LorrInstance& inst, std::string& error);

}  // namespace wh::planner
