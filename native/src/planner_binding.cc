// The JS class LevelPlanner: one LevelEngine (native/planner/level_engine.h) per level, on its
// own thread. validatePlan() is in validator_binding.cc; the conversions both use are in
// planner_values.h.
//
// Threads, as the Link (link_binding.cc): JS calls only append an input under a short lock and
// wake the level thread; the thread plans, releases actions and accumulates output, and when
// there is some and no delivery is queued it makes one non-blocking call of a thread-safe
// function whose queue holds at most two. The JS side then takes everything accumulated so far
// and calls deliver(commands, events) once per batch. close() asks the thread to stop and
// returns a promise that settles once the thread has ended (the thread-safe function's
// finalizer joins it); no callback runs after close() is called, nor once the environment has
// refused to run JS (a worker being terminated: js_call.h).
#include <napi.h>
#include <time.h>

#include <algorithm>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "../planner/level_engine.h"
#include "addon.h"
#include "js_call.h"
#include "planner_values.h"

namespace warehouse {
namespace {

using namespace planner_values;

struct EngineState;
void CallJs(Napi::Env env, Napi::Function, std::shared_ptr<EngineState>* ctx, void*);
using Tsfn = Napi::TypedThreadSafeFunction<std::shared_ptr<EngineState>, void, CallJs>;

// Shared by the JS object and the thread-safe function (whose finalizer drops its share).
struct EngineState {
  std::unique_ptr<wp::LevelEngine> engine;
  Tsfn tsfn;
  Napi::FunctionReference deliver;  // JS thread only, as is the rest
  bool closed = false;     // close() called (or teardown): no more callbacks
  bool finished = false;   // the thread ended and the thread-safe function is finalized
  bool teardown = false;   // the environment is going away (its cleanup hooks run)
  bool gone = false;       // the environment refused to run JS (terminating): no more callbacks
  bool reffed = false;
  std::vector<napi_deferred> closing;
  uint64_t deliverCpuNs = 0;
  // Actions released before the thread applied a setStuck(id, true) or removeBot(id) were
  // cancelled by it; they may still be on their way here: the input numbers tell them apart.
  std::unordered_map<wp::BotId, uint64_t> cancelledAt;
  uint64_t mapAt = 0;  // the same for every bot, by setMap()

  Napi::Object CommandToJs(Napi::Env env, const wp::Release& r) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("bot", Napi::Number::New(env, r.bot));
    o.Set("action", ActionName(r.action));
    o.Set("from", StateToJs(env, r.from));
    o.Set("to", StateToJs(env, r.to));
    o.Set("durationSteps", Napi::Number::New(env, r.duration));
    o.Set("planStep", Napi::Number::New(env, static_cast<double>(r.planStep)));
    return o;
  }

  bool Cancelled(const wp::Release& r) const {
    if (r.input < mapAt) return true;
    auto it = cancelledAt.find(r.bot);
    return it != cancelledAt.end() && r.input < it->second;
  }

