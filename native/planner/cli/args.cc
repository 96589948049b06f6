// planner-cli's command line: see args.h.
#include "args.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace wh::planner::cli {

namespace {

bool parseDurations(const char* s, Durations& d) {
  int f, t, l, o;
  if (std::sscanf(s, "%d,%d,%d,%d", &f, &t, &l, &o) != 4 || f < 1 || t < 1 || l < 1 || o < 1) return false;
  d.forward = static_cast<uint16_t>(f);
  d.turn = static_cast<uint16_t>(t);
  d.lift = static_cast<uint16_t>(l);
  d.lower = static_cast<uint16_t>(o);
  return true;
}

}  // namespace

const char* const kUsage =
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
    "  --improve-passes N   improvement per step: up to N more PIBT passes, the plan with most progress wins;\n"
    "                       with operations, N rounds of large-neighbourhood search (0 off; LoRR 2023 crowds 8)\n"
    "  --improve-ms X       time for those passes per step (default 0: until the deadline's reserve)\n"
    "  --operation-depth N  each bot chooses a sequence of N actions, not a neighbour (1..4; 0 off, one-step PIBT;\n"
    "                       LoRR 2023 crowds 3; used where every action takes one step and rings are allowed)\n"
    "  --operation-revisits N  with operations: times a bot in the way chooses again per step (default 2)\n"
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
    else if (k == "--improve-passes") a.improvePasses = std::atoi(val());
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
    else if (k == "--operation-depth") a.operationDepth = std::atoi(val());
    else if (k == "--operation-revisits") a.operationRevisits = std::atoi(val());
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

Options optionsFrom(const Args& a, bool rotations, bool guidanceByDefault) {
  Options o;
  o.durations = a.durations;
  o.rotations = rotations;
  o.forbidCycles = a.forbidCycles;
  o.heuristicMemoryBytes = a.memoryMb << 20;
  o.stallSteps = a.stallSteps;
  o.escapeBots = a.escapeBots;
  o.improvePasses = static_cast<uint32_t>(std::max(a.improvePasses, 0));
  o.improveBudget = std::chrono::nanoseconds(static_cast<int64_t>(a.improveMs * 1e6));
  o.seed = a.seed;
  o.operationDepth = static_cast<uint8_t>(std::clamp(std::max(a.operationDepth, 0), 0, 4));
  o.operationRevisits = static_cast<uint8_t>(std::clamp(a.operationRevisits, 1, 255));
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

}  // namespace wh::planner::cli
