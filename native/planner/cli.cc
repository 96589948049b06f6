// planner-cli: runs the planning core on benchmark instances or on random ones, checks every
// step with the independent validator and prints one JSON object. Modes:
//   --map M --scen S --agents N         MovingAI one-shot: time to the first valid solution
//   --instance X.json                   LoRR lifelong: 2023 round-robin errands, 2024 tasks
//                                       with the greedy scheduler below
//   --random                            random map and goal stream (tests and property runs)
// Usage and output fields: docs/planner.md.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <sys/resource.h>

#include "instances.h"
#include "one_shot.h"
#include "planner.h"
#include "rng.h"
#include "validator.h"

using namespace wh::planner;

namespace {

struct Args {
  std::string map, scen, instance, plan;
  bool random = false;
  size_t agents = 0;
  int64_t steps = -1;
  double stepLimitMs = 1000;
  double maxSeconds = 600;
  uint64_t seed = 1;
  bool forbidCycles = false;
  Durations durations;
  bool validate = true;
  size_t memoryMb = 1024;
  uint32_t stallSteps = 24;
  uint32_t escapeBots = 16;
  uint32_t improvePasses = 0;  // extra PIBT passes per step to improve the first answer (0 off)
  double improveMs = 0;        // their time per step (0: until the deadline's reserve)
  // random mode
  int32_t width = 16, height = 12;
  size_t bots = 20;
  double obstacles = 0.15, barred = 0.05;
  bool chaos = false;
  bool rotations = true;
  int guidance = -1;  // corridor guidance: -1 mode default (LoRR on), 0 off, >1 the against-flow cost
  // with guidance, cost of a move along its lane in open areas: -1 mode default (LoRR 2024 2,
  // whose pick-ups are all in the open strips, so through traffic there queues behind them; else 1)
  int openCost = -1;
  int heat = -1;  // PIBT: weight of the cells' congestion in move preferences: -1 mode default (LoRR: 48 when the robots take a tenth of the free cells or more, else 0), 0 off
  // congestion in the distance tables, weight in eighths of a step: -1 mode default (LoRR 2023
  // crowds 4, with --heat 128; else off), 0 off
  int flowCost = -1;
  int flowPeriod = 100;  // steps between its updates
  int flowRefresh = 256; // tables searched again per step after an update
  int contraflow = -1;  // with the flow costs, weight of head-on traffic in eighths of a step: -1 mode default (LoRR 2023 crowds 510, else off), 0 off
  int lanes = -1;  // open-area lanes with guidance: -1 mode default (LoRR 8), 0 off, >1 the against-lane cost
  int64_t queuePenalty = 150;  // 2024 scheduler: cost per robot already heading to the same first errand
  int64_t stealMargin = 20;    // 2024 scheduler: a robot this much nearer takes a task not yet started (0 off)
  std::string ascii;  // write the final state as a picture (debugging)
};

bool parseDurations(const char* s, Durations& d) {
  int f, t, l, o;
  if (std::sscanf(s, "%d,%d,%d,%d", &f, &t, &l, &o) != 4 || f < 1 || t < 1 || l < 1 || o < 1) return false;
  d.forward = static_cast<uint16_t>(f);
  d.turn = static_cast<uint16_t>(t);
  d.lift = static_cast<uint16_t>(l);
  d.lower = static_cast<uint16_t>(o);
  return true;
}

const char* kUsage =
    "usage: planner-cli (--instance LORR.json | --map M.map --scen S.scen --agents N | --random | --check-plan FILE) [options]\n"
    "  --check-plan FILE    only validate a hand-written plan (format: docs/planner.md)\n"
    "  --steps N            steps to run (LoRR default 1000; one-shot: step cap, default 10000; random 300)\n"
    "  --step-limit-ms X    per-step planning limit; over it every bot waits (default 1000)\n"
    "  --max-seconds X      stop a run after this much wall time (default 600)\n"
    "  --seed N             planner and random-mode seed (default 1)\n"
    "  --forbid-cycles      no rings of bots moving into each other's cells\n"
    "  --durations F,T,L,O  forward, turn, lift, lower steps (default 1,1,1,1)\n"
    "  --memory-mb N        distance-table cache bound (default 1024)\n"
    "  --stall-steps N      steps without progress before a bot counts as stalled (default 24)\n"
    "  --escape-bots N      most bots in a stall's escape, a joint plan by LaCAM (default 16; 0 off)\n"
    "  --improve-passes N   up to N more PIBT passes per step, the plan with most progress wins (0 off)\n"
    "  --improve-ms X       time for those passes per step (default 0: until the deadline's reserve)\n"
    "  --no-validate        skip the validator (timing runs)\n"
    "  --guidance N         one-way corridor preference, N = cost against the flow (0 off; LoRR default 8)\n"
    "  --lanes N            with guidance, lanes in open areas, N = cost against the lane (0 off; LoRR default 8)\n"
    "  --open-cost N        with guidance, cost of a move along its lane in open areas (LoRR 2024 default 2, else 1)\n"
    "  --contraflow W       with --flow-cost: a move also costs W/8 x f/(1-f), f the rate of bots coming the other way (0 off; LoRR 2023 crowds 510)\n"
    "  --heat W             PIBT: congestion (bots standing in a cell lately) weighs W/8 steps in move choices (0 off; LoRR default 48 with robots on >= 10 % of the free cells, 128 for LoRR 2023 ones)\n"
    "  --flow-cost W        congestion in the distance tables: a move costs W/8 x h/(1-h) more, h the entered cell's congestion (0 off; LoRR 2023 crowds 4, with --heat 128)\n"
    "  --flow-period P      with --flow-cost: steps between cost updates (100)\n"
    "  --flow-refresh N     with --flow-cost: tables searched again per step after an update (256)\n"
    "  --steal-margin M     2024 scheduler: a free robot M cells nearer takes a task whose robot has not reached its first errand (20; 0 off)\n"
    "  --queue-penalty N    2024 scheduler: extra cost per robot already bound for a task's first errand (150)\n"
    "  --ascii PATH         write the final state as text: # blocked, arrows bots by heading, * goals\n"
    "  random mode: --width W --height H --bots N --obstacles P --barred P --chaos --no-rotations\n";

bool parse(int argc, char** argv, Args& a) {
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto val = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", k.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (k == "--map") a.map = val();
    else if (k == "--scen") a.scen = val();
    else if (k == "--agents") a.agents = std::strtoul(val(), nullptr, 10);
    else if (k == "--instance") a.instance = val();
    else if (k == "--random") a.random = true;
    else if (k == "--check-plan") a.plan = val();
    else if (k == "--steps") a.steps = std::strtoll(val(), nullptr, 10);
    else if (k == "--step-limit-ms") a.stepLimitMs = std::atof(val());
    else if (k == "--max-seconds") a.maxSeconds = std::atof(val());
    else if (k == "--seed") a.seed = std::strtoull(val(), nullptr, 10);
    else if (k == "--forbid-cycles") a.forbidCycles = true;
    else if (k == "--durations") {
      if (!parseDurations(val(), a.durations)) return false;
    } else if (k == "--memory-mb") a.memoryMb = std::strtoul(val(), nullptr, 10);
    else if (k == "--stall-steps") a.stallSteps = static_cast<uint32_t>(std::strtoul(val(), nullptr, 10));
    else if (k == "--escape-bots") a.escapeBots = static_cast<uint32_t>(std::strtoul(val(), nullptr, 10));
    else if (k == "--improve-passes") a.improvePasses = static_cast<uint32_t>(std::strtoul(val(), nullptr, 10));
    else if (k == "--improve-ms") a.improveMs = std::atof(val());
    else if (k == "--no-validate") a.validate = false;
    else if (k == "--width") a.width = std::atoi(val());
    else if (k == "--height") a.height = std::atoi(val());
    else if (k == "--bots") a.bots = std::strtoul(val(), nullptr, 10);
    else if (k == "--obstacles") a.obstacles = std::atof(val());
    else if (k == "--barred") a.barred = std::atof(val());
    else if (k == "--chaos") a.chaos = true;
    else if (k == "--no-rotations") a.rotations = false;
    else if (k == "--ascii") a.ascii = val();
    else if (k == "--guidance") a.guidance = std::atoi(val());
    else if (k == "--lanes") a.lanes = std::atoi(val());
    else if (k == "--contraflow") a.contraflow = std::atoi(val());
    else if (k == "--open-cost") a.openCost = std::atoi(val());
    else if (k == "--heat") a.heat = std::atoi(val());
    else if (k == "--flow-cost") a.flowCost = std::atoi(val());
    else if (k == "--flow-period") a.flowPeriod = std::atoi(val());
    else if (k == "--flow-refresh") a.flowRefresh = std::atoi(val());
    else if (k == "--steal-margin") a.stealMargin = std::strtoll(val(), nullptr, 10);
    else if (k == "--queue-penalty") a.queuePenalty = std::strtoll(val(), nullptr, 10);
    else if (k == "--help" || k == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else {
      std::fprintf(stderr, "unknown option %s\n%s", k.c_str(), kUsage);
      return false;
    }
  }
  return true;
}

double msSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

// CPU time of this process (user + system): steadier than wall time when the machine is shared.
double cpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

long peakMemoryKb() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long kb = -1;
  while (std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, "VmHWM:", 6) == 0) kb = std::strtol(line + 6, nullptr, 10);
  }
  std::fclose(f);
  return kb;
}

