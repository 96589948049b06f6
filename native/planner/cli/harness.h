// One planner-cli run of the lifelong planner: the planner and the validator in step, each
// step's planning time and a checksum of every action, and their JSON for the output line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../model.h"
#include "../planner.h"
#include "../validator.h"

namespace wh::planner::cli {

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

  /** Adds a bot to both; exits the process when the planner refuses it. */
  void add(BotId id, const State& s);
  void mix(uint64_t v);
  /** Plans a step within the step limit less `usedMs`, replays it in the validator. */
  const StepResult& step(double usedMs = 0);
  std::string countersJson() const;
  std::string validatorJson() const;
  /** The fields every lifelong run prints: planMs, peakMemoryMB, cpuS, validator, counters, checksum. */
  std::string common() const;
};

/** The level as text into `path` (nothing when empty); see harness.cc. */
void writeAscii(const std::string& path, const Grid& g, const Planner& p, BotId maxId);

}  // namespace wh::planner::cli