  Napi::Object EventToJs(Napi::Env env, const wp::EngineEvent& e) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("kind", EventName(e.kind));
    auto num = [&](const char* k, double v) { o.Set(k, Napi::Number::New(env, v)); };
    switch (e.kind) {
      case wp::EngineEventKind::GoalReached:
      case wp::EngineEventKind::GoalUnreachable:
      case wp::EngineEventKind::Stalled:
      case wp::EngineEventKind::Unstalled:
      case wp::EngineEventKind::Escaped:
        num("bot", e.bot);
        num("cell", e.cell);
        if (e.kind == wp::EngineEventKind::Escaped) num("bots", e.count);
        num("goal", static_cast<double>(e.goal));
        num("step", static_cast<double>(e.step));
        break;
      case wp::EngineEventKind::Replanned:
        num("bot", e.bot);
        num("dropped", e.count);
        o.Set("state", StateToJs(env, e.state));
        num("step", static_cast<double>(e.step));
        break;
      case wp::EngineEventKind::Deviation:
        num("bot", e.bot);
        o.Set("state", StateToJs(env, e.state));
        o.Set("placed", Napi::Boolean::New(env, e.placed));
        num("step", static_cast<double>(e.step));
        break;
      case wp::EngineEventKind::OverBudget:
        num("step", static_cast<double>(e.step));
        num("ms", e.ms);
        break;
      case wp::EngineEventKind::BotAdded:
        num("bot", e.bot);
        o.Set("state", StateToJs(env, e.state));
        break;
      case wp::EngineEventKind::Refused:
        o.Set("op", wp::inputName(e.op));
        if (e.bot >= 0) num("bot", e.bot);
        if (e.cell >= 0) num("cell", e.cell);
        if (e.goal > 0) num("goal", static_cast<double>(e.goal));
        o.Set("reason", e.reason);
        break;
      case wp::EngineEventKind::HeldUp:
        num("bot", e.bot);
        o.Set("action", ActionName(e.action));
        num("from", e.cell);
        o.Set("to", StateToJs(env, e.state));
        o.Set("released", Napi::Boolean::New(env, e.placed));
        num("step", static_cast<double>(e.step));
        num("ms", e.ms);
        break;
      case wp::EngineEventKind::Violation:
        num("step", static_cast<double>(e.step));
        num("bot", e.bot);
        num("other", e.other);
        num("cell", e.cell);
        o.Set("rule", wp::ruleName(e.rule));
        o.Set("detail", e.text);
        break;
    }
    return o;
  }

  // JS thread, from the thread-safe function: hands what was produced so far to deliver(), one
  // call per pass of the level thread, in order.
  void Deliver(Napi::Env env) {
    wp::EngineOutput out;
    engine->take(out);
    for (const wp::EngineChunk& chunk : out.chunks) {
      if (closed || gone) return;  // taken all the same: the level thread may go on until stopped
      const uint64_t cpu0 = ThreadCpuNs();
      Napi::HandleScope scope(env);
      Napi::Value commands = env.Undefined(), events = env.Undefined();
      size_t live = 0;
      for (const wp::Release& r : chunk.commands) live += Cancelled(r) ? 0 : 1;
      if (live > 0) {
        Napi::Array list = Napi::Array::New(env, live);
        uint32_t i = 0;
        for (const wp::Release& r : chunk.commands) {
          if (!Cancelled(r)) list.Set(i++, CommandToJs(env, r));
        }
        commands = list;
      }
      if (!chunk.events.empty()) {
        Napi::Array list = Napi::Array::New(env, chunk.events.size());
        for (uint32_t i = 0; i < chunk.events.size(); i++) list.Set(i, EventToJs(env, chunk.events[i]));
        events = list;
      }
      if (commands.IsUndefined() && events.IsUndefined()) continue;
      deliverCpuNs += ThreadCpuNs() - cpu0;
      // A callback that throws leaves the exception pending: Node reports it as uncaught.
      if (!CallBack(env, deliver, {commands, events}, gone)) return;
    }
  }

  static uint64_t ThreadCpuNs() {
    timespec ts{};
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
  }

  // JS thread, from the thread-safe function's finalizer: the level thread has ended. In a
  // worker being terminated this may run after the environment stopped running JS and before
  // its cleanup hooks (teardown): resolving then fails, nobody is left to see the promise, and
  // the status is ignored rather than raised (node-addon-api's Resolve would throw).
  void Finished(Napi::Env env) {
    engine->join();
    finished = true;
    if (!teardown && !gone) {
      for (napi_deferred d : closing) napi_resolve_deferred(env, d, env.Undefined());
    }
    closing.clear();
  }
};

void CallJs(Napi::Env env, Napi::Function, std::shared_ptr<EngineState>* ctx, void*) {
  if (env == nullptr) return;  // the environment is going away
  (*ctx)->Deliver(env);
}

class LevelPlanner : public Napi::ObjectWrap<LevelPlanner> {
 public:
  explicit LevelPlanner(const Napi::CallbackInfo& info);
  ~LevelPlanner() override { Stop(); }

