// planner-cli's command line: the options of every mode, their parsing and the planner Options
// they make. Usage and output fields: docs/planner.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "../model.h"
#include "../planner.h"

namespace wh::planner::cli {

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
  int improvePasses = -1;      // improvement passes per step (0 off; -1 mode default: LoRR 2023 crowds with operations 8, else 0)
  double improveMs = 0;        // their time per step (0: until the deadline's reserve)
  int operationDepth = -1;     // multi-action operations of this many actions (0: one-step PIBT; -1 mode default: LoRR 2023 crowds 3, else 0)
  int operationRevisits = 2;   // times a bot in the way chooses again per step
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

extern const char* const kUsage;

/** Reads the command line into `a`; false (with a message on stderr) when it is wrong. --help
 *  prints the usage and exits. */
bool parse(int argc, char** argv, Args& a);

/** The planner's options from the command line; LoRR runs turn corridor guidance and lanes on
 *  unless told otherwise (`guidanceByDefault`). */
Options optionsFrom(const Args& a, bool rotations, bool guidanceByDefault);

}  // namespace wh::planner::cli