std::string jsonString(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\', o += c;
    else if (c == '\n') o += "\\n";
    else if (static_cast<unsigned char>(c) < 0x20) o += ' ';
    else o += c;
  }
  return o + "\"";
}

std::string num(double v, int digits = 3) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

struct Percentiles {
  double p50 = 0, p99 = 0, max = 0, mean = 0;
};
Percentiles percentiles(std::vector<double> v) {
  Percentiles p;
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[std::min(v.size() - 1, static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())) - 1))]; };
  p.p50 = at(0.5);
  p.p99 = at(0.99);
  p.max = v.back();
  double s = 0;
  for (double x : v) s += x;
  p.mean = s / static_cast<double>(v.size());
  return p;
}

std::string percentileJson(const std::vector<double>& v) {
  const Percentiles p = percentiles(v);
  return "{\"p50\":" + num(p.p50) + ",\"p99\":" + num(p.p99) + ",\"max\":" + num(p.max) + ",\"mean\":" + num(p.mean) + "}";
}

// Published figures for the instances of ../shared/bench/mapf (README there).
std::string publishedFor(const std::string& name) {
  if (name == "WAREHOUSE.json")
    return "{\"unit\":\"tasks\",\"steps\":5000,\"best\":154834,\"bestPerStep\":31.0,\"bestBy\":\"No Man's Sky (32 vCPU)\","
           "\"startKitDefault\":63924,\"startKitDefaultPerStep\":12.8}";
  if (name == "SORTATION.json")
    return "{\"unit\":\"tasks\",\"steps\":5000,\"best\":152714,\"bestPerStep\":30.5,\"bestBy\":\"No Man's Sky (32 vCPU)\","
           "\"startKitDefault\":85039,\"startKitDefaultPerStep\":17.0}";
  if (name == "sortation_large_2000.json")
    return "{\"unit\":\"tasks\",\"steps\":2000,\"best\":15508,\"bestPerStep\":7.75,\"bestBy\":\"Kitty Knight\"}";
  if (name == "MR23-I-10.json")
    return "{\"unit\":\"errands\",\"steps\":5000,\"best\":194677,\"bestPerStep\":38.9,\"bestBy\":\"Shadoks\"}";
  if (name == "TR23-warehouse_large.json")
    return "{\"unit\":\"errands\",\"steps\":5000,\"best\":19758,\"bestPerStep\":3.95,\"bestBy\":\"Pikachu (WPPL), 0.88 s/step avg\"}";
  if (name.find("warehouse-20-40-10-2-2") != std::string::npos)
    return "{\"unit\":\"seconds to first solution\",\"lacam1000\":0.70,\"lacam10000\":10.8,"
           "\"note\":\"plain LaCAM (lacam3 at 1a269b7) on this 2-core VM, 10k scen; 1k figure from the brief\"}";
  return "null";
}

