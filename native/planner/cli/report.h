// What planner-cli measures and how it prints it: wall and CPU time, peak memory, the pieces of
// its one JSON line, and the published figures of the benchmark instances.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace wh::planner::cli {

double msSince(std::chrono::steady_clock::time_point t);

/** CPU time of this process (user + system): steadier than wall time when the machine is shared. */
double cpuSeconds();

/** The process's peak resident memory (VmHWM), -1 when unknown. */
long peakMemoryKb();

/** `s` as a JSON string, quotes included (control characters become spaces). */
std::string jsonString(const std::string& s);

/** `v` with `digits` decimals. */
std::string num(double v, int digits = 3);

/** {"p50", "p99", "max", "mean"} of the values. */
std::string percentileJson(const std::vector<double>& v);

/** Published figures for the instance file `name` (JSON), "null" for an unknown one. */
std::string publishedFor(const std::string& name);

}  // namespace wh::planner::cli
