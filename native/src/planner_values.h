// JS values <-> the planner's types (actions, events, states, grids, durations), and the checks
// of the arguments that carry them, shared by the LevelPlanner class (planner_binding.cc) and
// validatePlan (validator_binding.cc). A check that fails returns false with a pending
// TypeError or RangeError naming the argument.
#pragma once

#include <napi.h>

#include <string>

#include "../planner/level_engine.h"
#include "../planner/model.h"

namespace warehouse::planner_values {

namespace wp = wh::planner;

const char* ActionName(wp::Action a);
bool ActionFromName(const std::string& s, wp::Action& out);
const char* EventName(wp::EngineEventKind k);
Napi::Object StateToJs(Napi::Env env, const wp::State& s);

/** Throws a TypeError (a RangeError with `range`) and returns false. */
bool Fail(Napi::Env env, const std::string& message, bool range = false);
bool Integer(Napi::Env env, Napi::Value v, const std::string& what, double min, double max, double& out);
bool Bool(Napi::Env env, Napi::Value v, const std::string& what, bool& out);
bool BotArg(Napi::Env env, Napi::Value v, const std::string& fn, wp::BotId& out);
bool CellArg(Napi::Env env, Napi::Value v, const std::string& what, wp::Cell& out);
bool HeadingArg(Napi::Env env, Napi::Value v, const std::string& what, wp::Heading& out);
/** cell, heading, lifted as three arguments from `at` on. */
bool StateArgs(const Napi::CallbackInfo& info, size_t at, const std::string& fn, wp::State& s);
/** { cell, heading, lifted } */
bool StateFromJs(Napi::Env env, Napi::Value v, const std::string& what, wp::State& s);
/** { width, height, flags: Uint8Array } */
bool GridFromJs(Napi::Env env, Napi::Value v, const std::string& what, wp::Grid& g);

// An optional integer option; false with a pending exception when bad.
template <typename T>
bool Option(Napi::Env env, Napi::Object o, const char* name, T& out, double min, double max) {
  Napi::Value v = o.Get(name);
  if (v.IsUndefined()) return true;
  double d;
  if (!Integer(env, v, std::string("createLevelPlanner: option ") + name, min, max, d)) return false;
  out = static_cast<T>(d);
  return true;
}

bool BoolOption(Napi::Env env, Napi::Object o, const char* name, bool& out);
/** An optional `durations` { forward, turn, lift, lower } of `o`. */
bool DurationsFromJs(Napi::Env env, Napi::Object o, wp::Durations& d);

}  // namespace warehouse::planner_values
