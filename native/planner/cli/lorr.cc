// planner-cli, LoRR lifelong mode (--instance X.json): 2023 round-robin errands, 2024 tasks with the
// greedy scheduler below.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../instances.h"
#include "../operations.h"
#include "../planner.h"
#include "args.h"
#include "harness.h"
#include "modes.h"
#include "report.h"

namespace wh::planner::cli {

namespace {

int manhattan(const Grid& g, Cell a, Cell b) { return std::abs(a % g.width - b % g.width) + std::abs(a / g.width - b / g.width); }

}  // namespace

int runLorr(const Args& a) {
  LorrInstance inst;
  std::string err;
  if (!readLorr(a.instance, inst, err)) return std::fprintf(stderr, "%s\n", err.c_str()), 1;
  const Grid& grid = inst.grid;
  const size_t n = static_cast<size_t>(inst.teamSize);
  const int64_t steps = a.steps > 0 ? a.steps : 1000;
  Options lorrOptions = optionsFrom(a, true, true);
  if (a.openCost < 0 && inst.v2024) lorrOptions.openMoveCost = 2;
  if (a.heat < 0) {
    // congestion is a remedy for crowds: at 1,000 robots on 38,586 free cells (2023 test) there
    // are no jams and it only perturbs (19,959 against 19,997 errands in 5,000 steps)
    size_t freeCells = 0;
    for (uint8_t f : grid.flags) freeCells += (f & kBlocked) ? 0 : 1;
    lorrOptions.heatWeight = n * 10 >= freeCells ? 48 : 0;
  }
  if (a.flowCost < 0 && !inst.v2024 && lorrOptions.heatWeight > 0 && lorrOptions.corridorGuidance) {
    // LoRR 2023 crowds (MR23-I-10): congestion in the distance tables sends bots round the top
    // strip's queues, and with it a heavier local weight holds (28.1 -> 31.4 errands/step at
    // 5,000 steps; the weight of 128 alone falls after 2,500 steps; docs/benchmarks-planner.md)
    lorrOptions.flowCostWeight = 4;
    if (a.heat < 0) lorrOptions.heatWeight = 128;
    // and head-on traffic in them: two-way stretches sort into lanes, fewer bots stall (31.4 ->
    // 32.4 errands/step over three seeds at 5,000 steps with 255, 32.6 / 33.1 on two seeds
    // with 510)
    if (a.contraflow < 0) lorrOptions.contraflowWeight = 510;
    // and operations of three actions, improved by eight rounds of large-neighbourhood search
    // in the step's spare time (33.15 -> 35.27 errands/step at 5,000 steps). Not on LoRR 2024:
    // WAREHOUSE fell from 27.21 to 26.19 tasks/step, SORTATION rose only from 27.95 to 28.40.
    // Only where the model allows them: not in the product's profile (turns of two steps, no rings).
    if (a.operationDepth < 0) lorrOptions.operationDepth = 3;
    if (a.improvePasses < 0 && operationsApply(lorrOptions)) lorrOptions.improvePasses = 8;
  }
  Harness h(grid, lorrOptions, a.validate, a.stepLimitMs);
  for (size_t i = 0; i < n; ++i) h.add(static_cast<BotId>(i), State{inst.starts[i], Heading::East, false});
  const size_t taskCount = inst.tasks.size();
  uint64_t finished = 0;      // errands (2023) or tasks (2024)
  uint64_t errandsDone = 0;
  std::vector<uint32_t> errandsOf(n, 0);  // per robot: did every robot get somewhere?
  std::vector<double> schedMs;
  auto setGoal = [&](size_t bot, Cell c) {
    Goal g;
    g.cell = c;
    h.planner.setGoal(static_cast<BotId>(bot), g);
  };

  // 2023: robot i does tasks i, i + n, i + 2n, ... (one errand each), cycling through the file.
  std::vector<uint64_t> nextTask(n);
  // 2024: a pool of revealed tasks; the scheduler gives each free robot the open task with the
  // smallest (Manhattan distance to its first errand + Manhattan length of its errand chain +
  // queuePenalty x robots already on their way to that first errand): spreading robots over the
  // pick-up cells keeps queues from forming in front of a few of them.
  struct Task {
    uint64_t serial;  // reveal order (wraps around the file)
    size_t line;
    int32_t length;
    int32_t robot = -1;
    size_t errand = 0;
  };
  std::vector<Task> tasks;          // by slot
  std::vector<size_t> freeTasks;    // slots of unassigned tasks
  std::vector<int64_t> robotTask(n, -1);
  std::vector<int32_t> bound(static_cast<size_t>(grid.width) * static_cast<size_t>(grid.height), 0);  // robots heading to a first errand
  uint64_t revealed = 0;
  // The next task of the file (wrapping around it), with its errands' length.
  auto revealTask = [&]() {
    Task t;
    t.serial = revealed;
    t.line = static_cast<size_t>(revealed % taskCount);
    const auto& e = inst.tasks[t.line];
    t.length = 0;
    for (size_t k = 1; k < e.size(); ++k) t.length += manhattan(grid, e[k - 1], e[k]);
    ++revealed;
    return t;
  };
  auto reveal = [&]() {
    tasks.push_back(revealTask());
    freeTasks.push_back(tasks.size() - 1);
  };
  std::vector<size_t> freeRobots;
  if (inst.v2024) {
    const size_t pool = static_cast<size_t>(std::ceil(inst.numTasksReveal * static_cast<double>(n)));
    for (size_t i = 0; i < pool; ++i) reveal();
    for (size_t i = 0; i < n; ++i) freeRobots.push_back(i);
  } else {
    for (size_t i = 0; i < n; ++i) {
      nextTask[i] = i;
      setGoal(i, inst.tasks[i % taskCount][0]);
    }
  }
  std::vector<Cell> robotAt(n, kNoCell);
  uint64_t stolenTotal = 0;  // tasks given to a nearer robot (--steal-margin)
  auto schedule = [&]() {
    // Robots in id order; each takes the best open task for itself. With --steal-margin M, a
    // task whose robot has not reached its first errand yet is open too, to a robot at least M
    // cells nearer to that errand (Manhattan): the task goes to the nearer robot and the other
    // chooses again (a far robot no longer keeps a pick-up a near one could have served). Not
    // at the start, when every robot is free at once.
    const bool steal = a.stealMargin > 0 && freeRobots.size() <= 512;
    if (steal) {
      for (size_t q = 0; q < n; ++q) robotAt[q] = h.planner.planned(static_cast<BotId>(q))->cell;
    }
    size_t steals = 0;
    for (size_t w = 0; w < freeRobots.size(); ++w) {
      const size_t r = freeRobots[w];
      const Cell at = h.planner.planned(static_cast<BotId>(r))->cell;
      size_t best = SIZE_MAX;
      int64_t bestCost = INT64_MAX;
      for (size_t k = 0; k < freeTasks.size(); ++k) {
        const Task& t = tasks[freeTasks[k]];
        const Cell first = inst.tasks[t.line][0];
        const int64_t cost = manhattan(grid, at, first) + t.length + a.queuePenalty * bound[static_cast<size_t>(first)];
        if (cost < bestCost) {
          bestCost = cost;
          best = k;
        }
      }
      size_t stolen = SIZE_MAX;  // a task slot taken from another robot
      if (steal && steals < 256) {
        for (size_t slot = 0; slot < tasks.size(); ++slot) {
          const Task& t = tasks[slot];
          if (t.robot < 0 || t.errand != 0) continue;
          const Cell first = inst.tasks[t.line][0];
          const int64_t mine = manhattan(grid, at, first);
          if (mine + a.stealMargin > manhattan(grid, robotAt[static_cast<size_t>(t.robot)], first)) continue;
          const int64_t cost = mine + t.length + a.queuePenalty * (bound[static_cast<size_t>(first)] - 1);
          if (cost < bestCost) {
            bestCost = cost;
            stolen = slot;
          }
        }
      }
      if (stolen != SIZE_MAX) {
        const size_t q = static_cast<size_t>(tasks[stolen].robot);
        ++steals;
        robotTask[q] = -1;
        h.planner.cancelGoal(static_cast<BotId>(q));
        freeRobots.push_back(q);  // chooses again below
        tasks[stolen].robot = static_cast<int32_t>(r);
        robotTask[r] = static_cast<int64_t>(stolen);
        setGoal(r, inst.tasks[tasks[stolen].line][0]);
        continue;
      }
      if (best == SIZE_MAX) continue;
      const size_t slot = freeTasks[best];
      freeTasks[best] = freeTasks.back();
      freeTasks.pop_back();
      tasks[slot].robot = static_cast<int32_t>(r);
      robotTask[r] = static_cast<int64_t>(slot);
      ++bound[static_cast<size_t>(inst.tasks[tasks[slot].line][0])];
      setGoal(r, inst.tasks[tasks[slot].line][0]);
    }
    stolenTotal += steals;
    // robots left without a task (none open) wait for the next step
    size_t keep = 0;
    for (size_t r : freeRobots) {
      if (robotTask[r] < 0) freeRobots[keep++] = r;
    }
    freeRobots.resize(keep);
  };
  std::vector<uint64_t> perWindow;  // finished per 500 steps: does throughput hold up?
  const auto wall0 = std::chrono::steady_clock::now();
  int64_t ran = 0;
  for (int64_t s = 0; s < steps; ++s) {
    if (msSince(wall0) > a.maxSeconds * 1000.0) break;
    double used = 0;
    if (inst.v2024) {
      const auto t0 = std::chrono::steady_clock::now();
      schedule();
      used = msSince(t0);
      schedMs.push_back(used);
    }
    const StepResult& r = h.step(used);
    ++ran;
    if (s % 500 == 0) perWindow.push_back(0);
    for (const Event& e : r.events) {
      if (e.kind != EventKind::GoalReached) continue;
      const size_t bot = static_cast<size_t>(e.bot);
      if (h.validate) h.validator.claimGoal(e.bot, e.cell);
      ++errandsDone;
      ++errandsOf[bot];
      if (!inst.v2024) {
        ++finished;
        ++perWindow.back();
        nextTask[bot] += n;
        setGoal(bot, inst.tasks[nextTask[bot] % taskCount][0]);
        continue;
      }
      Task& t = tasks[static_cast<size_t>(robotTask[bot])];
      const auto& errands = inst.tasks[t.line];
      if (errands[t.errand] != e.cell) continue;  // not this robot's errand (cannot happen)
      if (t.errand == 0) --bound[static_cast<size_t>(errands[0])];
      ++t.errand;
      if (t.errand < errands.size()) {
        setGoal(bot, errands[t.errand]);
      } else {
        ++finished;
        ++perWindow.back();
        // recycle the slot for the next revealed task
        const size_t slot = static_cast<size_t>(robotTask[bot]);
        robotTask[bot] = -1;
        freeRobots.push_back(bot);
        tasks[slot] = revealTask();
        freeTasks.push_back(slot);
      }
    }
  }
  writeAscii(a.ascii, grid, h.planner, static_cast<BotId>(n));
  std::string windows = "[";
  for (size_t i = 0; i < perWindow.size(); ++i) windows += (i ? "," : "") + std::to_string(perWindow[i]);
  windows += "]";
  std::vector<double> stepMs = h.planMs;
  for (size_t i = 0; i < schedMs.size() && i < stepMs.size(); ++i) stepMs[i] += schedMs[i];
  std::printf("{\"mode\":\"%s\",\"instance\":%s,\"robots\":%zu,\"steps\":%lld,\"stepLimitMs\":%s,\"unit\":\"%s\",\"finished\":%llu,"
              "\"errands\":%llu,\"errandsPerRobot\":{\"min\":%u,\"max\":%u},\"throughput\":%s,\"per500Steps\":%s,\"steals\":%llu,\"schedulerMs\":%s,\"stepMs\":%s,%s,\"published\":%s}\n",
              inst.v2024 ? "lorr2024" : "lorr2023", jsonString(inst.name).c_str(), n, static_cast<long long>(ran),
              num(a.stepLimitMs, 0).c_str(), inst.v2024 ? "tasks" : "errands", static_cast<unsigned long long>(finished),
              static_cast<unsigned long long>(errandsDone), n ? *std::min_element(errandsOf.begin(), errandsOf.end()) : 0u,
              n ? *std::max_element(errandsOf.begin(), errandsOf.end()) : 0u, num(ran ? static_cast<double>(finished) / static_cast<double>(ran) : 0, 3).c_str(),
              windows.c_str(), static_cast<unsigned long long>(stolenTotal), percentileJson(schedMs).c_str(), percentileJson(stepMs).c_str(), h.common().c_str(), publishedFor(inst.name).c_str());
  return h.validate && h.validator.violationCount() ? 3 : 0;
}

}  // namespace wh::planner::cli
