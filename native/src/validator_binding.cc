// validatePlan(grid, starts, steps, options?): replays a plan in the independent Validator
// (native/planner/validator.h) and returns the violations, for tests
// (docs/planner-realtime.md).
#include <napi.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "../planner/validator.h"
#include "addon.h"
#include "planner_values.h"

namespace warehouse {

using namespace planner_values;

Napi::Value ValidatePlan(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  wp::Grid grid;
  if (!GridFromJs(env, info[0], "validatePlan: grid", grid)) return env.Undefined();
  wp::ValidatorOptions vo;
  if (info[3].IsObject()) {
    Napi::Object o = info[3].As<Napi::Object>();
    if (!BoolOption(env, o, "rotations", vo.rotations) || !BoolOption(env, o, "forbidCycles", vo.forbidCycles) ||
        !DurationsFromJs(env, o, vo.durations)) {
      return env.Undefined();
    }
  } else if (!info[3].IsUndefined()) {
    Fail(env, "validatePlan: options must be an object");
    return env.Undefined();
  }
  if (!info[1].IsArray() || !info[2].IsArray()) {
    Fail(env, "validatePlan: starts and steps must be arrays");
    return env.Undefined();
  }
  wp::Validator v(grid, vo);
  // A record without `after` gets the state the action leads to, as a bot would reach it: the
  // validator still checks the action itself (cells, collisions, durations).
  struct Replay {
    wp::State state;
    wp::Action action = wp::Action::Wait;
    int32_t left = 0;  // steps of the running action still to go
    wp::State target;
  };
  std::unordered_map<wp::BotId, Replay> replay;
  auto durationOf = [&](wp::Action a) -> int32_t {
    switch (a) {
      case wp::Action::Forward: return vo.durations.forward;
      case wp::Action::TurnLeft:
      case wp::Action::TurnRight: return vo.durations.turn;
      case wp::Action::Lift: return vo.durations.lift;
      case wp::Action::Lower: return vo.durations.lower;
      case wp::Action::Wait: return 1;
    }
    return 1;
  };
  Napi::Array starts = info[1].As<Napi::Array>();
  for (uint32_t i = 0; i < starts.Length(); i++) {
    const std::string what = "validatePlan: starts[" + std::to_string(i) + "]";
    Napi::Value e = starts.Get(i);
    wp::State s;
    wp::BotId bot;
    if (!e.IsObject() || !BotArg(env, e.As<Napi::Object>().Get("bot"), what, bot) || !StateFromJs(env, e, what, s)) {
      if (!env.IsExceptionPending()) Fail(env, what + " must be an object { bot, cell, heading, lifted }");
      return env.Undefined();
    }
    v.addBot(bot, s);
    replay[bot].state = s;
  }
  Napi::Array steps = info[2].As<Napi::Array>();
  std::vector<wp::Record> records;
  for (uint32_t t = 0; t < steps.Length(); t++) {
    Napi::Value sv = steps.Get(t);
    if (!sv.IsArray()) {
      Fail(env, "validatePlan: steps[" + std::to_string(t) + "] must be an array of records");
      return env.Undefined();
    }
    Napi::Array list = sv.As<Napi::Array>();
    records.clear();
    for (uint32_t k = 0; k < list.Length(); k++) {
      const std::string what = "validatePlan: steps[" + std::to_string(t) + "][" + std::to_string(k) + "]";
      Napi::Value rv = list.Get(k);
      if (!rv.IsObject()) {
        Fail(env, what + " must be an object { bot, action, after? }");
        return env.Undefined();
      }
      Napi::Object ro = rv.As<Napi::Object>();
      wp::Record r;
      if (!BotArg(env, ro.Get("bot"), what, r.bot)) return env.Undefined();
      Napi::Value av = ro.Get("action");
      if (!av.IsString() || !ActionFromName(av.As<Napi::String>().Utf8Value(), r.action)) {
        Fail(env, what + ".action must be one of forward, turn_left, turn_right, wait, lift, lower");
        return env.Undefined();
      }
      Replay& p = replay[r.bot];
      if (p.left == 0 || p.action != r.action) {
        // starts an action: where it leads
        p.action = r.action;
        p.left = std::max<int32_t>(1, durationOf(r.action));
        p.target = p.state;
        switch (r.action) {
          case wp::Action::Forward: {
            const wp::Cell n = grid.neighbour(p.state.cell, p.state.heading);
            if (n != wp::kNoCell) p.target.cell = n;
            break;
          }
          case wp::Action::TurnRight: p.target.heading = wp::turnRight(p.state.heading); break;
          case wp::Action::TurnLeft: p.target.heading = wp::turnLeft(p.state.heading); break;
          case wp::Action::Lift: p.target.lifted = true; break;
          case wp::Action::Lower: p.target.lifted = false; break;
          case wp::Action::Wait: break;
        }
      }
      --p.left;
      r.after = p.left == 0 ? p.target : p.state;
      Napi::Value after = ro.Get("after");
      if (!after.IsUndefined()) {
        if (!StateFromJs(env, after, what + ".after", r.after)) return env.Undefined();
      }
      if (p.left == 0) p.state = r.after;
      records.push_back(r);
    }
    v.step(records);
  }
  Napi::Object out = Napi::Object::New(env);
  out.Set("count", Napi::Number::New(env, static_cast<double>(v.violationCount())));
  const std::vector<wp::Violation>& vs = v.violations();
  Napi::Array list = Napi::Array::New(env, vs.size());
  for (uint32_t i = 0; i < vs.size(); i++) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("step", Napi::Number::New(env, static_cast<double>(vs[i].step)));
    o.Set("bot", Napi::Number::New(env, vs[i].bot));
    o.Set("other", Napi::Number::New(env, vs[i].other));
    o.Set("rule", wp::ruleName(vs[i].rule));
    o.Set("cell", Napi::Number::New(env, vs[i].cell));
    o.Set("detail", vs[i].detail);
    list.Set(i, o);
  }
  out.Set("violations", list);
  return out;
}

}  // namespace warehouse