  Napi::Value SetMap(const Napi::CallbackInfo& info);
  Napi::Value AddBot(const Napi::CallbackInfo& info);
  Napi::Value RemoveBot(const Napi::CallbackInfo& info);
  Napi::Value PauseBot(const Napi::CallbackInfo& info);
  Napi::Value SetStuck(const Napi::CallbackInfo& info);
  Napi::Value SetGoal(const Napi::CallbackInfo& info);
  Napi::Value CancelGoal(const Napi::CallbackInfo& info);
  Napi::Value ReportTelemetry(const Napi::CallbackInfo& info);
  Napi::Value SetCellFlags(const Napi::CallbackInfo& info);
  Napi::Value Suspend(const Napi::CallbackInfo& info);
  Napi::Value Stats(const Napi::CallbackInfo& info);
  Napi::Value Close(const Napi::CallbackInfo& info);

 private:
  bool Open() const { return st_ && !st_->closed; }
  uint64_t Post(wp::Input&& in) { return Open() ? st_->engine->post(std::move(in)) : 0; }
  void Unhook() {
    if (hooked_) {
      hooked_ = false;
      napi_remove_env_cleanup_hook(env_, Cleanup, this);
    }
  }
  // Object collected without close(), or env teardown: stop and wait for the thread here.
  void Stop() {
    Unhook();
    if (!st_) return;
    st_->closed = true;
    st_->engine->stop();
    st_->engine->join();
  }
  static void Cleanup(void* arg) {
    LevelPlanner* self = static_cast<LevelPlanner*>(arg);
    self->hooked_ = false;
    if (self->st_) self->st_->teardown = true;
    self->Stop();
  }

  napi_env env_;
  std::shared_ptr<EngineState> st_;
  bool hooked_ = false;
};

LevelPlanner::LevelPlanner(const Napi::CallbackInfo& info) : Napi::ObjectWrap<LevelPlanner>(info), env_(info.Env()) {
  Napi::Env env = info.Env();
  if (!info[0].IsObject()) {
    Fail(env, "createLevelPlanner: options must be an object");
    return;
  }
  Napi::Object o = info[0].As<Napi::Object>();
  // Read once each: see CommandFromJs (link_messages.cc) on why a property is never read twice.
  Napi::Value deliver = o.Get("deliver");
  if (!deliver.IsFunction()) {
    Fail(env, "createLevelPlanner: options.deliver must be a function");
    return;
  }
  wp::EngineOptions c;
  c.planner.heuristicMemoryBytes = size_t{256} << 20;
  double memoryMb = 256, seed = 1;
  if (!Option(env, o, "stepBudgetMs", c.stepBudgetMs, 1, 60000) || !Option(env, o, "window", c.execution.window, 1, 10000) ||
      !Option(env, o, "maxReleasedActions", c.execution.maxReleased, 1, 32) ||
      !Option(env, o, "idleStepMs", c.idleStepMs, 0, 60000) || !Option(env, o, "heldUpMs", c.heldUpMs, 0, 3600000) || !Option(env, o, "stallSteps", c.planner.stallSteps, 1, 1000000) ||
      !Option(env, o, "escapeBots", c.planner.escapeBots, 0, 1000) ||
      !Option(env, o, "heuristicMemoryMb", memoryMb, 1, 1048576) || !Option(env, o, "seed", seed, 0, 9007199254740991.0) ||
      !Option(env, o, "maxEvents", c.maxEvents, 1, 10000000) || !BoolOption(env, o, "corridorGuidance", c.planner.corridorGuidance) ||
      !BoolOption(env, o, "validate", c.validate) || !DurationsFromJs(env, o, c.planner.durations)) {
    return;
  }
  c.planner.heuristicMemoryBytes = static_cast<size_t>(memoryMb) << 20;
  c.planner.seed = static_cast<uint64_t>(seed);
  std::shared_ptr<const wp::Grid> grid;
  Napi::Value gridValue = o.Get("grid");
  if (!gridValue.IsUndefined()) {
    auto g = std::make_shared<wp::Grid>();
    if (!GridFromJs(env, gridValue, "createLevelPlanner: grid", *g)) return;
    grid = std::move(g);
  }

  auto st = std::make_shared<EngineState>();
  st->engine = std::make_unique<wp::LevelEngine>(c);
  st->deliver = Napi::Persistent(deliver.As<Napi::Function>());
  // One thread uses the function: the level thread, which releases it as it ends. At most one
  // delivery is queued at a time, so 2 bounds the queue.
  auto* ctx = new std::shared_ptr<EngineState>(st);
  st->tsfn = Tsfn::New(env, "warehouse.planner", 2, 1, ctx, [](Napi::Env fenv, void*, std::shared_ptr<EngineState>* c) {
    (*c)->Finished(fenv);
    delete c;
  });
  // An open level planner does not keep the process alive (close() does, until it settles).
  st->tsfn.Unref(env);
  if (grid) {
    wp::Input in;
    in.kind = wp::InputKind::SetMap;
    in.grid = std::move(grid);
    st->engine->post(std::move(in));
  }
  EngineState* raw = st.get();
  st->engine->start([raw] { return raw->tsfn.NonBlockingCall() == napi_ok; }, [raw] { raw->tsfn.Release(); }, "wh-planner");
  st_ = std::move(st);
  // Registered after the thread-safe function's own hook, so it runs first (hooks run in
  // reverse order): the thread is joined before the function is torn down.
  hooked_ = napi_add_env_cleanup_hook(env, Cleanup, this) == napi_ok;
}

