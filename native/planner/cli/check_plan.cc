// planner-cli, check-plan mode (--check-plan FILE): only the validator, on a hand-written plan,
// for the validator's own tests.
#include <cstdio>
#include <string>
#include <vector>

#include "../validator.h"
#include "args.h"
#include "modes.h"
#include "report.h"

namespace wh::planner::cli {

// The plan file, a line each:
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

}  // namespace wh::planner::cli
