// The level's planning thread: see level_engine.h.
#include "level_engine.h"

#include <pthread.h>
#include <time.h>

#include <algorithm>

namespace wh::planner {

namespace {

constexpr size_t kRingSize = 4096;  // step times kept for the percentiles in stats()

/** Puts `h` in `top` (longest first, at most 3 kept), replacing the entry of its bot. */
void rank(std::vector<HeldUp>& top, const HeldUp& h) {
  std::erase_if(top, [&](const HeldUp& o) { return o.bot == h.bot; });
  top.insert(std::find_if(top.begin(), top.end(), [&](const HeldUp& o) { return o.ms < h.ms; }), h);
  if (top.size() > 3) top.pop_back();
}

uint64_t cpuNs(clockid_t clock) {
  timespec ts{};
  if (clock_gettime(clock, &ts) != 0) return 0;
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

const char* inputName(InputKind kind) {
  switch (kind) {
    case InputKind::SetMap: return "set_map";
    case InputKind::AddBot: return "add_bot";
    case InputKind::RemoveBot: return "remove_bot";
    case InputKind::Pause: return "pause_bot";
    case InputKind::Stuck: return "set_stuck";
    case InputKind::SetGoal: return "set_goal";
    case InputKind::CancelGoal: return "cancel_goal";
    case InputKind::Telemetry: return "report_telemetry";
    case InputKind::CellFlags: return "set_cell_flags";
  }
  return "?";
}

LevelEngine::LevelEngine(const EngineOptions& options) : opt_(options) {
  opt_.planner.forbidCycles = true;
  opt_.stepBudgetMs = std::max<uint32_t>(1, opt_.stepBudgetMs);
  ring_.reserve(kRingSize);
}

LevelEngine::~LevelEngine() {
  stop();
  join();
}

void LevelEngine::start(std::function<bool()> wake, std::function<void()> exited, const char* threadName) {
  wake_ = std::move(wake);
  exited_ = std::move(exited);
  thread_ = std::thread([this] { run(); });
  // named here rather than by the thread so that the name is there when start() returns
  pthread_setname_np(thread_.native_handle(), threadName);
}

uint64_t LevelEngine::post(Input&& input) {
  bool first;
  uint64_t seq;
  {
    std::lock_guard guard(mu_);
    first = inbox_.empty();
    inbox_.push_back(std::move(input));
    seq = ++inputs_;
  }
  // the thread takes the whole inbox at once: one wake per batch is enough
  if (first) cv_.notify_one();
  return seq;
}

void LevelEngine::suspend(bool suspended) {
  {
    std::lock_guard guard(mu_);
    suspend_ = suspended;
  }
  cv_.notify_one();
}

void LevelEngine::take(EngineOutput& out) {
  std::lock_guard guard(mu_);
  deliveryQueued_ = false;
  out.chunks.swap(outbox_.chunks);
  out.events = outbox_.events;
  outbox_.chunks.clear();
  outbox_.events = 0;
}

EngineStats LevelEngine::stats() const {
  std::lock_guard guard(mu_);
  EngineStats s = snapshot_;
  s.suspended = suspended_;
  s.inputsWaiting = inbox_.size();
  s.inputs = inputs_;
  s.eventsDropped = eventsDropped_;
  s.stepMicros = ring_;
  // The thread sleeps while the window is shut: the wait going on counts up to now.
  if (s.holding.bot >= 0) {
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - s.holdingSince).count();
    s.windowWaitMs += ms;
    rank(s.heldUpBy, HeldUp{s.holding.bot, s.holding.ms + ms});
  }
  return s;
}

uint64_t LevelEngine::threadCpuNs() const {
  if (!thread_.joinable()) return cpuAtExit_;
  clockid_t clock;
  return pthread_getcpuclockid(const_cast<std::thread&>(thread_).native_handle(), &clock) == 0 ? cpuNs(clock) : 0;
}

void LevelEngine::stop() {
  {
    std::lock_guard guard(mu_);
    stop_ = true;
  }
  cv_.notify_one();
}

void LevelEngine::join() {
  if (thread_.joinable()) thread_.join();
}

void LevelEngine::rebuild(const Grid& grid) {
  exec_.reset();
  validator_.reset();
  planner_.reset();
  planner_ = std::make_unique<Planner>(grid, opt_.planner);
  if (opt_.validate) {
    ValidatorOptions v;
    v.durations = opt_.planner.durations;
    v.rotations = opt_.planner.rotations;
    v.forbidCycles = true;
    v.maxViolations = 1000;
    validator_ = std::make_unique<Validator>(grid, v);
  }
  violationsSeen_ = 0;
  exec_ = std::make_unique<Execution>(*planner_, opt_.execution, validator_.get());
}

bool LevelEngine::apply(std::vector<Input>& inputs, std::vector<EngineEvent>& events) {
  bool changed = false;
  for (Input& in : inputs) {
    ++inputsDone_;
    if (in.kind == InputKind::SetMap) {
      grid_ = in.grid;
      rebuild(*grid_);
      changed = true;
      continue;
    }
    const char* reason = nullptr;
    if (!exec_) {
      reason = "no_map";
    } else {
      Refusal r = Refusal::None;
      const uint64_t deviations = exec_->counters().deviations;
      switch (in.kind) {
        case InputKind::AddBot: r = exec_->addBot(in.bot, in.state); break;
        case InputKind::RemoveBot: r = exec_->removeBot(in.bot); break;
        case InputKind::Pause: r = exec_->setPaused(in.bot, in.flag); break;
        case InputKind::Stuck: r = exec_->setStuck(in.bot, in.flag); break;
        case InputKind::SetGoal: r = exec_->setGoal(in.bot, in.goal, in.flag, inputsDone_); break;
        case InputKind::CancelGoal: r = exec_->cancelGoal(in.bot); break;
        case InputKind::Telemetry: r = exec_->report(in.bot, in.state); break;
        case InputKind::CellFlags: r = exec_->setCellFlags(in.cell, in.flags); break;
        case InputKind::SetMap: break;
      }
      // telemetry that only confirms changes nothing the planner sees
      if (in.kind != InputKind::Telemetry || exec_->counters().deviations != deviations) changed = true;
      if (r != Refusal::None) reason = refusalName(r);
      if (r == Refusal::None && in.kind == InputKind::AddBot) {
        EngineEvent e;
        e.kind = EngineEventKind::BotAdded;
        e.bot = in.bot;
        e.cell = in.state.cell;
        e.state = in.state;
        events.push_back(e);
      }
    }
    if (reason) {
      ++refused_;
      EngineEvent e;
      e.kind = EngineEventKind::Refused;
      e.bot = in.kind == InputKind::CellFlags ? -1 : in.bot;
      e.cell = in.kind == InputKind::CellFlags ? in.cell
               : in.kind == InputKind::SetGoal ? in.goal.cell
               : in.kind == InputKind::AddBot || in.kind == InputKind::Telemetry ? in.state.cell
                                                                                 : kNoCell;
      e.op = in.kind;
      e.reason = reason;
      if (in.kind == InputKind::SetGoal) e.goal = inputsDone_;
      events.push_back(e);
    }
  }
  inputs.clear();
  return changed;
}

void LevelEngine::collect(std::vector<EngineEvent>& events) {
  if (!exec_) return;
  for (const ExecEvent& x : exec_->events()) {
    EngineEvent e;
    switch (x.kind) {
      case ExecEventKind::GoalReached: e.kind = EngineEventKind::GoalReached; break;
      case ExecEventKind::GoalUnreachable: e.kind = EngineEventKind::GoalUnreachable; break;
      case ExecEventKind::Stalled: e.kind = EngineEventKind::Stalled; break;
      case ExecEventKind::Unstalled: e.kind = EngineEventKind::Unstalled; break;
      case ExecEventKind::Replanned: e.kind = EngineEventKind::Replanned; break;
      case ExecEventKind::Deviation: e.kind = EngineEventKind::Deviation; break;
      case ExecEventKind::Escaped: e.kind = EngineEventKind::Escaped; break;
    }
    e.bot = x.bot;
    e.cell = x.cell;
    e.step = x.step;
    e.goal = x.goal;
    e.count = x.count;
    e.state = x.state;
    e.placed = x.placed;
    events.push_back(e);
  }
  exec_->events().clear();
  if (validator_) {
    const std::vector<Violation>& v = validator_->violations();
    for (; violationsSeen_ < v.size(); ++violationsSeen_) {
      const Violation& x = v[violationsSeen_];
      EngineEvent e;
      e.kind = EngineEventKind::Violation;
      e.bot = x.bot;
      e.other = x.other;
      e.cell = x.cell;
      e.step = x.step;
      e.rule = x.rule;
      e.text = x.detail;
      events.push_back(e);
    }
  }
}

void LevelEngine::refresh(EngineStats& s) const {
  s.hasMap = exec_ != nullptr;
  s.steps = steps_;
  s.idleSteps = idleSteps_;
  s.overBudget = overBudget_;
  s.refused = refused_;
  if (!exec_) return;
  s.now = planner_->now();
  s.bots = exec_->botCount();
  s.lag = exec_->lag();
  s.queuedActions = exec_->queued();
  s.execution = exec_->counters();
  s.planner = planner_->counters();
  s.incompleteSteps = s.planner.incompleteSteps;
  s.violations = validator_ ? validator_->violationCount() : 0;
  s.windowWaitMs = static_cast<double>(windowWaitMicros_) / 1000.0;
  s.holding = HeldUp{holder_, 0};
  s.holdingSince = heldSince_;
  if (holder_ >= 0) {
    auto it = heldUpMicros_.find(holder_);
    if (it != heldUpMicros_.end()) s.holding.ms = static_cast<double>(it->second) / 1000.0;
  }
  s.heldUpBy = heldUpTop_;
}

void LevelEngine::noteHolder(bool shut, std::vector<EngineEvent>& events) {
  const Holding h = shut ? exec_->holding() : Holding{};
  const Clock::time_point t = Clock::now();
  if (h.bot != holder_) {
    if (holder_ >= 0) {
      const auto us = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(t - heldSince_).count());
      const uint64_t total = heldUpMicros_[holder_] += us;
      windowWaitMicros_ += us;
      // Totals only grow, so ranking each as it grows keeps the top three right.
      rank(heldUpTop_, HeldUp{holder_, static_cast<double>(total) / 1000.0});
    }
    holder_ = h.bot;
    heldSince_ = t;
  }
  if (h.bot < 0) {
    heldAction_ = 0;
    return;
  }
  if (h.seq != heldAction_) {
    heldAction_ = h.seq;
    actionSince_ = t;
    actionTold_ = false;
    return;
  }
  const double ms = std::chrono::duration<double, std::milli>(t - actionSince_).count();
  if (actionTold_ || opt_.heldUpMs == 0 || ms < opt_.heldUpMs) return;
  actionTold_ = true;
  EngineEvent e;
  e.kind = EngineEventKind::HeldUp;
  e.bot = h.bot;
  e.action = h.action;
  e.cell = h.from.cell;
  e.state = h.to;
  e.step = h.planStep;
  e.placed = h.released;
  e.ms = ms;
  events.push_back(e);
}

void LevelEngine::run() {
  using namespace std::chrono;
  std::vector<Input> inputs;
  std::vector<Release> releases;
  std::vector<EngineEvent> events;
  std::vector<uint32_t> micros;
  EngineStats fresh;
  Clock::time_point nextStep = Clock::now();
  const auto budget = milliseconds(opt_.stepBudgetMs);
  std::unique_lock lock(mu_);
  while (!stop_) {
    if (suspend_) {
      suspended_ = true;
      cv_.wait(lock, [this] { return stop_ || !suspend_; });
      suspended_ = false;
      continue;
    }
    inputs.swap(inbox_);
    lock.unlock();

    if (apply(inputs, events)) nextStep = Clock::now();
    if (exec_ && Clock::now() >= nextStep && exec_->wantsStep() && exec_->windowOpen()) {
      const Clock::time_point t0 = Clock::now();
      const size_t started = exec_->plan(t0 + budget);
      const StepResult& r = exec_->lastStep();
      const uint64_t ns = planner_->counters().planNanosLast;
      micros.push_back(static_cast<uint32_t>(std::min<uint64_t>(ns / 1000, UINT32_MAX)));
      ++steps_;
      if (!r.complete || ns > static_cast<uint64_t>(opt_.stepBudgetMs) * 1000000ull) {
        ++overBudget_;
        EngineEvent e;
        e.kind = EngineEventKind::OverBudget;
        e.step = r.step;
        e.ms = static_cast<double>(ns) / 1e6;
        events.push_back(e);
      }
      if (started == 0) {
        ++idleSteps_;
        nextStep = Clock::now() + milliseconds(opt_.idleStepMs);
      }
    }
    if (exec_) exec_->release(releases);
    for (Release& r : releases) r.input = inputsDone_;
    collect(events);
    const bool wants = exec_ && exec_->wantsStep();
    const bool canStep = wants && exec_->windowOpen();
    noteHolder(wants && !canStep, events);
    refresh(fresh);

    lock.lock();
    if (!releases.empty() || !events.empty()) {
      EngineChunk& chunk = outbox_.chunks.emplace_back();
      chunk.commands.swap(releases);
      for (EngineEvent& e : events) {
        if (outbox_.events < opt_.maxEvents) {
          chunk.events.push_back(std::move(e));
          ++outbox_.events;
        } else {
          ++eventsDropped_;
        }
      }
    }
    releases.clear();
    events.clear();
    for (uint32_t us : micros) {
      if (ring_.size() < kRingSize) {
        ring_.push_back(us);
      } else {
        ring_[ringNext_] = us;
      }
      ringNext_ = (ringNext_ + 1) % kRingSize;
    }
    if (!micros.empty()) {
      fresh.stepMsLast = micros.back() / 1000.0;
      snapshot_.stepMsMax = std::max(snapshot_.stepMsMax, fresh.stepMsLast);
    } else {
      fresh.stepMsLast = snapshot_.stepMsLast;
    }
    fresh.stepMsMax = snapshot_.stepMsMax;
    micros.clear();
    snapshot_ = fresh;
    bool retry = false;
    if (!outbox_.chunks.empty() && !deliveryQueued_) {
      if (wake_ && wake_()) {
        deliveryQueued_ = true;
      } else {
        retry = true;
      }
    }
    if (stop_ || suspend_ || !inbox_.empty()) continue;
    Clock::time_point until = Clock::time_point::max();
    if (canStep) until = nextStep;
    // A hold not yet told is told on time even when no input comes meanwhile.
    if (holder_ >= 0 && !actionTold_ && opt_.heldUpMs > 0) until = std::min(until, actionSince_ + milliseconds(opt_.heldUpMs));
    if (retry) until = std::min(until, Clock::now() + milliseconds(2));
    if (until == Clock::time_point::max()) {
      cv_.wait(lock, [this] { return stop_ || suspend_ || !inbox_.empty(); });
    } else {
      cv_.wait_until(lock, until, [this] { return stop_ || suspend_ || !inbox_.empty(); });
    }
  }
  cpuAtExit_ = cpuNs(CLOCK_THREAD_CPUTIME_ID);
  lock.unlock();
  if (exited_) exited_();
}

}  // namespace wh::planner
