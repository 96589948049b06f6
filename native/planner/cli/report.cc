// What planner-cli measures and how it prints it: see report.h.
#include "report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <sys/resource.h>

namespace wh::planner::cli {

namespace {

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

}  // namespace

double msSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

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

std::string num(double v, int digits) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

std::string percentileJson(const std::vector<double>& v) {
  const Percentiles p = percentiles(v);
  return "{\"p50\":" + num(p.p50) + ",\"p99\":" + num(p.p99) + ",\"max\":" + num(p.max) + ",\"mean\":" + num(p.mean) + "}";
}

// The instances of ../shared/bench/mapf (README there).
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

}  // namespace wh::planner::cli
