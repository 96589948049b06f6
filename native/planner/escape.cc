// Escapes: see escape.h. The search for a joint plan first, then the planner following it.
#include "escape.h"

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <utility>

#include "one_shot.h"
#include "pibt.h"
#include "planner_state.h"

namespace wh::planner {

namespace {

constexpr uint32_t kFar = 0xFFFFFFFF;

// Bots farther than this (Manhattan) from the stalled bot are left out of its escape.
constexpr int32_t kEscapeRadius = 12;

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

// ---- following an escape ----

namespace {

void endEscape(PlannerState& s, bool done) {
  s.escape.active = false;
  for (size_t m = 0; m < s.escape.slots.size(); ++m) {
    BotData& b = s.bots[static_cast<size_t>(s.escape.slots[m])];
    if (!s.escape.left[m]) b.escaping = false;
  }
  ++(done ? s.counters.escapesDone : s.counters.escapesAborted);
  s.escape.nextAt = s.now + static_cast<int64_t>(s.opt.stallSteps);
}

}  // namespace

/** A bot whose goal or state changes leaves the escape: the plan goes on with the others
 *  (the bot is then like any other in their way), and ends if it makes no more progress. */
void leaveEscape(PlannerState& s, BotData& b) {
  if (!b.escaping) return;
  b.escaping = false;
  bool anyone = false;
  for (size_t m = 0; m < s.escape.slots.size(); ++m) {
    if (&s.bots[static_cast<size_t>(s.escape.slots[m])] == &b) s.escape.left[m] = 1;
    anyone = anyone || !s.escape.left[m];
  }
  if (!anyone) endEscape(s, false);
}

// A stall that top priority has not broken in another `stallSteps`: plan an escape for the
// bots nearest to it (those not in the middle of an action and free to move).
void maybeStartEscape(PlannerState& s, Deadline deadline) {
  if (s.escape.active || s.now < s.escape.nextAt || s.opt.escapeBots < 2) return;
  const int64_t waited = 2 * static_cast<int64_t>(s.opt.stallSteps);
  int32_t seed = kNone;
  for (int32_t i : s.order) {
    const BotData& b = s.bots[static_cast<size_t>(i)];
    if (!b.stalled || b.running || frozen(b) || s.now - b.bestStep < waited) continue;
    if (seed == kNone || b.bestStep < s.bots[static_cast<size_t>(seed)].bestStep) seed = i;
  }
  if (seed == kNone) return;
  const Cell at = s.bots[static_cast<size_t>(seed)].state.cell;
  auto far = [&](const BotData& b) {
    const int32_t w = s.grid.width;
    return std::abs(b.state.cell % w - at % w) + std::abs(b.state.cell / w - at / w);
  };
  // the nearest ones (ties in priority order), then in priority order so that the first
  // choose their targets first
  std::vector<std::pair<int32_t, size_t>> byDistance;
  for (size_t r = 0; r < s.order.size(); ++r) {
    const BotData& b = s.bots[static_cast<size_t>(s.order[r])];
    if (!b.running && !frozen(b) && far(b) <= kEscapeRadius) byDistance.emplace_back(far(b), r);
  }
  if (byDistance.size() < 2) return;
  std::sort(byDistance.begin(), byDistance.end());
  if (byDistance.size() > s.opt.escapeBots) byDistance.resize(s.opt.escapeBots);
  std::sort(byDistance.begin(), byDistance.end(), [](const auto& x, const auto& y) { return x.second < y.second; });
  std::vector<int32_t> near;
  for (const auto& [d, r] : byDistance) near.push_back(s.order[r]);
  EscapeProblem problem;
  problem.grid = &s.grid;
  problem.seed = s.opt.seed + static_cast<uint64_t>(s.now);
  std::vector<uint8_t> member(s.bots.size(), 0);
  for (int32_t i : near) {
    const BotData& b = s.bots[static_cast<size_t>(i)];
    member[static_cast<size_t>(i)] = 1;
    problem.bots.push_back(EscapeBot{b.state.cell, b.state.lifted, b.hasGoal ? b.goal.cell : kNoCell});
  }
  for (size_t i = 0; i < s.bots.size(); ++i) {
    const BotData& b = s.bots[i];
    if (!b.present || member[i]) continue;
    problem.walls.push_back(b.state.cell);
    if (b.running && b.action == Action::Forward) problem.walls.push_back(b.target.cell);
  }
  problem.movesToGoal = [&](size_t k, Cell c) { return movesTo(s, s.bots[static_cast<size_t>(near[k])], c); };
  const auto now = Clock::now();
  // bounded in work (EscapeProblem::maxGenerated, the same plan on a busy machine) and, should the
  // machine be very busy, in time: a share of what is left of the step
  const Deadline until = now < deadline ? now + (deadline - now) / 4 : now;
  std::vector<std::vector<Cell>> configs = planEscape(problem, until);
  if (configs.size() < 2) {
    ++s.counters.escapesUnsolved;
    s.escape.nextAt = s.now + static_cast<int64_t>(s.opt.stallSteps);
    return;
  }
  ++s.counters.escapesPlanned;
  const BotData& stalled = s.bots[static_cast<size_t>(seed)];
  s.result.events.push_back(Event{EventKind::Escaped, stalled.id, s.now, stalled.state.cell, static_cast<uint32_t>(near.size())});
  s.escape.active = true;
  s.escape.slots = near;
  for (int32_t i : near) s.bots[static_cast<size_t>(i)].escaping = true;
  s.escape.configs = std::move(configs);
  s.escape.at.assign(near.size(), 0);
  s.escape.left.assign(near.size(), 0);
  s.escape.progressAt = s.now;
}

// Moves each escape bot's mark past the configurations it is already in.
void advanceEscape(PlannerState& s) {
  const size_t last = s.escape.configs.size() - 1;
  for (size_t m = 0; m < s.escape.slots.size(); ++m) {
    const BotData& b = s.bots[static_cast<size_t>(s.escape.slots[m])];
    if (s.escape.left[m] || b.running) continue;
    size_t& k = s.escape.at[m];
    while (k < last && s.escape.configs[k + 1][m] == b.state.cell) {
      if (s.escape.configs[k][m] != b.state.cell) s.escape.progressAt = s.now;
      ++k;
    }
  }
}

/**
 * Decides this step's actions of the escape's bots, before PIBT decides the others': a bot
 * makes its move from configuration T to T+1 once every bot of the escape has reached T
 * (lockstep keeps the plan valid when some must turn first), pushing a bot from outside out
 * of the way if needed; the others wait.
 */
void driveEscape(PlannerState& s) {
  if (!s.escape.active) return;
  advanceEscape(s);
  size_t t = s.escape.configs.size() - 1;
  for (size_t m = 0; m < s.escape.slots.size(); ++m) {
    if (!s.escape.left[m]) t = std::min(t, s.escape.at[m]);
  }
  if (t == s.escape.configs.size() - 1) return endEscape(s, true);
  if (s.now - s.escape.progressAt > 3 * static_cast<int64_t>(s.opt.stallSteps)) return endEscape(s, false);
  const bool slowForward = durationOf(s, Action::Forward) > 1;
  for (size_t m = 0; m < s.escape.slots.size(); ++m) {
    const int32_t i = s.escape.slots[m];
    if (!s.escape.left[m] && !s.bots[static_cast<size_t>(i)].decided && s.escape.at[m] != t) holdInPlace(s, i);
  }
  for (size_t pass = 0; pass <= s.escape.slots.size(); ++pass) {
    bool changed = false;
    for (size_t m = 0; m < s.escape.slots.size(); ++m) {
      const int32_t i = s.escape.slots[m];
      BotData& b = s.bots[static_cast<size_t>(i)];
      if (s.escape.left[m] || b.decided) continue;
      const Cell c = b.state.cell;
      const Cell v = s.escape.configs[t + 1][m];
      if (s.resNext[static_cast<size_t>(v)] != kNone) continue;  // waits
      if (!s.grid.passable(v, b.state.lifted)) return endEscape(s, false);  // a cell changed under the plan
      int dir = 0;
      while (dir < 4 && s.grid.neighbour(c, static_cast<Heading>(dir)) != v) ++dir;
      if (dir == 4) return endEscape(s, false);
      if (s.opt.rotations && static_cast<Heading>(dir) != b.state.heading) {
        reserveNext(s, c, i);
        turnTowards(s, b, v);
        changed = true;
        continue;
      }
      const int32_t k2 = s.occNow[static_cast<size_t>(v)];
      if (k2 != kNone && k2 != i) {
        BotData& o = s.bots[static_cast<size_t>(k2)];
        if (!o.decided && o.escaping) continue;  // its own move comes first
        if (slowForward || (o.decided && (o.nextCell == v || closesRing(s, i, v)))) continue;
        reserveNext(s, v, i);
        decide(b, Action::Forward, v, static_cast<Heading>(dir));
        if (!o.decided) {
          ++s.counters.pushes;
          if (!pibt(s, k2, i)) b.decided = false;  // it stays (and holds v)
        }
      } else {
        reserveNext(s, v, i);
        if (slowForward) reserveNext(s, c, i);
        decide(b, Action::Forward, v, static_cast<Heading>(dir));
      }
      changed = changed || b.decided;
    }
    if (!changed) break;
  }
  for (size_t m = 0; m < s.escape.slots.size(); ++m) {
    const int32_t i = s.escape.slots[m];
    if (!s.escape.left[m] && !s.bots[static_cast<size_t>(i)].decided) holdInPlace(s, i);
  }
}

}  // namespace wh::planner
