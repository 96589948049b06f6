// planner-cli, random mode (--random), for tests and property runs: a random map and goal stream,
// with pauses, faults, resyncs, bots added and removed and cells barred and freed when --chaos
// is on.
#include <cstdint>
#include <cstdio>
#include <optional>
#include <vector>

#include "../planner.h"
#include "../rng.h"
#include "args.h"
#include "harness.h"
#include "modes.h"

namespace wh::planner::cli {

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

}  // namespace wh::planner::cli
