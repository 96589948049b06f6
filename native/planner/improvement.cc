// Improving a step's first answer: see improvement.h.
#include "improvement.h"

#include <chrono>
#include <cstdint>
#include <vector>

#include "pibt.h"
#include "planner_state.h"

namespace wh::planner {

namespace {

/** Cost to go of bot b from (cell, heading), plus one while its goal's lift or lower is due. */
uint32_t toGo(const PlannerState& s, const BotData& b, Cell c, Heading h, bool actDue) {
  const uint32_t d = costFrom(s, b, c, h);
  return d >= kInf ? kInf : d + (actDue ? 1u : 0u);
}

/** How much closer the plan just decided brings bot i (negative: farther; 0 without a goal). */
int64_t progressOf(const PlannerState& s, int32_t i) {
  const BotData& b = s.bots[static_cast<size_t>(i)];
  const uint32_t now = s.improve.costNow[static_cast<size_t>(i)];
  if (!b.hasGoal || now >= kInf || b.running) return 0;
  const bool acts = b.next == Action::Lift || b.next == Action::Lower;
  const uint32_t after = toGo(s, b, b.nextCell, b.nextHeading, goalActPending(b) && !acts);
  return after >= kInf ? 0 : static_cast<int64_t>(now) - static_cast<int64_t>(after);
}

int64_t planProgress(const PlannerState& s) {
  int64_t sum = 0;
  for (int32_t i : s.order) sum += progressOf(s, i);
  return sum;
}

void saveDecisions(const PlannerState& s, std::vector<Decision>& into) {
  into.resize(s.bots.size());
  for (size_t i = 0; i < s.bots.size(); ++i) {
    const BotData& b = s.bots[i];
    into[i] = Decision{b.decided, b.next, b.nextCell, b.nextHeading};
  }
}

void loadDecisions(PlannerState& s, const std::vector<Decision>& from) {
  for (size_t i = 0; i < s.bots.size(); ++i) {
    BotData& b = s.bots[i];
    b.decided = from[i].decided;
    b.next = from[i].next;
    b.nextCell = from[i].cell;
    b.nextHeading = from[i].heading;
  }
}

/** Back to the state markBeforePibt() saw, for another pass. */
void backToBeforePibt(PlannerState& s) {
  for (Cell c : s.touchedNext) s.resNext[static_cast<size_t>(c)] = kNone;
  s.touchedNext.resize(s.improve.resBefore.size());
  for (size_t k = 0; k < s.improve.resBefore.size(); ++k) s.resNext[static_cast<size_t>(s.touchedNext[k])] = s.improve.resBefore[k];
  loadDecisions(s, s.improve.before);
}

}  // namespace

/** Remembers the state before the PIBT pass: the decided bots and the reservations. */
void markBeforePibt(PlannerState& s) {
  saveDecisions(s, s.improve.before);
  s.improve.resBefore.resize(s.touchedNext.size());
  for (size_t k = 0; k < s.touchedNext.size(); ++k) s.improve.resBefore[k] = s.resNext[static_cast<size_t>(s.touchedNext[k])];
}

/**
 * Spends up to `improvePasses` more PIBT passes, until `end`, on beating the first answer
 * (already decided and finalized): each pass moves a random half of the bots that made no
 * progress in the best plan so far ahead of the others (the rest keep their order), and the
 * plan with the largest total progress wins. Every pass is a complete PIBT pass, so every
 * candidate plan keeps the movement rules; only the choice between them is new.
 */
void improve(PlannerState& s, Clock::time_point end) {
  s.improve.costNow.resize(s.bots.size());
  for (int32_t i : s.order) {
    const BotData& b = s.bots[static_cast<size_t>(i)];
    s.improve.costNow[static_cast<size_t>(i)] = b.hasGoal && !b.running ? toGo(s, b, b.state.cell, b.state.heading, goalActPending(b)) : kInf;
  }
  int64_t best = planProgress(s);
  saveDecisions(s, s.improve.best);
  const uint64_t pushes = s.counters.pushes;
  bool won = false;
  auto passStart = Clock::now();
  for (uint32_t pass = 0; pass < s.opt.improvePasses; ++pass) {
    // the next pass would take about as long as the last one: stop if it would end after `end`
    const auto now = Clock::now();
    if (now + (pass == 0 ? std::chrono::nanoseconds(s.lastPibtNanos) : now - passStart) > end) break;
    passStart = now;
    // the order: a random half of the bots that did not get closer in the best plan, first
    s.improve.passOrder.clear();
    s.improve.promoted.assign(s.bots.size(), 0);
    for (int32_t i : s.order) {
      const Decision& d = s.improve.best[static_cast<size_t>(i)];
      const BotData& b = s.bots[static_cast<size_t>(i)];
      if (s.improve.before[static_cast<size_t>(i)].decided || !b.hasGoal) continue;
      const bool moved = d.cell != b.state.cell || d.heading != b.state.heading || d.next == Action::Lift || d.next == Action::Lower;
      if (!moved && (s.rng.next() & 1)) {
        s.improve.passOrder.push_back(i);
        s.improve.promoted[static_cast<size_t>(i)] = 1;
      }
    }
    if (s.improve.passOrder.empty()) break;  // everyone moves already
    for (int32_t i : s.order) {
      if (!s.improve.promoted[static_cast<size_t>(i)] && !s.improve.before[static_cast<size_t>(i)].decided) s.improve.passOrder.push_back(i);
    }
    backToBeforePibt(s);
    for (int32_t i : s.improve.passOrder) {
      if (!s.bots[static_cast<size_t>(i)].decided) pibt(s, i, kNone);
    }
    finalize(s);
    ++s.counters.improvePasses;
    const int64_t p = planProgress(s);
    if (p > best) {
      best = p;
      saveDecisions(s, s.improve.best);
      won = true;
    }
  }
  s.counters.pushes = pushes;
  if (won) ++s.counters.improveWins;
  loadDecisions(s, s.improve.best);
}

}  // namespace wh::planner
