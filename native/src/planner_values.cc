// JS values <-> the planner's types, and the checks of the arguments carrying them: see
// planner_values.h.
#include "planner_values.h"

#include <cstdint>
#include <string>

namespace warehouse::planner_values {

const char* ActionName(wp::Action a) {
  switch (a) {
    case wp::Action::Forward: return "forward";
    case wp::Action::TurnRight: return "turn_right";
    case wp::Action::TurnLeft: return "turn_left";
    case wp::Action::Wait: return "wait";
    case wp::Action::Lift: return "lift";
    case wp::Action::Lower: return "lower";
  }
  return "?";
}

bool ActionFromName(const std::string& s, wp::Action& out) {
  static constexpr wp::Action kAll[] = {wp::Action::Forward, wp::Action::TurnRight, wp::Action::TurnLeft,
                                        wp::Action::Wait,    wp::Action::Lift,      wp::Action::Lower};
  for (wp::Action a : kAll) {
    if (s == ActionName(a)) {
      out = a;
      return true;
    }
  }
  return false;
}

const char* EventName(wp::EngineEventKind k) {
  switch (k) {
    case wp::EngineEventKind::GoalReached: return "goal_reached";
    case wp::EngineEventKind::GoalUnreachable: return "goal_unreachable";
    case wp::EngineEventKind::Stalled: return "stalled";
    case wp::EngineEventKind::Unstalled: return "unstalled";
    case wp::EngineEventKind::Escaped: return "escaped";
    case wp::EngineEventKind::Replanned: return "replanned";
    case wp::EngineEventKind::Deviation: return "deviation";
    case wp::EngineEventKind::OverBudget: return "over_budget";
    case wp::EngineEventKind::BotAdded: return "bot_added";
    case wp::EngineEventKind::Refused: return "refused";
    case wp::EngineEventKind::Violation: return "violation";
    case wp::EngineEventKind::HeldUp: return "held_up";
  }
  return "?";
}

Napi::Object StateToJs(Napi::Env env, const wp::State& s) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("cell", Napi::Number::New(env, s.cell));
  o.Set("heading", Napi::Number::New(env, static_cast<int>(s.heading)));
  o.Set("lifted", Napi::Boolean::New(env, s.lifted));
  return o;
}

// ---- argument checks ----

bool Fail(Napi::Env env, const std::string& message, bool range) {
  if (range) {
    Napi::RangeError::New(env, message).ThrowAsJavaScriptException();
  } else {
    Napi::TypeError::New(env, message).ThrowAsJavaScriptException();
  }
  return false;
}

bool Integer(Napi::Env env, Napi::Value v, const std::string& what, double min, double max, double& out) {
  if (!v.IsNumber()) return Fail(env, what + " must be a number");
  const double d = v.As<Napi::Number>().DoubleValue();
  if (d != static_cast<double>(static_cast<int64_t>(d)) || d < min || d > max) {
    return Fail(env, what + " must be an integer in " + std::to_string(static_cast<int64_t>(min)) + ".." +
                         std::to_string(static_cast<int64_t>(max)),
                true);
  }
  out = d;
  return true;
}

bool Bool(Napi::Env env, Napi::Value v, const std::string& what, bool& out) {
  if (!v.IsBoolean()) return Fail(env, what + " must be a boolean");
  out = v.As<Napi::Boolean>().Value();
  return true;
}

bool BotArg(Napi::Env env, Napi::Value v, const std::string& fn, wp::BotId& out) {
  double d;
  if (!Integer(env, v, fn + ": bot id", 0, 2147483647.0, d)) return false;
  out = static_cast<wp::BotId>(d);
  return true;
}

bool CellArg(Napi::Env env, Napi::Value v, const std::string& what, wp::Cell& out) {
  double d;
  if (!Integer(env, v, what, 0, 2147483647.0, d)) return false;
  out = static_cast<wp::Cell>(d);
  return true;
}

bool HeadingArg(Napi::Env env, Napi::Value v, const std::string& what, wp::Heading& out) {
  double d;
  if (!Integer(env, v, what + " (0 east, 1 south, 2 west, 3 north)", 0, 3, d)) return false;
  out = static_cast<wp::Heading>(static_cast<int>(d));
  return true;
}

bool StateArgs(const Napi::CallbackInfo& info, size_t at, const std::string& fn, wp::State& s) {
  Napi::Env env = info.Env();
  return CellArg(env, info[at], fn + ": cell", s.cell) && HeadingArg(env, info[at + 1], fn + ": heading", s.heading) &&
         Bool(env, info[at + 2], fn + ": lifted", s.lifted);
}

bool StateFromJs(Napi::Env env, Napi::Value v, const std::string& what, wp::State& s) {
  if (!v.IsObject()) return Fail(env, what + " must be an object { cell, heading, lifted }");
  Napi::Object o = v.As<Napi::Object>();
  return CellArg(env, o.Get("cell"), what + ".cell", s.cell) && HeadingArg(env, o.Get("heading"), what + ".heading", s.heading) &&
         Bool(env, o.Get("lifted"), what + ".lifted", s.lifted);
}

bool GridFromJs(Napi::Env env, Napi::Value v, const std::string& what, wp::Grid& g) {
  if (!v.IsObject()) return Fail(env, what + " must be an object { width, height, flags }");
  Napi::Object o = v.As<Napi::Object>();
  double w, h;
  if (!Integer(env, o.Get("width"), what + ".width", 1, 65535, w) || !Integer(env, o.Get("height"), what + ".height", 1, 65535, h)) {
    return false;
  }
  Napi::Value f = o.Get("flags");
  if (!f.IsTypedArray() || f.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) {
    return Fail(env, what + ".flags must be a Uint8Array");
  }
  Napi::Uint8Array flags = f.As<Napi::Uint8Array>();
  if (flags.ElementLength() != static_cast<size_t>(w) * static_cast<size_t>(h)) {
    return Fail(env, what + ".flags must hold width * height cells", true);
  }
  g.width = static_cast<int32_t>(w);
  g.height = static_cast<int32_t>(h);
  g.flags.assign(flags.Data(), flags.Data() + flags.ElementLength());
  return true;
}

bool BoolOption(Napi::Env env, Napi::Object o, const char* name, bool& out) {
  Napi::Value v = o.Get(name);
  if (v.IsUndefined()) return true;
  return Bool(env, v, std::string("createLevelPlanner: option ") + name, out);
}

bool DurationsFromJs(Napi::Env env, Napi::Object o, wp::Durations& d) {
  Napi::Value v = o.Get("durations");
  if (v.IsUndefined()) return true;
  if (!v.IsObject()) return Fail(env, "durations must be an object { forward, turn, lift, lower }");
  Napi::Object x = v.As<Napi::Object>();
  return Option(env, x, "forward", d.forward, 1, 1000) && Option(env, x, "turn", d.turn, 1, 1000) &&
         Option(env, x, "lift", d.lift, 1, 1000) && Option(env, x, "lower", d.lower, 1, 1000);
}

}  // namespace warehouse::planner_values
