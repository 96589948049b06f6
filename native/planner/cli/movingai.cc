// planner-cli, MovingAI one-shot mode (--map M --scen S --agents N): time to the first valid
// solution by LaCAM, replayed through the validator.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "../instances.h"
#include "../one_shot.h"
#include "../validator.h"
#include "args.h"
#include "modes.h"
#include "report.h"

namespace wh::planner::cli {

int runOneShot(const Args& a) {
  Grid grid;
  std::string err;
  if (!readMap(a.map, grid, err)) return std::fprintf(stderr, "%s\n", err.c_str()), 1;
  std::vector<ScenAgent> agents;
  if (!readScen(a.scen, grid, a.agents, agents, err)) return std::fprintf(stderr, "%s\n", err.c_str()), 1;
  std::vector<Cell> starts, goals;
  for (const ScenAgent& s : agents) {
    starts.push_back(s.start);
    goals.push_back(s.goal);
  }
  OneShotOptions oo;
  oo.seed = a.seed;
  oo.heuristicMemoryBytes = a.memoryMb << 20;
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = cpuSeconds();
  const OneShotResult res = solveOneShot(grid, starts, goals, t0 + std::chrono::milliseconds(static_cast<int64_t>(a.maxSeconds * 1000)), oo);
  const double solveSeconds = msSince(t0) / 1000.0;
  const double solveCpu = cpuSeconds() - cpu0;
  // replay the solution through the validator: a move is a Forward facing its direction
  Validator v(grid, ValidatorOptions{a.durations, false, a.forbidCycles, 100});
  uint64_t soc = 0;
  int64_t makespan = 0;
  if (res.solved) {
    const size_t n = agents.size();
    for (size_t i = 0; i < n; ++i) v.addBot(static_cast<BotId>(i), State{starts[i], Heading::East, false});
    std::vector<Record> recs(n);
    std::vector<Heading> facing(n, Heading::East);
    for (size_t t = 1; t < res.configs.size(); ++t) {
      for (size_t i = 0; i < n; ++i) {
        const Cell from = res.configs[t - 1][i], to = res.configs[t][i];
        Action act = Action::Wait;
        if (to != from) {
          act = Action::Forward;
          for (int d = 0; d < 4; ++d) {
            if (grid.neighbour(from, static_cast<Heading>(d)) == to) facing[i] = static_cast<Heading>(d);
          }
        }
        recs[i] = Record{static_cast<BotId>(i), act, State{to, facing[i], false}};
      }
      v.step(recs);
    }
    for (size_t i = 0; i < n; ++i) v.claimGoal(static_cast<BotId>(i), goals[i]);
    makespan = static_cast<int64_t>(res.configs.size()) - 1;
    for (size_t i = 0; i < n; ++i) {
      int64_t last = 0;  // the instant after which agent i stays at its goal
      for (size_t t = res.configs.size(); t-- > 0;) {
        if (res.configs[t][i] != goals[i]) {
          last = static_cast<int64_t>(t) + 1;
          break;
        }
      }
      soc += static_cast<uint64_t>(last);
    }
  }
  const std::string mapName = a.map.substr(a.map.rfind('/') == std::string::npos ? 0 : a.map.rfind('/') + 1);
  std::string violations = "{\"violations\":" + std::to_string(v.violationCount()) + ",\"first\":\"" + v.report(3) + "\"}";
  for (auto& ch : violations) if (ch == '\n') ch = ' ';
  std::printf("{\"mode\":\"movingai\",\"instance\":%s,\"agents\":%zu,\"algorithm\":\"LaCAM\",\"solved\":%s,\"timeToSolutionS\":%s,"
              "\"cpuS\":%s,\"heuristicS\":%s,\"makespan\":%lld,\"sumOfCosts\":%llu,\"nodes\":%llu,\"generated\":%llu,\"revisits\":%llu,"
              "\"peakMemoryMB\":%s,\"validator\":%s,\"published\":%s}\n",
              jsonString(mapName).c_str(), agents.size(), res.solved ? "true" : "false", res.solved ? num(solveSeconds).c_str() : "null",
              num(solveCpu).c_str(), num(res.heuristicSeconds).c_str(), static_cast<long long>(makespan), static_cast<unsigned long long>(soc),
              static_cast<unsigned long long>(res.nodes), static_cast<unsigned long long>(res.generated),
              static_cast<unsigned long long>(res.revisits), num(static_cast<double>(peakMemoryKb()) / 1024.0, 1).c_str(),
              violations.c_str(), publishedFor(mapName).c_str());
  if (v.violationCount()) return 3;
  return res.solved ? 0 : 4;
}

}  // namespace wh::planner::cli
