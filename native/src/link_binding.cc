// The JS class Link: one LinkCore (link_core.h) per serial line, driven by its own thread.
//
// Threads. JS calls receive/send/stats/close on the main (or a worker's) thread; they only
// take the mutex, queue bytes or a command, and wake the link thread. The link thread decodes,
// runs the timers (heartbeat, retransmission, silence) and owns all waiting. What it produces
// (bytes for the line, events) accumulates in the core; when there is some and no delivery is
// queued yet it makes one non-blocking call of a thread-safe function whose queue holds at most
// two. The JS side then takes everything accumulated so far: one write() and one onEvent()
// per batch however many frames arrived, and the link thread never blocks on a busy event loop.
// No callback runs after close(), nor once the environment has refused to run JS (a worker
// being terminated: js_call.h).
#include <napi.h>
#include <pthread.h>
#include <time.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "addon.h"
#include "js_call.h"
#include "link_core.h"
#include "link_messages.h"

namespace warehouse {
namespace {

// Bytes received but not yet decoded; beyond this the line is delivering faster than one core
// decodes (it cannot at 92 kB/s), so a chunk is dropped and counted rather than growing.
constexpr size_t kInboxLimit = 1 << 20;

uint64_t NowMs() {
  using namespace std::chrono;
  return static_cast<uint64_t>(duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count());
}

// CPU time (user + system) a clock has counted, in nanoseconds.
uint64_t CpuNs(clockid_t clock) {
  timespec ts{};
  if (clock_gettime(clock, &ts) != 0) return 0;
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

const char* ReasonName(Reason r) {
  switch (r) {
    case Reason::kWelcomed: return "welcomed";
    case Reason::kHeard: return "heard";
    case Reason::kSilent: return "silent";
    case Reason::kGaveUp: return "gave_up";
    case Reason::kHello: return "hello";
    case Reason::kOffline: return "offline";
    case Reason::kQueueFull: return "queue_full";
    case Reason::kNone: break;
  }
  return "";
}

struct LinkState;
void CallJs(Napi::Env env, Napi::Function, std::shared_ptr<LinkState>* ctx, void*);
using Tsfn = Napi::TypedThreadSafeFunction<std::shared_ptr<LinkState>, void, CallJs>;

// Shared by the JS object and the thread-safe function: the object may be collected while a
// delivery is still queued, so the state lives until both are done (the TSFN's finalizer
// drops its share).
struct LinkState {
  std::mutex mu;
  std::condition_variable cv;
  std::unique_ptr<LinkCore> core;  // guarded by mu
  std::vector<uint8_t> inbox;      // guarded by mu
  uint64_t inbox_dropped = 0;      // guarded by mu
  bool wake = false, stop = false, delivery_queued = false;  // guarded by mu
  // The link thread's own CPU time when it ended (Stats() after close); while it runs, Stats()
  // reads its clock from outside so that measuring costs the thread nothing.
  uint64_t thread_cpu_ns_at_exit = 0;  // written by the thread as it ends, read after join
  // JS-thread CPU time spent taking output and turning it into a Buffer and event objects
  // (the write/onEvent callbacks excluded): the rest of what the addon costs per frame.
  uint64_t deliver_cpu_ns = 0;  // JS thread only
  std::thread thread;
  Tsfn tsfn;
  bool released = false;  // JS thread only, as are the rest
  bool closed = false;
  bool gone = false;  // the environment refused to run JS (terminating): no more callbacks
  Napi::FunctionReference write, on_event;

  void Run() {
    std::unique_lock lock(mu);
    std::vector<uint8_t> bytes;
    while (!stop) {
      uint64_t now = NowMs();
      if (!inbox.empty()) {
        bytes.swap(inbox);
        core->Receive(bytes.data(), bytes.size(), now);
        bytes.clear();
      }
      core->Tick(now);
      uint64_t deadline = core->NextDeadline();
      if (core->HasOutput() && !delivery_queued) {
        if (tsfn.NonBlockingCall() == napi_ok) {
          delivery_queued = true;
        } else {
          deadline = std::min(deadline, now + 2);  // queue full or closing: try again shortly
        }
      }
      auto until = std::chrono::steady_clock::time_point(std::chrono::milliseconds(deadline));
      cv.wait_until(lock, until, [this] { return wake || stop; });
      wake = false;
    }
    thread_cpu_ns_at_exit = CpuNs(CLOCK_THREAD_CPUTIME_ID);
  }

  // JS thread: the link thread's CPU time so far, in nanoseconds.
  uint64_t ThreadCpuNs() {
    if (!thread.joinable()) return thread_cpu_ns_at_exit;
    clockid_t clock;
    return pthread_getcpuclockid(thread.native_handle(), &clock) == 0 ? CpuNs(clock) : 0;
  }

  // JS thread. Joins the link thread (it never waits on JS, so this is quick) and lets the
  // thread-safe function finish; queued deliveries after this are dropped (closed).
  void Stop() {
    closed = true;
    if (thread.joinable()) {
      {
        std::lock_guard guard(mu);
        stop = true;
      }
      cv.notify_one();
      thread.join();
    }
    if (!released) {
      released = true;
      tsfn.Release();
    }
  }

  void Wake() {
    {
      std::lock_guard guard(mu);
      wake = true;
    }
    cv.notify_one();
  }

  Napi::Object EventToJs(Napi::Env env, const LinkEvent& e) {
    Napi::Object o = Napi::Object::New(env);
    static constexpr const char* kKinds[] = {"message", "online", "offline", "acked", "failed"};
    o.Set("kind", kKinds[static_cast<int>(e.kind)]);
    o.Set("node", Napi::Number::New(env, e.node));
    switch (e.kind) {
      case EventKind::kMessage:
        o.Set("message", MessageToJs(env, e.frame));
        break;
      case EventKind::kOnline:
      case EventKind::kOffline:
        o.Set("reason", ReasonName(e.reason));
        break;
      case EventKind::kAcked: {
        o.Set("id", Napi::Number::New(env, e.command_id));
        bool ack = e.frame.type == WH_T_ACK;
        o.Set("result", ResultName(ack ? e.frame.u.ack.result : e.frame.u.rfid_data.result));
        o.Set("detail", Napi::Number::New(env, ack ? e.frame.u.ack.detail : 0));
        o.Set("transmissions", Napi::Number::New(env, e.transmissions));
        o.Set("rttMs", Napi::Number::New(env, e.rtt_ms));
        if (!ack) o.Set("message", MessageToJs(env, e.frame));  // RFID_READ's answer
        break;
      }
      case EventKind::kFailed:
        o.Set("id", Napi::Number::New(env, e.command_id));
        o.Set("reason", ReasonName(e.reason));
        break;
    }
    return o;
  }

  // JS thread, from the thread-safe function: hands one batch to write() and onEvent().
  void Deliver(Napi::Env env) {
    uint64_t cpu0 = CpuNs(CLOCK_THREAD_CPUTIME_ID);
    std::vector<uint8_t> bytes;
    std::vector<LinkEvent> events;
    {
      std::lock_guard guard(mu);
      delivery_queued = false;
      core->TakeOutput(bytes, events);
    }
    if (closed || gone) return;
    Napi::HandleScope scope(env);
    Napi::Value buffer, batch;
    if (!bytes.empty()) buffer = Napi::Buffer<uint8_t>::Copy(env, bytes.data(), bytes.size());
    if (!events.empty()) {
      Napi::Array list = Napi::Array::New(env, events.size());
      for (uint32_t i = 0; i < events.size(); i++) list.Set(i, EventToJs(env, events[i]));
      batch = list;
    }
    deliver_cpu_ns += CpuNs(CLOCK_THREAD_CPUTIME_ID) - cpu0;
    // A callback that throws leaves the exception pending: Node reports it as uncaught.
    if (!buffer.IsEmpty() && !CallBack(env, write, {buffer}, gone)) return;
    if (!batch.IsEmpty()) CallBack(env, on_event, {batch}, gone);
  }
};

void CallJs(Napi::Env env, Napi::Function, std::shared_ptr<LinkState>* ctx, void*) {
  if (env == nullptr) return;  // the environment is going away
  (*ctx)->Deliver(env);
}

class Link : public Napi::ObjectWrap<Link> {
 public:
  explicit Link(const Napi::CallbackInfo& info);
  ~Link() override { Close(); }

  Napi::Value Receive(const Napi::CallbackInfo& info);
  Napi::Value Send(const Napi::CallbackInfo& info);
  Napi::Value Stats(const Napi::CallbackInfo& info);
  Napi::Value Close(const Napi::CallbackInfo&) {
    Close();
    return Env().Undefined();
  }

 private:
  void Close() {
    if (!st_) return;
    if (hooked_) {
      hooked_ = false;
      napi_remove_env_cleanup_hook(env_, Cleanup, this);
    }
    st_->Stop();
  }
  // Env teardown (process exit, a worker ending) with the link still open.
  static void Cleanup(void* arg) {
    Link* self = static_cast<Link*>(arg);
    self->hooked_ = false;
    self->Close();
  }

  napi_env env_;
  std::shared_ptr<LinkState> st_;
  bool hooked_ = false;
};

// Reads an optional non-negative integer option; false with a pending exception when bad.
template <typename T>
bool Option(Napi::Env env, Napi::Object options, const char* name, T& out, double min, double max) {
  Napi::Value v = options.Get(name);
  if (v.IsUndefined()) return true;
  double d = v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : -1;
  if (!v.IsNumber() || d != static_cast<double>(static_cast<uint64_t>(d)) || d < min || d > max) {
    Napi::RangeError::New(env, std::string("createLink: option ") + name + " must be an integer in " +
                                   std::to_string(static_cast<uint64_t>(min)) + ".." +
                                   std::to_string(static_cast<uint64_t>(max)))
        .ThrowAsJavaScriptException();
    return false;
  }
  out = static_cast<T>(d);
  return true;
}

Link::Link(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Link>(info), env_(info.Env()) {
  Napi::Env env = info.Env();
  if (!info[0].IsObject()) {
    Napi::TypeError::New(env, "createLink: options must be an object").ThrowAsJavaScriptException();
    return;
  }
  Napi::Object o = info[0].As<Napi::Object>();
  // Read once each: see CommandFromJs on why a property is never read twice.
  Napi::Value write = o.Get("write");
  Napi::Value onEvent = o.Get("onEvent");
  if (!write.IsFunction() || !onEvent.IsFunction()) {
    Napi::TypeError::New(env, "createLink: options.write and options.onEvent must be functions")
        .ThrowAsJavaScriptException();
    return;
  }
  LinkConfig c;
  double seed = 0;
  if (!Option(env, o, "heartbeatPeriodMs", c.heartbeat_period_ms, 1, 60000) ||
      !Option(env, o, "linkTimeoutMs", c.link_timeout_ms, 1, 600000) ||
      !Option(env, o, "ackTimeoutMs", c.ack_timeout_ms, 1, 60000) ||
      !Option(env, o, "ackTimeoutMaxMs", c.ack_timeout_max_ms, 1, 600000) ||
      !Option(env, o, "maxTransmissions", c.max_transmissions, 1, 255) ||
      !Option(env, o, "retransmitJitterPercent", c.jitter_percent, 0, 100) ||
      !Option(env, o, "telemetryPeriodMs", c.telemetry_period_ms, 50, 1000) ||
      !Option(env, o, "maxQueuedCommands", c.max_queued, 1, 4096) ||
      !Option(env, o, "controllerSession", c.controller_session, 0, 4294967295.0) ||
      !Option(env, o, "seed", seed, 0, 9007199254740991.0)) {
    return;
  }
  c.seed = static_cast<uint64_t>(seed);

  auto st = std::make_shared<LinkState>();
  st->core = std::make_unique<LinkCore>(c, NowMs());
  st->write = Napi::Persistent(write.As<Napi::Function>());
  st->on_event = Napi::Persistent(onEvent.As<Napi::Function>());
  // At most one delivery is queued at a time (delivery_queued), so 2 bounds the queue.
  auto* ctx = new std::shared_ptr<LinkState>(st);
  st->tsfn = Tsfn::New(env, "warehouse.link", 2, 1, ctx,
                       [](Napi::Env, void*, std::shared_ptr<LinkState>* c) { delete c; });
  // The link must not keep the process alive by itself: the serial port does that.
  st->tsfn.Unref(env);
  st->thread = std::thread([raw = st.get()] { raw->Run(); });
  // Named so `top -H` and /proc/<pid>/task/*/comm show the link threads (15 chars max); named
  // here rather than by the thread itself so the name is there when the constructor returns.
  pthread_setname_np(st->thread.native_handle(), "wh-link");
  st_ = std::move(st);
  // Registered after the TSFN's own hook, so it runs first (hooks run in reverse order):
  // the thread is joined before the TSFN is torn down.
  hooked_ = napi_add_env_cleanup_hook(env, Cleanup, this) == napi_ok;
}

Napi::Value Link::Receive(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) {
    Napi::TypeError::New(env, "receive: bytes must be a Uint8Array").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  // Bytes arriving after close() (a serial read in flight) are ignored.
  if (!st_ || st_->closed) return env.Undefined();
  Napi::Uint8Array bytes = info[0].As<Napi::Uint8Array>();
  {
    std::lock_guard guard(st_->mu);
    if (st_->inbox.size() + bytes.ElementLength() > kInboxLimit) {
      st_->inbox_dropped += bytes.ElementLength();
    } else {
      st_->inbox.insert(st_->inbox.end(), bytes.Data(), bytes.Data() + bytes.ElementLength());
    }
    st_->wake = true;
  }
  st_->cv.notify_one();
  return env.Undefined();
}

Napi::Value Link::Send(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!st_ || st_->closed) {
    Napi::Error::New(env, "send: the link is closed").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  double node = info[0].IsNumber() ? info[0].As<Napi::Number>().DoubleValue() : -1;
  if (!(node >= WH_ADDR_BOT_FIRST && node <= WH_ADDR_LED_LAST && node == static_cast<uint16_t>(node))) {
    Napi::RangeError::New(env, "send: node must be a bot (1..4095) or balcony LED (4096..4351) address")
        .ThrowAsJavaScriptException();
    return env.Undefined();
  }
  wh_frame f;
  if (!CommandFromJs(env, info[1], f)) return env.Undefined();
  uint32_t id;
  {
    std::lock_guard guard(st_->mu);
    id = st_->core->Send(static_cast<uint16_t>(node), f, NowMs());
    st_->wake = true;
  }
  st_->cv.notify_one();
  if (id == 0) {
    Napi::RangeError::New(env, "send: a field of the message is out of its range (firmware-protocol/messages.json)")
        .ThrowAsJavaScriptException();
    return env.Undefined();
  }
  return Napi::Number::New(env, id);
}

Napi::Value Link::Stats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object s = Napi::Object::New(env);
  if (!st_) return env.Undefined();
  auto num = [&](Napi::Object o, const char* k, double v) { o.Set(k, Napi::Number::New(env, v)); };
  std::lock_guard guard(st_->mu);
  const LinkCore& core = *st_->core;
  const LinkCounters& c = core.counters();
  const wh_decoder& d = core.decoder();
  uint64_t now = NowMs();
  num(s, "controllerSession", core.controller_session());
  num(s, "bytesIn", d.bytes);
  num(s, "bytesOut", static_cast<double>(c.bytes_out));
  num(s, "framesIn", d.frames);
  num(s, "framesOut", static_cast<double>(c.frames_out));
  Napi::Object errors = Napi::Object::New(env);
  for (int k = WH_E_OVERSIZE; k < WH_E_COUNT; k++) num(errors, wh_status_name(static_cast<wh_status>(k)), d.errors[k]);
  num(errors, "address", static_cast<double>(c.dropped_address));
  num(errors, "unexpected", static_cast<double>(c.dropped_unexpected));
  num(errors, "inboxOverflowBytes", static_cast<double>(st_->inbox_dropped));
  s.Set("dropped", errors);
  num(s, "retransmits", static_cast<double>(c.retransmits));
  num(s, "duplicates", static_cast<double>(c.duplicates));
  num(s, "heartbeats", static_cast<double>(c.heartbeats));
  num(s, "versionRejected", static_cast<double>(c.version_rejected));
  Napi::Object cmds = Napi::Object::New(env);
  num(cmds, "sent", static_cast<double>(c.commands_sent));
  num(cmds, "acked", static_cast<double>(c.commands_acked));
  num(cmds, "failed", static_cast<double>(c.commands_failed));
  num(cmds, "queueFull", static_cast<double>(c.commands_queue_full));
  s.Set("commands", cmds);
  Napi::Object rtt = Napi::Object::New(env);
  num(rtt, "samples", static_cast<double>(core.rtt_samples()));
  num(rtt, "p50Ms", core.RttPercentile(50));
  num(rtt, "p99Ms", core.RttPercentile(99));
  num(rtt, "maxMs", core.RttPercentile(100));
  s.Set("rtt", rtt);
  std::vector<NodeStatus> nodes = core.Nodes();
  Napi::Array list = Napi::Array::New(env, nodes.size());
  for (uint32_t i = 0; i < nodes.size(); i++) {
    Napi::Object n = Napi::Object::New(env);
    num(n, "address", nodes[i].address);
    n.Set("online", Napi::Boolean::New(env, nodes[i].online));
    num(n, "session", nodes[i].session);
    num(n, "queued", nodes[i].queued);
    num(n, "framesIn", static_cast<double>(nodes[i].frames_in));
    num(n, "lastHeardMsAgo", static_cast<double>(now - std::min(now, nodes[i].last_heard_ms)));
    list.Set(i, n);
  }
  s.Set("nodes", list);
  num(s, "threadCpuMs", static_cast<double>(st_->ThreadCpuNs()) / 1e6);
  num(s, "deliverCpuMs", static_cast<double>(st_->deliver_cpu_ns) / 1e6);
  return s;
}

}  // namespace

Napi::Function DefineLink(Napi::Env env) {
  return Link::DefineClass(env, "Link",
                           {Link::InstanceMethod<&Link::Receive>("receive"), Link::InstanceMethod<&Link::Send>("send"),
                            Link::InstanceMethod<&Link::Stats>("stats"), Link::InstanceMethod<&Link::Close>("close")});
}

}  // namespace warehouse