/** One run: planner and validator in step, timings, checksum. */
struct Harness {
  Planner planner;
  Validator validator;
  bool validate;
  double limitMs;
  std::vector<double> planMs;
  std::vector<Record> records;
  uint64_t checksum = 1469598103934665603ULL;
  const StepResult* last = nullptr;

  Harness(const Grid& g, const Options& o, bool v, double limit)
      : planner(g, o), validator(g, ValidatorOptions{o.durations, o.rotations, o.forbidCycles, 100}), validate(v), limitMs(limit) {}

  void add(BotId id, const State& s) {
    if (!planner.addBot(id, s)) {
      std::fprintf(stderr, "planner refused bot %d at %d\n", id, s.cell);
      std::exit(1);
    }
    if (validate) validator.addBot(id, s);
  }

  void mix(uint64_t v) {
    checksum ^= v;
    checksum *= 1099511628211ULL;
  }

  const StepResult& step(double usedMs = 0) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto deadline = t0 + std::chrono::microseconds(static_cast<int64_t>((limitMs - usedMs) * 1000.0));
    const StepResult& r = planner.step(deadline);
    planMs.push_back(msSince(t0));
    if (validate) {
      records.clear();
      for (const BotStep& b : r.bots) {
        State after = b.endStep == r.step + 1 ? b.to : b.from;
        if (!planner.options().rotations) after.heading = b.to.heading;  // the move's direction (validator.h)
        records.push_back(Record{b.bot, b.action, after});
      }
      validator.step(records);
    }
    for (const BotStep& b : r.bots) {
      mix(static_cast<uint64_t>(b.bot) * 131 + static_cast<uint64_t>(b.action));
      mix(static_cast<uint64_t>(b.to.cell));
    }
    last = &r;
    return r;
  }

  std::string countersJson() const {
    const Counters& c = planner.counters();
    return "{\"steps\":" + std::to_string(c.steps) + ",\"incompleteSteps\":" + std::to_string(c.incompleteSteps) +
           ",\"goalsSet\":" + std::to_string(c.goalsSet) + ",\"goalsReached\":" + std::to_string(c.goalsReached) +
           ",\"goalsCancelled\":" + std::to_string(c.goalsCancelled) + ",\"resyncs\":" + std::to_string(c.resyncs) +
           ",\"replans\":" + std::to_string(c.replans) + ",\"stallsDetected\":" + std::to_string(c.stallsDetected) +
           ",\"stallsBroken\":" + std::to_string(c.stallsBroken) + ",\"escapesPlanned\":" + std::to_string(c.escapesPlanned) +
           ",\"escapesDone\":" + std::to_string(c.escapesDone) + ",\"escapesAborted\":" + std::to_string(c.escapesAborted) +
           ",\"escapesUnsolved\":" + std::to_string(c.escapesUnsolved) + ",\"pushes\":" + std::to_string(c.pushes) +
           ",\"improvePasses\":" + std::to_string(c.improvePasses) + ",\"improveWins\":" + std::to_string(c.improveWins) +
           ",\"flowUpdates\":" + std::to_string(c.flowUpdates) +
           ",\"heuristicTables\":" + std::to_string(c.heuristicTables) + ",\"heuristicEvictions\":" + std::to_string(c.heuristicEvictions) +
           ",\"heuristicMB\":" + num(static_cast<double>(c.heuristicBytes) / 1048576.0, 1) + "}";
  }

  std::string validatorJson() const {
    if (!validate) return "null";
    std::string first = "[";
    for (size_t i = 0; i < validator.violations().size() && i < 10; ++i) {
      const Violation& v = validator.violations()[i];
      if (i) first += ",";
      first += "{\"step\":" + std::to_string(v.step) + ",\"bot\":" + std::to_string(v.bot) + ",\"other\":" + std::to_string(v.other) +
               ",\"rule\":" + jsonString(ruleName(v.rule)) + ",\"cell\":" + std::to_string(v.cell) + ",\"detail\":" + jsonString(v.detail) + "}";
    }
    return "{\"violations\":" + std::to_string(validator.violationCount()) + ",\"first\":" + first + "]}";
  }

  std::string common() const {
    char cs[32];
    std::snprintf(cs, sizeof cs, "%016llx", static_cast<unsigned long long>(checksum));
    return "\"planMs\":" + percentileJson(planMs) + ",\"peakMemoryMB\":" + num(static_cast<double>(peakMemoryKb()) / 1024.0, 1) +
           ",\"cpuS\":" + num(cpuSeconds(), 1) + ",\"validator\":" + validatorJson() + ",\"counters\":" + countersJson() + ",\"checksum\":\"" + cs + "\"";
  }
};