Napi::Value LevelPlanner::SetMap(const Napi::CallbackInfo& info) {
  auto g = std::make_shared<wp::Grid>();
  if (!GridFromJs(info.Env(), info[0], "setMap: grid", *g)) return info.Env().Undefined();
  wp::Input in;
  in.kind = wp::InputKind::SetMap;
  in.grid = std::move(g);
  if (const uint64_t seq = Post(std::move(in))) st_->mapAt = seq;
  return info.Env().Undefined();
}

Napi::Value LevelPlanner::AddBot(const Napi::CallbackInfo& info) {
  wp::Input in;
  in.kind = wp::InputKind::AddBot;
  if (BotArg(info.Env(), info[0], "addBot", in.bot) && StateArgs(info, 1, "addBot", in.state)) Post(std::move(in));
  return info.Env().Undefined();
}

Napi::Value LevelPlanner::RemoveBot(const Napi::CallbackInfo& info) {
  wp::Input in;
  in.kind = wp::InputKind::RemoveBot;
  if (BotArg(info.Env(), info[0], "removeBot", in.bot)) {
    const wp::BotId bot = in.bot;
    if (const uint64_t seq = Post(std::move(in))) st_->cancelledAt[bot] = seq;
  }
  return info.Env().Undefined();
}

Napi::Value LevelPlanner::PauseBot(const Napi::CallbackInfo& info) {
  wp::Input in;
  in.kind = wp::InputKind::Pause;
  if (BotArg(info.Env(), info[0], "pauseBot", in.bot) && Bool(info.Env(), info[1], "pauseBot: paused", in.flag)) Post(std::move(in));
  return info.Env().Undefined();
}

Napi::Value LevelPlanner::SetStuck(const Napi::CallbackInfo& info) {
  wp::Input in;
  in.kind = wp::InputKind::Stuck;
  if (BotArg(info.Env(), info[0], "setStuck", in.bot) && Bool(info.Env(), info[1], "setStuck: stuck", in.flag)) {
    const wp::BotId bot = in.bot;
    const bool stuck = in.flag;
    const uint64_t seq = Post(std::move(in));
    if (seq && stuck) st_->cancelledAt[bot] = seq;
  }
  return info.Env().Undefined();
}

Napi::Value LevelPlanner::SetGoal(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  wp::Input in;
  in.kind = wp::InputKind::SetGoal;
  double heading, act;
  if (!BotArg(env, info[0], "setGoal", in.bot) || !CellArg(env, info[1], "setGoal: cell", in.goal.cell) ||
      !Integer(env, info[2], "setGoal: heading (-1 any, 0 east, 1 south, 2 west, 3 north)", -1, 3, heading) ||
      !Integer(env, info[3], "setGoal: act (0 none, 1 lift, 2 lower)", 0, 2, act) || !Bool(env, info[4], "setGoal: stay", in.flag)) {
    return env.Undefined();
  }
  if (heading >= 0) in.goal.heading = static_cast<wp::Heading>(static_cast<int>(heading));
  in.goal.act = static_cast<wp::GoalAct>(static_cast<int>(act));
  // the input's number names the goal in its events
  return Napi::Number::New(env, static_cast<double>(Post(std::move(in))));
}

