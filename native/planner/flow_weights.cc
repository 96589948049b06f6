// What traffic adds to the cost of a move: see flow_weights.h.
#include "flow_weights.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "planner_state.h"

namespace wh::planner {

namespace {

// The congestion averages: a standing bot's weight halves in about 140 steps, so the average
// maps where jams keep forming rather than where one is now (MR23-I-10, 2,000 steps: decay 0.9
// 25.0, 0.95 26.3, 0.98 28.6, 0.99 28.7, 0.995 29.4, 0.999 27.9 errands/step).
constexpr float kHeatDecay = 0.995f;

/** Guidance costs plus the congestion of the cell each move enters: a queue whose cells are
 *  taken a fraction h of the time costs about h / (1 - h) steps per cell to pass. */
void reweigh(PlannerState& s) {
  std::vector<uint8_t> cost = s.flow.baseCost;
  const float w = static_cast<float>(s.opt.flowCostWeight) / static_cast<float>(kHeatScale);
  const float wc = static_cast<float>(s.opt.contraflowWeight) / static_cast<float>(kHeatScale);
  const Cell cells = s.grid.width * s.grid.height;
  for (Cell c = 0; c < cells; ++c) {
    if (s.grid.flags[static_cast<size_t>(c)] & kBlocked) continue;
    for (int d = 0; d < 4; ++d) {
      const Cell n = s.grid.neighbour(c, static_cast<Heading>(d));
      if (n < 0) continue;
      const float h = std::min(s.flow.heat[static_cast<size_t>(n)], 0.9f);
      float extra = w * h / (1.0f - h);
      if (!s.flow.flow.empty()) {
        // Options::contraflowWeight: bots leaving n towards c meet this move head-on
        const float f = std::min(s.flow.flow[static_cast<size_t>(n) * 4 + static_cast<size_t>((d + 2) & 3)], 0.9f);
        extra += wc * f / (1.0f - f);
      }
      uint8_t& k = cost[static_cast<size_t>(c) * 4 + static_cast<size_t>(d)];
      k = static_cast<uint8_t>(std::min(15.0f, static_cast<float>(k) + std::round(extra)));
    }
  }
  s.tables.reweigh(std::move(cost));
  ++s.counters.flowUpdates;
}

}  // namespace

// Corridor rows (cells walled north and south) alternate east/west in order of their row, aisle
// columns (walled east and west) alternate south/north; open areas get lanes by row and column
// parity (Options::openLaneCost) and their own move cost (Options::openMoveCost).
std::vector<uint8_t> corridorCosts(const Grid& g, uint8_t against, uint8_t lane, uint8_t openMove) {
  if (against <= 1) return {};
  against = std::min<uint8_t>(against, 15);  // DistanceTables' bucket ring holds 16
  lane = std::min<uint8_t>(lane, 15);
  openMove = std::clamp<uint8_t>(openMove, 1, 15);
  const int32_t w = g.width, h = g.height;
  auto open = [&](int32_t x, int32_t y) { return g.inside(x, y) && !(g.flags[static_cast<size_t>(y * w + x)] & kBlocked); };
  std::vector<uint8_t> horiz(static_cast<size_t>(w) * static_cast<size_t>(h), 0), vert(horiz.size(), 0);
  std::vector<int32_t> rowCount(static_cast<size_t>(h), 0), colCount(static_cast<size_t>(w), 0);
  for (int32_t y = 0; y < h; ++y) {
    for (int32_t x = 0; x < w; ++x) {
      if (!open(x, y)) continue;
      const size_t c = static_cast<size_t>(y * w + x);
      if (!open(x, y - 1) && !open(x, y + 1) && (open(x - 1, y) || open(x + 1, y))) {
        horiz[c] = 1;
        ++rowCount[static_cast<size_t>(y)];
      }
      if (!open(x - 1, y) && !open(x + 1, y) && (open(x, y - 1) || open(x, y + 1))) {
        vert[c] = 1;
        ++colCount[static_cast<size_t>(x)];
      }
    }
  }
  // alternate the ways of successive corridor rows and aisle columns
  std::vector<int8_t> rowWay(static_cast<size_t>(h), -1), colWay(static_cast<size_t>(w), -1);
  int k = 0;
  for (int32_t y = 0; y < h; ++y) {
    if (rowCount[static_cast<size_t>(y)] >= 2) rowWay[static_cast<size_t>(y)] = static_cast<int8_t>(k++ % 2 == 0 ? Heading::East : Heading::West);
  }
  k = 0;
  for (int32_t x = 0; x < w; ++x) {
    if (colCount[static_cast<size_t>(x)] >= 2) colWay[static_cast<size_t>(x)] = static_cast<int8_t>(k++ % 2 == 0 ? Heading::South : Heading::North);
  }
  std::vector<uint8_t> cost(horiz.size() * 4, 1);
  for (int32_t y = 0; y < h; ++y) {
    for (int32_t x = 0; x < w; ++x) {
      const Cell c = y * w + x;
      if (!open(x, y)) continue;
      for (int d = 0; d < 4; ++d) {
        const Cell n = g.neighbour(c, static_cast<Heading>(d));
        if (n < 0) continue;
        const bool horizontal = d == 0 || d == 2;
        const auto& mark = horizontal ? horiz : vert;
        if (!mark[static_cast<size_t>(c)] && !mark[static_cast<size_t>(n)]) {
          // open area: lanes by row and column parity
          const int way = horizontal ? (y % 2 == 0 ? 0 : 2) : (x % 2 == 0 ? 1 : 3);
          uint8_t& k = cost[static_cast<size_t>(c) * 4 + static_cast<size_t>(d)];
          k = openMove;
          if (lane > 1 && way != d) k = std::max(lane, openMove);
          continue;
        }
        const int8_t way = horizontal ? rowWay[static_cast<size_t>(y)] : colWay[static_cast<size_t>(x)];
        if (way >= 0 && way != d) cost[static_cast<size_t>(c) * 4 + static_cast<size_t>(d)] = against;
      }
    }
  }
  return cost;
}

void updateFlowWeights(PlannerState& s, int64_t t) {
  if (s.flow.heat.empty()) return;
  for (float& x : s.flow.heat) x *= kHeatDecay;
  for (float& x : s.flow.flow) x *= kHeatDecay;
  for (const BotData& b : s.bots) {
    if (b.present && b.hasGoal && !b.running && b.next != Action::Forward && !goalActPending(b)) s.flow.heat[static_cast<size_t>(b.state.cell)] += 1.0f - kHeatDecay;
    if (!s.flow.flow.empty() && b.present && !b.running && b.next == Action::Forward && b.nextCell != b.state.cell) {
      s.flow.flow[static_cast<size_t>(b.state.cell) * 4 + static_cast<size_t>(b.nextHeading)] += 1.0f - kHeatDecay;
    }
  }
  if (flowCosts(s.opt) && (t + 1) % static_cast<int64_t>(s.opt.flowCostPeriod) == 0) reweigh(s);
}

}  // namespace wh::planner