// The level as text: '#' blocked, '>' 'v' '<' '^' bots by heading ('L' etc. lowercase when
// lifted is not shown), '*' a goal cell nobody stands on.
void writeAscii(const std::string& path, const Grid& g, const Planner& p, BotId maxId) {
  if (path.empty()) return;
  std::vector<char> pic(g.flags.size());
  for (size_t c = 0; c < pic.size(); ++c) pic[c] = (g.flags[c] & kBlocked) ? '#' : '.';
  for (BotId id = 0; id < maxId; ++id) {
    const Goal* goal = p.goal(id);
    if (goal && pic[static_cast<size_t>(goal->cell)] == '.') pic[static_cast<size_t>(goal->cell)] = '*';
  }
  static const char arrows[] = {'>', 'v', '<', '^'};
  for (BotId id = 0; id < maxId; ++id) {
    const State* s = p.planned(id);
    if (s) pic[static_cast<size_t>(s->cell)] = arrows[static_cast<int>(s->heading)];
  }
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return;
  for (int32_t r = 0; r < g.height; ++r) {
    std::fwrite(pic.data() + static_cast<size_t>(r) * static_cast<size_t>(g.width), 1, static_cast<size_t>(g.width), f);
    std::fputc('\n', f);
  }
  std::fclose(f);
}