Napi::Value LevelPlanner::CancelGoal(const Napi::CallbackInfo& info) {
  wp::Input in;
  in.kind = wp::InputKind::CancelGoal;
  if (BotArg(info.Env(), info[0], "cancelGoal", in.bot)) Post(std::move(in));
  return info.Env().Undefined();
}

Napi::Value LevelPlanner::ReportTelemetry(const Napi::CallbackInfo& info) {
  wp::Input in;
  in.kind = wp::InputKind::Telemetry;
  if (BotArg(info.Env(), info[0], "reportTelemetry", in.bot) && StateArgs(info, 1, "reportTelemetry", in.state)) Post(std::move(in));
  return info.Env().Undefined();
}

Napi::Value LevelPlanner::SetCellFlags(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  wp::Input in;
  in.kind = wp::InputKind::CellFlags;
  double flags;
  if (CellArg(env, info[0], "setCellFlags: cell", in.cell) && Integer(env, info[1], "setCellFlags: flags", 0, 255, flags)) {
    in.flags = static_cast<uint8_t>(flags);
    Post(std::move(in));
  }
  return env.Undefined();
}

Napi::Value LevelPlanner::Suspend(const Napi::CallbackInfo& info) {
  bool suspended;
  if (Bool(info.Env(), info[0], "suspend: suspended", suspended) && Open()) st_->engine->suspend(suspended);
  return info.Env().Undefined();
}

Napi::Value LevelPlanner::Stats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!st_) return env.Undefined();
  wp::EngineStats s = st_->engine->stats();
  Napi::Object o = Napi::Object::New(env);
  auto num = [&](Napi::Object x, const char* k, double v) { x.Set(k, Napi::Number::New(env, v)); };
  o.Set("hasMap", Napi::Boolean::New(env, s.hasMap));
  o.Set("suspended", Napi::Boolean::New(env, s.suspended));
  num(o, "step", static_cast<double>(s.now));
  num(o, "bots", static_cast<double>(s.bots));
  num(o, "lag", static_cast<double>(s.lag));
  num(o, "queuedActions", static_cast<double>(s.queuedActions));
  num(o, "inputs", static_cast<double>(s.inputs));
  num(o, "inputsWaiting", static_cast<double>(s.inputsWaiting));
  num(o, "refused", static_cast<double>(s.refused));
  num(o, "steps", static_cast<double>(s.steps));
  num(o, "idleSteps", static_cast<double>(s.idleSteps));
  num(o, "overBudget", static_cast<double>(s.overBudget));
  num(o, "incompleteSteps", static_cast<double>(s.incompleteSteps));
  num(o, "eventsDropped", static_cast<double>(s.eventsDropped));
  num(o, "violations", static_cast<double>(s.violations));
  num(o, "windowWaitMs", s.windowWaitMs);
  Napi::Array heldUpBy = Napi::Array::New(env, s.heldUpBy.size());
  for (size_t i = 0; i < s.heldUpBy.size(); ++i) {
    Napi::Object h = Napi::Object::New(env);
    num(h, "bot", static_cast<double>(s.heldUpBy[i].bot));
    num(h, "ms", s.heldUpBy[i].ms);
    heldUpBy.Set(static_cast<uint32_t>(i), h);
  }
  o.Set("heldUpBy", heldUpBy);
  Napi::Object actions = Napi::Object::New(env);
  num(actions, "planned", static_cast<double>(s.execution.planned));
  num(actions, "released", static_cast<double>(s.execution.released));
  num(actions, "confirmed", static_cast<double>(s.execution.confirmed));
  num(actions, "dropped", static_cast<double>(s.execution.dropped));
  o.Set("actions", actions);
  num(o, "replans", static_cast<double>(s.execution.truncations));
  num(o, "deviations", static_cast<double>(s.execution.deviations));
  num(o, "heldCells", static_cast<double>(s.execution.heldCells));
  num(o, "frozenCells", static_cast<double>(s.execution.frozenCells));
  Napi::Object goals = Napi::Object::New(env);
  num(goals, "set", static_cast<double>(s.planner.goalsSet));
  num(goals, "reached", static_cast<double>(s.execution.goalsReached));
  num(goals, "cancelled", static_cast<double>(s.planner.goalsCancelled));
  o.Set("goals", goals);
  Napi::Object stalls = Napi::Object::New(env);
  num(stalls, "detected", static_cast<double>(s.planner.stallsDetected));
  num(stalls, "broken", static_cast<double>(s.planner.stallsBroken));
  o.Set("stalls", stalls);
  Napi::Object escapes = Napi::Object::New(env);
  num(escapes, "planned", static_cast<double>(s.planner.escapesPlanned));
  num(escapes, "done", static_cast<double>(s.planner.escapesDone));
  num(escapes, "aborted", static_cast<double>(s.planner.escapesAborted));
  num(escapes, "unsolved", static_cast<double>(s.planner.escapesUnsolved));
  o.Set("escapes", escapes);
  std::vector<uint32_t>& us = s.stepMicros;
  std::sort(us.begin(), us.end());
  auto pct = [&](double p) {
    if (us.empty()) return 0.0;
    const size_t i = std::min(us.size() - 1, static_cast<size_t>(p / 100.0 * static_cast<double>(us.size())));
    return us[i] / 1000.0;
  };
  Napi::Object stepMs = Napi::Object::New(env);
  num(stepMs, "samples", static_cast<double>(us.size()));
  num(stepMs, "p50", pct(50));
  num(stepMs, "p99", pct(99));
  num(stepMs, "max", s.stepMsMax);
  num(stepMs, "last", s.stepMsLast);
  o.Set("stepMs", stepMs);
  num(o, "threadCpuMs", static_cast<double>(st_->engine->threadCpuNs()) / 1e6);
  num(o, "deliverCpuMs", static_cast<double>(st_->deliverCpuNs) / 1e6);
  return o;
}

