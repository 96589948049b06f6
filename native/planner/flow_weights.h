// What traffic adds to the cost of a move. Corridor guidance (Options::corridorGuidance): fixed
// one-way preferences in corridors, aisles and open-area lanes, in the distance tables. Congestion:
// per cell, a moving average of how often a bot with a goal stood in it (`heat`) and, per cell
// and heading, of bots leaving it that way (`flow`); PIBT weighs the heat into its move choices
// (Options::heatWeight) and, every Options::flowCostPeriod steps, both are added to the guidance
// costs of the distance tables (Options::flowCostWeight, contraflowWeight).
// docs/planner.md, "Open-area cost" and the options in planner.h.
#pragma once

#include <cstdint>
#include <vector>

#include "model.h"
#include "planner.h"

namespace wh::planner {

struct PlannerState;

// With Options::heatWeight, PIBT's costs count eighths of a step so that congestion can weigh in.
constexpr uint32_t kHeatScale = 8;

struct FlowWeights {
  std::vector<float> heat;         // Options::heatWeight: per cell, moving average of bots standing
  std::vector<uint8_t> baseCost;   // Options::flowCostPeriod: the guidance costs congestion is added to
  std::vector<float> flow;         // Options::contraflowWeight: per cell and heading, moving average of bots leaving that way
};

/** Whether congestion goes into the distance tables (Options::flowCostPeriod and its needs). */
inline bool flowCosts(const Options& o) {
  return o.flowCostPeriod > 0 && o.flowCostWeight > 0 && o.corridorGuidance && o.againstFlowCost > 1;
}

/** Guidance costs: 4 per cell, the cost of leaving it each way (empty when `against` <= 1). */
std::vector<uint8_t> corridorCosts(const Grid& g, uint8_t against, uint8_t lane, uint8_t openMove);

/** After step `t` was decided: the moving averages take in where bots stood and which way they
 *  left, and every `flowCostPeriod` steps the distance tables get the new costs. */
void updateFlowWeights(PlannerState& s, int64_t t);

}  // namespace wh::planner