Options optionsFrom(const Args& a, bool rotations, bool guidanceByDefault) {
  Options o;
  o.durations = a.durations;
  o.rotations = rotations;
  o.forbidCycles = a.forbidCycles;
  o.heuristicMemoryBytes = a.memoryMb << 20;
  o.stallSteps = a.stallSteps;
  o.escapeBots = a.escapeBots;
  o.improvePasses = a.improvePasses;
  o.improveBudget = std::chrono::nanoseconds(static_cast<int64_t>(a.improveMs * 1e6));
  o.seed = a.seed;
  o.corridorGuidance = a.guidance > 1 || (a.guidance < 0 && guidanceByDefault);
  if (a.guidance > 1) o.againstFlowCost = static_cast<uint8_t>(a.guidance);
  if (a.lanes > 1 || (a.lanes < 0 && guidanceByDefault)) o.openLaneCost = static_cast<uint8_t>(a.lanes > 1 ? a.lanes : 8);
  o.contraflowWeight = static_cast<uint16_t>(std::clamp(std::max(a.contraflow, 0), 0, 4095));
  o.heatWeight = static_cast<uint8_t>(std::clamp(std::max(a.heat, 0), 0, 255));
  if (a.openCost > 0) o.openMoveCost = static_cast<uint8_t>(std::clamp(a.openCost, 1, 15));
  o.flowCostWeight = static_cast<uint8_t>(std::clamp(std::max(a.flowCost, 0), 0, 255));
  o.flowCostPeriod = static_cast<uint32_t>(std::max(a.flowPeriod, 1));
  o.flowRefreshPerStep = static_cast<uint32_t>(std::max(a.flowRefresh, 1));
  return o;
}

// ---- MovingAI one-shot ----

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

// ---- LoRR lifelong ----