Napi::Value LevelPlanner::Close(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  // Creating (and settling) the promise fails only while the environment is terminating; the
  // thread is stopped all the same, and nobody is left to wait for the promise.
  napi_deferred d = nullptr;
  napi_value promise = nullptr;
  napi_create_promise(env, &d, &promise);
  const Napi::Value result = promise ? Napi::Value(env, promise) : env.Undefined();
  if (!st_ || st_->finished) {
    if (d) napi_resolve_deferred(env, d, env.Undefined());
    return result;
  }
  // The cleanup hook stays: should the environment go before the thread has ended (a worker
  // terminated with close() pending), it joins the thread before the thread-safe function is
  // torn down, and Finished() then leaves the promise alone.
  st_->closed = true;
  if (d) st_->closing.push_back(d);
  if (!st_->reffed) {
    // keep the process alive until the thread has ended and the promise settled
    st_->reffed = true;
    st_->tsfn.Ref(env);
  }
  st_->engine->stop();
  return result;
}

}  // namespace

Napi::Function DefineLevelPlanner(Napi::Env env) {
  return LevelPlanner::DefineClass(
      env, "LevelPlanner",
      {LevelPlanner::InstanceMethod<&LevelPlanner::SetMap>("setMap"), LevelPlanner::InstanceMethod<&LevelPlanner::AddBot>("addBot"),
       LevelPlanner::InstanceMethod<&LevelPlanner::RemoveBot>("removeBot"),
       LevelPlanner::InstanceMethod<&LevelPlanner::PauseBot>("pauseBot"),
       LevelPlanner::InstanceMethod<&LevelPlanner::SetStuck>("setStuck"),
       LevelPlanner::InstanceMethod<&LevelPlanner::SetGoal>("setGoal"),
       LevelPlanner::InstanceMethod<&LevelPlanner::CancelGoal>("cancelGoal"),
       LevelPlanner::InstanceMethod<&LevelPlanner::ReportTelemetry>("reportTelemetry"),
       LevelPlanner::InstanceMethod<&LevelPlanner::SetCellFlags>("setCellFlags"),
       LevelPlanner::InstanceMethod<&LevelPlanner::Suspend>("suspend"), LevelPlanner::InstanceMethod<&LevelPlanner::Stats>("stats"),
       LevelPlanner::InstanceMethod<&LevelPlanner::Close>("close")});
}

}  // namespace warehouse
