// Each bot's progress after a step: see progress.h.
#include "progress.h"

#include <cstdint>

#include "flow_weights.h"
#include "planner_state.h"

namespace wh::planner {

void updateProgress(PlannerState& s) {
  for (BotData& b : s.bots) {
    if (!b.present) continue;
    if (!b.hasGoal) {
      b.elapsed = 0;
      continue;
    }
    if (b.running) {  // mid-action: judged when it completes
      ++b.elapsed;
      continue;
    }
    if (goalSatisfied(s, b)) {
      if (!b.atGoal) {
        ++s.counters.goalsReached;
        emit(s, EventKind::GoalReached, b, s.now);
      }
      if (b.stalled) {
        b.stalled = false;
        ++s.counters.stallsBroken;
        emit(s, EventKind::Unstalled, b, s.now);
      }
      b.elapsed = 0;
      if (b.goal.keep) {
        b.atGoal = true;
        b.bestDist = 0;
        b.bestStep = s.now;
      } else {
        b.hasGoal = false;
        dropTable(s, b);
        resetProgress(s, b);
      }
      continue;
    }
    b.atGoal = false;
    ++b.elapsed;
    uint32_t d = costFrom(s, b, b.state.cell, b.state.heading) + (goalActPending(b) ? 1u : 0u);
    if (d >= kInf && b.table >= 0 && s.tables.stale(b.table)) {
      // A stale table is a heuristic, never a rule: searched while a cell on the way (the goal
      // itself, a buffer whose carrier has since left) was barred, it would tell a loaded bot
      // there is no way where there now is one. One search now, only for a bot about to be told.
      s.tables.searchNow(b.table);
      d = costFrom(s, b, b.state.cell, b.state.heading) + (goalActPending(b) ? 1u : 0u);
    }
    if (flowCosts(s.opt) && b.table >= 0 && s.tables.version(b.table) != b.tableVersion) {
      // the table was searched again with new costs: its distances are not comparable with
      // the best so far, which would make a bot look stalled; the stall clock runs on
      b.tableVersion = s.tables.version(b.table);
      b.bestDist = d;
    }
    if (d >= kInf && b.table >= 0) {
      if (!b.unreachableReported) {
        b.unreachableReported = true;
        emit(s, EventKind::GoalUnreachable, b, s.now);
      }
      b.bestStep = s.now;  // not a stall: there is no way
      continue;
    }
    if (d < b.bestDist) {
      b.bestDist = d;
      b.bestStep = s.now;
      if (b.stalled) {
        b.stalled = false;
        ++s.counters.stallsBroken;
        emit(s, EventKind::Unstalled, b, s.now);
      }
    } else if (!b.stalled && !frozen(b) && s.now - b.bestStep >= static_cast<int64_t>(s.opt.stallSteps)) {
      b.stalled = true;
      b.tie = s.rng.unit();
      ++s.counters.stallsDetected;
      emit(s, EventKind::Stalled, b, s.now);
    }
  }
}

}  // namespace wh::planner
