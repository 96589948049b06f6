// The functions the module exports; each lives in the file named after its concept.
#pragma once

#include <napi.h>

namespace warehouse {

// pty.cc: openPty() -> { fd, path }
Napi::Value OpenPty(const Napi::CallbackInfo& info);

// notify.cc: notify(state) -> boolean
Napi::Value Notify(const Napi::CallbackInfo& info);

// state_lock.cc: lockStateDir(path) -> { locked: true, fd } | { locked: false, holder }
Napi::Value LockStateDir(const Napi::CallbackInfo& info);

// link_binding.cc: the Link class, one bot link per serial line (docs/native.md)
Napi::Function DefineLink(Napi::Env env);

// planner_binding.cc: the LevelPlanner class, the realtime planner of one level
// (docs/planner-realtime.md)
Napi::Function DefineLevelPlanner(Napi::Env env);

// validator_binding.cc: validatePlan(grid, starts, steps, options?) over the independent plan
// validator
Napi::Value ValidatePlan(const Napi::CallbackInfo& info);

}  // namespace warehouse
