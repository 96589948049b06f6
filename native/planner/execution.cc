// The action dependency graph between the planner and the bots: see execution.h.
#include "execution.h"

#include <algorithm>
#include <limits>

namespace wh::planner {

const char* refusalName(Refusal r) {
  switch (r) {
    case Refusal::None: return "none";
    case Refusal::UnknownBot: return "unknown_bot";
    case Refusal::BotExists: return "bot_exists";
    case Refusal::CellBlocked: return "cell_blocked";
    case Refusal::CellTaken: return "cell_taken";
  }
  return "?";
}

Execution::Execution(Planner& planner, const ExecutionOptions& options, Validator* validator)
    : planner_(planner), opt_(options), validator_(validator) {
  opt_.window = std::max(1, opt_.window);
  opt_.maxReleased = std::max(1, opt_.maxReleased);
  const Grid& g = planner.grid();
  lastExit_.assign(static_cast<size_t>(g.width) * static_cast<size_t>(g.height), Ref{});
  last_ = &empty_;
}

Execution::Bot* Execution::find(BotId id) {
  auto it = bots_.find(id);
  return it == bots_.end() ? nullptr : &it->second;
}

bool Execution::done(BotId bot, uint64_t seq) const {
  auto it = bots_.find(bot);
  if (it == bots_.end()) return true;  // gone: its unexecuted actions were dropped with their dependents
  const std::deque<Node>& q = it->second.queue;
  return q.empty() || q.front().seq > seq;  // a bot confirms its actions in order
}

State Execution::keptState(const Bot& b) const { return b.queue.empty() ? b.confirmed : b.queue.back().to; }

uint8_t Execution::flagsOf(Cell cell) const {
  auto it = heldFlags_.find(cell);
  if (it != heldFlags_.end()) return it->second;
  it = underFlags_.find(cell);
  return it != underFlags_.end() ? it->second : planner_.grid().flags[static_cast<size_t>(cell)];
}

void Execution::resync(BotId id, const State& s) {
  Bot* b = find(id);
  if (b) clearUnder(*b);
  planner_.resync(id, s);
  if (validator_) validator_->teleport(id, s);
  if (b) syncUnder(*b);
}

void Execution::setFrozen(Bot& b) {
  planner_.setPaused(b.id, b.paused || b.holding);
  planner_.setStuck(b.id, b.stuck);
  if (validator_) validator_->setFrozen(b.id, b.paused || b.holding || b.stuck);
  syncUnder(b);
}

void Execution::syncUnder(Bot& b) {
  const State* p = planner_.planned(b.id);
  const Cell want = (b.paused || b.holding || b.stuck) && p ? p->cell : kNoCell;
  if (want == b.under) return;
  clearUnder(b);
  if (want == kNoCell || heldFlags_.count(want) || underFlags_.count(want)) return;
  const uint8_t f = planner_.grid().flags[static_cast<size_t>(want)];
  underFlags_[want] = f;
  plannerFlags(want, f | kBlocked);
  b.under = want;
  counters_.frozenCells = underFlags_.size();
}

void Execution::clearUnder(Bot& b) {
  if (b.under == kNoCell) return;
  auto it = underFlags_.find(b.under);
  if (it != underFlags_.end()) {
    const uint8_t f = it->second;
    underFlags_.erase(it);
    plannerFlags(b.under, f);
  }
  b.under = kNoCell;
  counters_.frozenCells = underFlags_.size();
}

void Execution::plannerFlags(Cell cell, uint8_t flags) {
  planner_.setCellFlags(cell, flags);
  if (validator_) validator_->setCellFlags(cell, flags);
}

size_t Execution::queued() const {
  size_t n = 0;
  for (const auto& [id, b] : bots_) n += b.queue.size();
  return n;
}

// ---- dropping and the cascade ----

void Execution::truncate(const std::vector<Ref>& roots) {
  if (roots.empty()) return;
  // who waits on which action (released actions wait on nothing: their dependencies are done)
  std::unordered_map<uint64_t, std::vector<Ref>> waiting;
  for (const auto& [id, b] : bots_) {
    for (const Node& n : b.queue) {
      if (n.depSeq != 0) waiting[n.depSeq].push_back(Ref{id, n.seq});
    }
  }
  std::unordered_map<BotId, uint64_t> from;  // bot -> first dropped action
  std::vector<Ref> work(roots);
  while (!work.empty()) {
    const Ref r = work.back();
    work.pop_back();
    auto bit = bots_.find(r.bot);
    if (bit == bots_.end()) continue;
    auto fit = from.emplace(r.bot, std::numeric_limits<uint64_t>::max()).first;
    const uint64_t before = fit->second;
    if (r.seq >= before) continue;
    fit->second = r.seq;
    for (const Node& n : bit->second.queue) {
      if (n.seq < r.seq || n.seq >= before) continue;
      auto w = waiting.find(n.seq);
      if (w == waiting.end()) continue;
      for (const Ref& d : w->second) work.push_back(d);
    }
  }
  struct Moved {
    Bot* bot;
    State kept;
    uint32_t count;
    bool goalLost;
  };
  std::vector<Moved> moved;
  for (const auto& [id, seq] : from) {
    Bot* b = find(id);
    if (!b) continue;
    size_t keep = 0;
    while (keep < b->queue.size() && b->queue[keep].seq < seq) ++keep;
    const size_t count = b->queue.size() - keep;
    if (count == 0) continue;
    bool goalLost = false;
    if (b->reachedInPlan) {
      for (size_t i = keep; i < b->queue.size(); ++i) goalLost = goalLost || b->queue[i].start < b->reachedAt;
    }
    b->queue.erase(b->queue.begin() + static_cast<std::ptrdiff_t>(keep), b->queue.end());
    b->released = std::min(b->released, keep);
    counters_.dropped += count;
    moved.push_back(Moved{b, keptState(*b), static_cast<uint32_t>(count), goalLost});
  }
  if (moved.empty()) return;
  // Every bot that lost actions goes back to what it keeps. Only the end state is free of
  // conflicts (a bot may go back into a cell another one is still planned in until that one
  // goes back too), so all are taken off first and then put back.
  for (Moved& m : moved) {
    clearUnder(*m.bot);
    if (validator_) validator_->removeBot(m.bot->id);
  }
  for (Moved& m : moved) {
    planner_.resync(m.bot->id, m.kept);
    if (validator_) {
      validator_->addBot(m.bot->id, m.kept);
      validator_->setFrozen(m.bot->id, m.bot->paused || m.bot->holding || m.bot->stuck);
    }
  }
  for (Moved& m : moved) {
    Bot* b = m.bot;
    if (m.goalLost) {
      // the way to the goal was dropped: the planner has to reach it again
      b->reachedInPlan = false;
      if (b->goal) planner_.setGoal(b->id, *b->goal);
      if (b->holding) {
        b->holding = false;
        setFrozen(*b);
      }
    }
    syncUnder(*b);
    ExecEvent e;
    e.kind = ExecEventKind::Replanned;
    e.bot = b->id;
    e.cell = m.kept.cell;
    e.step = planner_.now();
    e.count = m.count;
    e.state = m.kept;
    events_.push_back(e);
  }
  ++counters_.truncations;
  rebuildExits();
}

void Execution::dropUnreleased(Bot& b) {
  if (b.released < b.queue.size()) truncate({Ref{b.id, b.queue[b.released].seq}});
}

void Execution::rebuildExits() {
  for (Cell c : exitCells_) lastExit_[static_cast<size_t>(c)] = Ref{};
  exitCells_.clear();
  for (const auto& [id, b] : bots_) {
    for (const Node& n : b.queue) {
      if (n.action != Action::Forward) continue;
      Ref& e = lastExit_[static_cast<size_t>(n.from.cell)];
      if (e.seq == 0) exitCells_.push_back(n.from.cell);
      if (n.seq > e.seq) e = Ref{id, n.seq};
    }
  }
}

// ---- where bots physically may be ----

bool Execution::takenByOther(Cell cell, BotId self) const {
  if (heldFlags_.count(cell)) return true;
  for (const auto& [id, b] : bots_) {
    if (id == self) continue;
    if (b.confirmed.cell == cell) return true;
    for (size_t i = 0; i < b.released; ++i) {
      if (b.queue[i].to.cell == cell) return true;
    }
  }
  return false;
}

void Execution::clearEntries(Cell cell, BotId self) {
  std::vector<Ref> roots;
  for (const auto& [id, b] : bots_) {
    if (id == self) continue;
    for (size_t i = b.released; i < b.queue.size(); ++i) {
      const Node& n = b.queue[i];
      if (n.action == Action::Forward && n.to.cell == cell) {
        roots.push_back(Ref{id, n.seq});
        break;
      }
    }
  }
  truncate(roots);
}

void Execution::hold(Bot& b, Cell cell) {
  if (heldFlags_.count(cell)) return;
  const uint8_t f = planner_.grid().flags[static_cast<size_t>(cell)];
  heldFlags_[cell] = f;
  plannerFlags(cell, f | kBlocked);
  b.held.push_back(cell);
  counters_.heldCells = heldFlags_.size();
}

void Execution::unhold(Bot& b) {
  for (Cell c : b.held) {
    auto it = heldFlags_.find(c);
    if (it == heldFlags_.end()) continue;
    const uint8_t f = it->second;
    heldFlags_.erase(it);
    plannerFlags(c, f);
  }
  b.held.clear();
  counters_.heldCells = heldFlags_.size();
}

void Execution::narrowHold(Bot& b, Cell cell) {
  if (cell != b.confirmed.cell && std::find(b.held.begin(), b.held.end(), cell) == b.held.end()) return;
  unhold(b);
  if (cell != b.confirmed.cell) hold(b, cell);
}

bool Execution::place(Bot& b, const State& s) {
  const Grid& g = planner_.grid();
  if (s.cell < 0 || s.cell >= g.width * g.height) return false;
  clearUnder(b);  // its own cell, when it does not move, is blocked for the planner
  if ((g.flags[static_cast<size_t>(s.cell)] & kBlocked) || takenByOther(s.cell, b.id)) {
    syncUnder(b);
    return false;
  }
  clearEntries(s.cell, b.id);
  b.confirmed = s;
  resync(b.id, s);
  return true;
}

void Execution::checkGoal(Bot& b) {
  if (!b.goal || !b.reachedInPlan) return;
  if (!b.queue.empty() && b.queue.front().start < b.reachedAt) return;
  ExecEvent e;
  e.kind = ExecEventKind::GoalReached;
  e.bot = b.id;
  e.cell = b.goal->cell;
  e.goal = b.goalTag;
  e.step = planner_.now();
  e.state = b.confirmed;
  events_.push_back(e);
  ++counters_.goalsReached;
  b.goal.reset();
  b.reachedInPlan = false;
}

// ---- operations ----

Refusal Execution::addBot(BotId id, const State& state) {
  if (bots_.count(id)) return Refusal::BotExists;
  const Grid& g = planner_.grid();
  if (state.cell < 0 || state.cell >= g.width * g.height) return Refusal::CellBlocked;
  if (takenByOther(state.cell, id)) return Refusal::CellTaken;
  if (g.flags[static_cast<size_t>(state.cell)] & kBlocked) return Refusal::CellBlocked;
  clearEntries(state.cell, id);
  if (!planner_.addBot(id, state)) return Refusal::CellTaken;
  if (validator_) validator_->addBot(id, state);
  Bot& b = bots_[id];
  b.id = id;
  b.confirmed = state;
  return Refusal::None;
}

Refusal Execution::removeBot(BotId id) {
  Bot* b = find(id);
  if (!b) return Refusal::UnknownBot;
  if (!b->queue.empty()) truncate({Ref{id, b->queue.front().seq}});
  unhold(*b);
  clearUnder(*b);
  planner_.removeBot(id);
  if (validator_) validator_->removeBot(id);
  bots_.erase(id);
  return Refusal::None;
}

Refusal Execution::setPaused(BotId id, bool paused) {
  Bot* b = find(id);
  if (!b) return Refusal::UnknownBot;
  if (b->paused == paused) return Refusal::None;
  b->paused = paused;
  if (paused) dropUnreleased(*b);
  setFrozen(*b);
  return Refusal::None;
}

Refusal Execution::setStuck(BotId id, bool stuck) {
  Bot* b = find(id);
  if (!b) return Refusal::UnknownBot;
  if (b->stuck == stuck) return Refusal::None;
  if (stuck) {
    b->stuck = true;
    b->lastReport.reset();
    // It may be anywhere along what it was given: those cells stay its own until it reports.
    std::vector<Cell> cells;
    for (size_t i = 0; i < b->released; ++i) {
      const Cell c = b->queue[i].to.cell;
      if (c != b->confirmed.cell && std::find(cells.begin(), cells.end(), c) == cells.end()) cells.push_back(c);
    }
    if (!b->queue.empty()) truncate({Ref{id, b->queue.front().seq}});
    for (Cell c : cells) hold(*b, c);
    setFrozen(*b);
    return Refusal::None;
  }
  const State target = b->lastReport.value_or(b->confirmed);
  const std::vector<Cell> held = b->held;
  unhold(*b);
  b->stuck = false;
  clearUnder(*b);
  if (!(target == b->confirmed) && !place(*b, target)) {
    // telemetry puts it where it cannot be: it stays stuck where it was
    b->stuck = true;
    for (Cell c : held) hold(*b, c);
    syncUnder(*b);
    ++counters_.deviations;
    ExecEvent e;
    e.kind = ExecEventKind::Deviation;
    e.bot = id;
    e.cell = target.cell;
    e.step = planner_.now();
    e.state = target;
    e.placed = false;
    events_.push_back(e);
    return Refusal::CellTaken;
  }
  b->lastReport.reset();
  setFrozen(*b);
  return Refusal::None;
}

Refusal Execution::setGoal(BotId id, const Goal& goal, bool stay, uint64_t tag) {
  Bot* b = find(id);
  if (!b) return Refusal::UnknownBot;
  const Grid& g = planner_.grid();
  if (goal.cell < 0 || goal.cell >= g.width * g.height || (flagsOf(goal.cell) & kBlocked)) return Refusal::CellBlocked;
  // a stuck bot may be on it, or a bot that does not move is (this one, if it stays frozen)
  if (heldFlags_.count(goal.cell) || (underFlags_.count(goal.cell) && (b->under != goal.cell || b->paused || b->stuck))) {
    return Refusal::CellTaken;
  }
  const bool change = b->goal.has_value();
  b->goal = goal;
  b->goalTag = tag;
  b->stay = stay;
  b->reachedInPlan = false;
  if (change) dropUnreleased(*b);
  if (b->holding) {
    b->holding = false;
    setFrozen(*b);
  }
  planner_.setGoal(id, goal);
  return Refusal::None;
}

Refusal Execution::cancelGoal(BotId id) {
  Bot* b = find(id);
  if (!b) return Refusal::UnknownBot;
  const bool had = b->goal.has_value();
  b->goal.reset();
  b->reachedInPlan = false;
  if (had) dropUnreleased(*b);
  if (b->holding) {
    b->holding = false;
    setFrozen(*b);
  }
  planner_.cancelGoal(id);
  return Refusal::None;
}

Refusal Execution::setCellFlags(Cell cell, uint8_t flags) {
  const Grid& g = planner_.grid();
  if (cell < 0 || cell >= g.width * g.height) return Refusal::CellBlocked;
  for (auto* blocked : {&heldFlags_, &underFlags_}) {
    auto it = blocked->find(cell);
    if (it != blocked->end()) {
      it->second = flags;  // applied when the bot there moves on
      return Refusal::None;
    }
  }
  std::vector<Ref> roots;
  for (const auto& [id, b] : bots_) {
    for (size_t i = b.released; i < b.queue.size(); ++i) {
      const Node& n = b.queue[i];
      if (n.action == Action::Forward && n.to.cell == cell &&
          ((flags & kBlocked) || ((flags & kBarredLoaded) && n.from.lifted))) {
        roots.push_back(Ref{id, n.seq});
        break;
      }
    }
  }
  truncate(roots);
  plannerFlags(cell, flags);
  return Refusal::None;
}

Refusal Execution::report(BotId id, const State& state) {
  Bot* b = find(id);
  if (!b) return Refusal::UnknownBot;
  if (b->stuck) {
    b->lastReport = state;
    narrowHold(*b, state.cell);
    return Refusal::None;
  }
  for (size_t i = 0; i < b->released; ++i) {
    if (!(b->queue[i].to == state)) continue;
    b->queue.erase(b->queue.begin(), b->queue.begin() + static_cast<std::ptrdiff_t>(i + 1));
    b->released -= i + 1;
    counters_.confirmed += i + 1;
    b->confirmed = state;
    checkGoal(*b);
    return Refusal::None;
  }
  if (state == b->confirmed) return Refusal::None;  // not started yet, or a repeat
  // Somewhere the plan does not explain: redo it from there.
  ++counters_.deviations;
  if (!b->queue.empty()) truncate({Ref{id, b->queue.front().seq}});
  const bool placed = place(*b, state);
  if (!placed) {
    b->stuck = true;
    b->lastReport = state;
    setFrozen(*b);
  }
  ExecEvent e;
  e.kind = ExecEventKind::Deviation;
  e.bot = id;
  e.cell = state.cell;
  e.step = planner_.now();
  e.state = state;
  e.placed = placed;
  events_.push_back(e);
  return Refusal::None;
}

// ---- planning and releasing ----

bool Execution::wantsStep() const {
  for (const auto& [id, b] : bots_) {
    if (!b.paused && !b.stuck && planner_.goal(id) != nullptr) return true;
  }
  return false;
}

int64_t Execution::lag() const {
  const int64_t now = planner_.now();
  int64_t oldest = now;
  for (const auto& [id, b] : bots_) {
    if (b.paused || b.stuck || b.queue.empty()) continue;
    oldest = std::min(oldest, b.queue.front().start);
  }
  return now - oldest;
}

bool Execution::windowOpen() const { return lag() < opt_.window; }

Holding Execution::holding() const {
  const Bot* oldest = nullptr;
  for (const auto& [id, b] : bots_) {
    if (b.paused || b.stuck || b.queue.empty()) continue;
    if (!oldest || b.queue.front().start < oldest->queue.front().start) oldest = &b;
  }
  // An action not yet released waits on another bot's: that bot holds the window up. The chain
  // is acyclic (actions only wait on earlier ones), and bounded so a broken graph cannot hang.
  for (int hops = 0; oldest && hops < 64; ++hops) {
    if (oldest->released > 0) break;
    const Node& n = oldest->queue.front();
    if (n.depSeq == 0 || done(n.depBot, n.depSeq)) break;
    auto it = bots_.find(n.depBot);
    if (it == bots_.end() || it->second.queue.empty()) break;
    oldest = &it->second;
  }
  if (!oldest) return {};
  const Node& n = oldest->queue.front();
  return Holding{oldest->id, n.seq, n.action, n.from, n.to, n.start, oldest->released > 0};
}

size_t Execution::plan(Deadline deadline) {
  const StepResult& r = planner_.step(deadline);
  last_ = &r;
  if (validator_) {
    records_.clear();
    for (const BotStep& s : r.bots) records_.push_back(Record{s.bot, s.action, s.endStep == r.step + 1 ? s.to : s.from});
    validator_->step(records_);
  }
  // Leaving actions first, so that a bot following another into a cell in the same step
  // waits on that one's leaving.
  size_t started = 0;
  for (const BotStep& s : r.bots) {
    if (!s.starts || s.action == Action::Wait) continue;
    Bot* b = find(s.bot);
    if (!b) continue;
    Node n;
    n.seq = nextSeq_++;
    n.action = s.action;
    n.from = s.from;
    n.to = s.to;
    n.start = r.step;
    n.duration = s.duration;
    b->queue.push_back(n);
    ++started;
    if (s.action == Action::Forward) {
      Ref& e = lastExit_[static_cast<size_t>(s.from.cell)];
      if (e.seq == 0) exitCells_.push_back(s.from.cell);
      e = Ref{s.bot, n.seq};
    }
  }
  counters_.planned += started;
  for (auto& [id, b] : bots_) {
    if (b.paused || b.holding || b.stuck) syncUnder(b);  // a move under way when it froze has ended
  }
  for (const BotStep& s : r.bots) {
    if (!s.starts || s.action != Action::Forward) continue;
    Bot* b = find(s.bot);
    if (!b) continue;
    Node& n = b->queue.back();
    const Ref e = lastExit_[static_cast<size_t>(s.to.cell)];
    if (e.seq != 0 && e.bot != s.bot && !done(e.bot, e.seq)) {
      n.depBot = e.bot;
      n.depSeq = e.seq;
    }
  }
  for (const Event& ev : r.events) {
    Bot* b = find(ev.bot);
    if (!b) continue;
    ExecEvent e;
    e.bot = ev.bot;
    e.cell = ev.cell;
    e.step = ev.step;
    e.goal = b->goal ? b->goalTag : 0;
    switch (ev.kind) {
      case EventKind::GoalReached:
        if (b->goal) {
          b->reachedInPlan = true;
          b->reachedAt = ev.step;
          if (validator_) {
            std::optional<bool> lifted;
            if (b->goal->act == GoalAct::Lift) lifted = true;
            if (b->goal->act == GoalAct::Lower) lifted = false;
            validator_->claimGoal(ev.bot, b->goal->cell, b->goal->heading, lifted);
          }
          if (b->stay) {
            b->holding = true;  // nothing more is planned for it until its next goal
            setFrozen(*b);
          }
          checkGoal(*b);
        }
        continue;
      case EventKind::GoalUnreachable: e.kind = ExecEventKind::GoalUnreachable; break;
      case EventKind::Stalled: e.kind = ExecEventKind::Stalled; break;
      case EventKind::Unstalled: e.kind = ExecEventKind::Unstalled; break;
      case EventKind::Escaped:
        e.kind = ExecEventKind::Escaped;
        e.count = ev.count;
        break;
    }
    events_.push_back(e);
  }
  return started;
}

void Execution::release(std::vector<Release>& out) {
  const size_t most = static_cast<size_t>(opt_.maxReleased);
  for (auto& [id, b] : bots_) {
    if (b.paused || b.stuck) continue;
    while (b.released < b.queue.size() && b.released < most) {
      const Node& n = b.queue[b.released];
      if (n.depSeq != 0 && !done(n.depBot, n.depSeq)) break;
      if (b.released > 0) {
        // telemetry must tell the actions of a chain apart: no state twice in one
        bool repeats = n.to == b.confirmed;
        for (size_t i = 0; i < b.released; ++i) repeats = repeats || b.queue[i].to == n.to;
        if (repeats) break;
      }
      ++b.released;
      ++counters_.released;
      out.push_back(Release{id, n.action, n.from, n.to, n.duration, n.start});
    }
  }
}

}  // namespace wh::planner