int manhattan(const Grid& g, Cell a, Cell b) { return std::abs(a % g.width - b % g.width) + std::abs(a / g.width - b / g.width); }

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
    // strip's queues, and with it a heavier local weight holds (issue 23, fifth round: 28.1 ->
    // 31.4 errands/step at 5,000 steps; the weight of 128 alone falls after 2,500 steps)
    lorrOptions.flowCostWeight = 4;
    if (a.heat < 0) lorrOptions.heatWeight = 128;
    // and head-on traffic in them: two-way stretches sort into lanes, fewer bots stall (issue
    // 23, sixth round: 31.4 -> 32.4 errands/step over three seeds at 5,000 steps with 255,
    // 32.6 / 33.1 on two seeds with 510)
    if (a.contraflow < 0) lorrOptions.contraflowWeight = 510;
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
  auto reveal = [&]() {
    Task t;
    t.serial = revealed;
    t.line = static_cast<size_t>(revealed % taskCount);
    const auto& e = inst.tasks[t.line];
    t.length = 0;
    for (size_t k = 1; k < e.size(); ++k) t.length += manhattan(grid, e[k - 1], e[k]);
    ++revealed;
    tasks.push_back(t);
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
        Task nt;
        nt.serial = revealed;
        nt.line = static_cast<size_t>(revealed % taskCount);
        const auto& ne = inst.tasks[nt.line];
        nt.length = 0;
        for (size_t k = 1; k < ne.size(); ++k) nt.length += manhattan(grid, ne[k - 1], ne[k]);
        ++revealed;
        tasks[slot] = nt;
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

// ---- random instances: a random map and goal stream, with pauses, faults, resyncs, bots
// added and removed and cells barred and freed when --chaos is on ----

int runRandom(const Args& a) {
  Rng rng{a.seed * 0x2545F4914F6CDD1DULL + 7};
  Grid grid;
  grid.width = a.width;
  grid.height = a.height;
  grid.flags.assign(static_cast<size_t>(a.width) * static_cast<size_t>(a.height), 0);
  std::vector<Cell> freeCells;
  for (size_t c = 0; c < grid.flags.size(); ++c) {
    if (rng.unit() < a.obstacles) grid.flags[c] = kBlocked;
    else {
      if (rng.unit() < a.barred) grid.flags[c] = kBarredLoaded;
      freeCells.push_back(static_cast<Cell>(c));
    }
  }
  if (freeCells.size() < a.bots + 1) return std::fprintf(stderr, "too few free cells for %zu bots\n", a.bots), 1;
  Options o = optionsFrom(a, a.rotations, false);
  Harness h(grid, o, a.validate, a.stepLimitMs);
  const int64_t steps = a.steps > 0 ? a.steps : 300;
  struct Info {
    bool present = false, paused = false, stuck = false;
    Goal goal;
    bool hasGoal = false;
  };
  std::vector<Info> info;
  auto occupied = [&](Cell c) {
    for (size_t i = 0; i < info.size(); ++i) {
      if (!info[i].present) continue;
      const State* s = h.planner.planned(static_cast<BotId>(i));
      if (s->cell == c) return true;
    }
    // a bot part way into c (multi-step forward) also holds it
    if (h.last) {
      for (const BotStep& b : h.last->bots) {
        if (b.endStep > h.planner.now() && b.to.cell == c) return true;
      }
    }
    return false;
  };
  auto newGoal = [&](size_t i) {
    const State* s = h.planner.planned(static_cast<BotId>(i));
    Goal g;
    g.cell = freeCells[rng.below(freeCells.size())];
    if (a.rotations && rng.below(2)) g.heading = static_cast<Heading>(rng.below(4));
    const uint64_t act = rng.below(3);
    if (act == 1) g.act = s->lifted ? GoalAct::Lower : GoalAct::Lift;
    h.planner.setGoal(static_cast<BotId>(i), g);
    info[i].goal = g;
    info[i].hasGoal = true;
  };
  auto addBot = [&]() {
    for (int tries = 0; tries < 20; ++tries) {
      const Cell c = freeCells[rng.below(freeCells.size())];
      if (occupied(c)) continue;
      const size_t id = info.size();
      info.emplace_back();
      State s{c, static_cast<Heading>(rng.below(4)), false};
      h.add(static_cast<BotId>(id), s);
      info[id].present = true;
      newGoal(id);
      return;
    }
  };
  for (size_t i = 0; i < a.bots; ++i) addBot();
  uint64_t reached = 0, unreachable = 0, chaosEvents = 0;
  auto pick = [&]() -> int64_t {
    for (int tries = 0; tries < 10; ++tries) {
      const size_t i = rng.below(info.size());
      if (info[i].present) return static_cast<int64_t>(i);
    }
    return -1;
  };
  for (int64_t s = 0; s < steps; ++s) {
    if (a.chaos) {
      const double roll = rng.unit();
      const int64_t i = pick();
      if (i >= 0) {
        const BotId id = static_cast<BotId>(i);
        Info& in = info[static_cast<size_t>(i)];
        ++chaosEvents;
        if (roll < 0.03) {
          in.paused = !in.paused;
          h.planner.setPaused(id, in.paused);
          if (h.validate) h.validator.setFrozen(id, in.paused || in.stuck);
        } else if (roll < 0.05) {
          in.stuck = !in.stuck;
          h.planner.setStuck(id, in.stuck);
          if (h.validate) h.validator.setFrozen(id, in.paused || in.stuck);
        } else if (roll < 0.08) {
          // telemetry: the bot is where planned but faces elsewhere (a turn was lost)
          State st = *h.planner.planned(id);
          st.heading = static_cast<Heading>(rng.below(4));
          h.planner.resync(id, st);
          if (h.validate) h.validator.teleport(id, st);
        } else if (roll < 0.10) {
          newGoal(static_cast<size_t>(i));
        } else if (roll < 0.11) {
          h.planner.cancelGoal(id);
          in.hasGoal = false;
        } else if (roll < 0.12) {
          h.planner.removeBot(id);
          if (h.validate) h.validator.removeBot(id);
          in.present = false;
        } else if (roll < 0.13) {
          addBot();
        } else if (roll < 0.15) {
          const Cell c = freeCells[rng.below(freeCells.size())];
          const uint8_t f = static_cast<uint8_t>(grid.flags[static_cast<size_t>(c)] ^ kBarredLoaded);
          grid.flags[static_cast<size_t>(c)] = f;
          h.planner.setCellFlags(c, f);
          if (h.validate) h.validator.setCellFlags(c, f);
        } else {
          --chaosEvents;
        }
      }
    }
    const StepResult& r = h.step();
    for (const Event& e : r.events) {
      const size_t i = static_cast<size_t>(e.bot);
      if (e.kind == EventKind::GoalReached) {
        ++reached;
        const Goal& g = info[i].goal;
        if (h.validate) {
          std::optional<bool> lifted;
          if (g.act == GoalAct::Lift) lifted = true;
          if (g.act == GoalAct::Lower) lifted = false;
          h.validator.claimGoal(e.bot, g.cell, a.rotations ? g.heading : std::nullopt, lifted);
        }
        newGoal(i);
      } else if (e.kind == EventKind::GoalUnreachable) {
        ++unreachable;
        newGoal(i);
      }
    }
    // idle bots (goal cancelled) get a new goal now and then
    for (size_t i = 0; i < info.size(); ++i) {
      if (info[i].present && !h.planner.goal(static_cast<BotId>(i)) && rng.below(8) == 0) newGoal(i);
    }
  }
  std::printf("{\"mode\":\"random\",\"seed\":%llu,\"width\":%d,\"height\":%d,\"bots\":%zu,\"steps\":%lld,\"durations\":[%d,%d,%d,%d],"
              "\"rotations\":%s,\"forbidCycles\":%s,\"chaos\":%s,\"chaosEvents\":%llu,\"goalsReached\":%llu,\"goalsUnreachable\":%llu,%s}\n",
              static_cast<unsigned long long>(a.seed), a.width, a.height, h.planner.botCount(), static_cast<long long>(steps),
              a.durations.forward, a.durations.turn, a.durations.lift, a.durations.lower, a.rotations ? "true" : "false",
              a.forbidCycles ? "true" : "false", a.chaos ? "true" : "false", static_cast<unsigned long long>(chaosEvents),
              static_cast<unsigned long long>(reached), static_cast<unsigned long long>(unreachable), h.common().c_str());
  return h.validate && h.validator.violationCount() ? 3 : 0;
}

// ---- a hand-written plan, for the validator's own tests ----
//   grid W H            then H rows: '.' free, '#' blocked, 'B' barred when loaded
//   durations F T L O   (optional, default 1 1 1 1)
//   option no-rotations | forbid-cycles
//   add ID CELL HEADING LIFTED      HEADING E S W N, LIFTED 0 1
//   freeze ID 0|1 / teleport ID CELL HEADING LIFTED / remove ID
//   step ID ACTION CELL HEADING LIFTED [; ID ACTION ...]   ACTION F R L W U(lift) D(lower);
//        the state is the one after the step
//   claim ID CELL
int runCheckPlan(const Args& a) {
  FILE* f = std::fopen(a.plan.c_str(), "r");
  if (!f) return std::fprintf(stderr, "cannot open %s\n", a.plan.c_str()), 1;
  std::vector<std::string> ls;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, f)) {
    std::string l(buf);
    while (!l.empty() && (l.back() == '\n' || l.back() == '\r')) l.pop_back();
    ls.push_back(l);
  }
  std::fclose(f);
  Grid grid;
  ValidatorOptions vo;
  size_t i = 0;
  auto fail = [&](const std::string& why) {
    std::fprintf(stderr, "%s:%zu: %s\n", a.plan.c_str(), i + 1, why.c_str());
    return 2;
  };
  auto heading = [](const char* s) -> int {
    switch (s[0]) {
      case 'E': return 0;
      case 'S': return 1;
      case 'W': return 2;
      case 'N': return 3;
    }
    return -1;
  };
  std::vector<std::string> setup;  // lines after the grid, replayed once the validator exists
  for (; i < ls.size(); ++i) {
    const std::string& l = ls[i];
    if (l.rfind("grid", 0) == 0) {
      if (std::sscanf(l.c_str(), "grid %d %d", &grid.width, &grid.height) != 2 || grid.width <= 0 || grid.height <= 0) return fail("bad grid line");
      grid.flags.assign(static_cast<size_t>(grid.width) * static_cast<size_t>(grid.height), 0);
      for (int32_t r = 0; r < grid.height; ++r) {
        if (++i >= ls.size() || static_cast<int32_t>(ls[i].size()) < grid.width) return fail("short grid row");
        for (int32_t c = 0; c < grid.width; ++c) {
          const char ch = ls[i][static_cast<size_t>(c)];
          grid.flags[static_cast<size_t>(r * grid.width + c)] = ch == '#' ? kBlocked : ch == 'B' ? kBarredLoaded : 0;
        }
      }
    } else if (l.rfind("durations", 0) == 0) {
      int d[4];
      if (std::sscanf(l.c_str(), "durations %d %d %d %d", &d[0], &d[1], &d[2], &d[3]) != 4) return fail("bad durations");
      vo.durations = Durations{static_cast<uint16_t>(d[0]), static_cast<uint16_t>(d[1]), static_cast<uint16_t>(d[2]), static_cast<uint16_t>(d[3])};
    } else if (l == "option no-rotations") {
      vo.rotations = false;
    } else if (l == "option forbid-cycles") {
      vo.forbidCycles = true;
    } else if (!l.empty() && l[0] != '#') {
      setup.push_back(l);
    }
  }
  if (grid.width == 0) return fail("no grid");
  Validator v(grid, vo);
  int64_t claims = 0;
  for (const std::string& l : setup) {
    char kind[16] = {0};
    std::sscanf(l.c_str(), "%15s", kind);
    const std::string k = kind;
    int id = 0, cell = 0, lifted = 0, flag = 0;
    char h[4] = {0};
    if (k == "add" || k == "teleport") {
      if (std::sscanf(l.c_str(), "%*s %d %d %3s %d", &id, &cell, h, &lifted) != 4 || heading(h) < 0) return fail("bad " + k);
      const State s{cell, static_cast<Heading>(heading(h)), lifted != 0};
      if (k == "add") v.addBot(id, s);
      else v.teleport(id, s);
    } else if (k == "freeze") {
      if (std::sscanf(l.c_str(), "freeze %d %d", &id, &flag) != 2) return fail("bad freeze");
      v.setFrozen(id, flag != 0);
    } else if (k == "remove") {
      if (std::sscanf(l.c_str(), "remove %d", &id) != 1) return fail("bad remove");
      v.removeBot(id);
    } else if (k == "claim") {
      if (std::sscanf(l.c_str(), "claim %d %d", &id, &cell) != 2) return fail("bad claim");
      v.claimGoal(id, cell);
      ++claims;
    } else if (k == "step") {
      std::vector<Record> recs;
      size_t p = 4;
      while (p < l.size()) {
        size_t e = l.find(';', p);
        if (e == std::string::npos) e = l.size();
        const std::string part = l.substr(p, e - p);
        p = e + 1;
        char act[4] = {0};
        if (std::sscanf(part.c_str(), "%d %3s %d %3s %d", &id, act, &cell, h, &lifted) != 5 || heading(h) < 0) return fail("bad step record: " + part);
        Action ac;
        switch (act[0]) {
          case 'F': ac = Action::Forward; break;
          case 'R': ac = Action::TurnRight; break;
          case 'L': ac = Action::TurnLeft; break;
          case 'W': ac = Action::Wait; break;
          case 'U': ac = Action::Lift; break;
          case 'D': ac = Action::Lower; break;
          default: return fail(std::string("unknown action ") + act);
        }
        recs.push_back(Record{id, ac, State{cell, static_cast<Heading>(heading(h)), lifted != 0}});
      }
      v.step(recs);
    } else {
      return fail("unknown line: " + l);
    }
  }
  std::string first = "[";
  for (size_t k = 0; k < v.violations().size(); ++k) {
    const Violation& x = v.violations()[k];
    if (k) first += ",";
    first += "{\"step\":" + std::to_string(x.step) + ",\"bot\":" + std::to_string(x.bot) + ",\"other\":" + std::to_string(x.other) +
             ",\"rule\":" + jsonString(ruleName(x.rule)) + ",\"cell\":" + std::to_string(x.cell) + ",\"detail\":" + jsonString(x.detail) + "}";
  }
  std::printf("{\"mode\":\"check-plan\",\"steps\":%lld,\"claims\":%lld,\"violations\":%llu,\"list\":%s]}\n",
              static_cast<long long>(v.now()), static_cast<long long>(claims), static_cast<unsigned long long>(v.violationCount()), first.c_str());
  return v.violationCount() ? 3 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (!parse(argc, argv, a)) return 2;
  if (!a.plan.empty()) return runCheckPlan(a);
  if (a.random) return runRandom(a);
  if (!a.instance.empty()) return runLorr(a);
  if (!a.map.empty() && !a.scen.empty()) return runOneShot(a);
  std::fputs(kUsage, stderr);
  return 2;
}
