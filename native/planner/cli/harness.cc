// One planner-cli run of the lifelong planner: see harness.h.
#include "harness.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "report.h"

namespace wh::planner::cli {

void Harness::add(BotId id, const State& s) {
  if (!planner.addBot(id, s)) {
    std::fprintf(stderr, "planner refused bot %d at %d\n", id, s.cell);
    std::exit(1);
  }
  if (validate) validator.addBot(id, s);
}

void Harness::mix(uint64_t v) {
  checksum ^= v;
  checksum *= 1099511628211ULL;
}

const StepResult& Harness::step(double usedMs) {
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

std::string Harness::countersJson() const {
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

std::string Harness::validatorJson() const {
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

std::string Harness::common() const {
  char cs[32];
  std::snprintf(cs, sizeof cs, "%016llx", static_cast<unsigned long long>(checksum));
  return "\"planMs\":" + percentileJson(planMs) + ",\"peakMemoryMB\":" + num(static_cast<double>(peakMemoryKb()) / 1024.0, 1) +
         ",\"cpuS\":" + num(cpuSeconds(), 1) + ",\"validator\":" + validatorJson() + ",\"counters\":" + countersJson() + ",\"checksum\":\"" + cs + "\"";
}

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

}  // namespace wh::planner::cli
