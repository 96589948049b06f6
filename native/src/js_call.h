// Calling JS from a thread-safe function's callback, where the environment may be going away.
#pragma once

#include <napi.h>

#include <initializer_list>

namespace warehouse {

// worker.terminate() marks the worker's environment as stopping from another thread, at any
// moment; from then on Node-API refuses every call that could run JS with
// napi_pending_exception although nothing is pending. node-addon-api's Call() answers a failed
// call by throwing, which fails the same way (a fatal error unless
// NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS is defined), so the call is made raw here. False when
// `fn` did not return: if it threw, the exception stays pending (Node reports it as uncaught, or
// drops it if the environment is terminating); if nothing is pending the environment runs no
// more JS, and `gone` is set so that no further delivery touches it.
inline bool CallBack(Napi::Env env, const Napi::FunctionReference& fn, std::initializer_list<napi_value> args, bool& gone) {
  napi_value result;
  if (napi_call_function(env, env.Undefined(), fn.Value(), args.size(), args.begin(), &result) == napi_ok) return true;
  bool pending = false;
  if (napi_is_exception_pending(env, &pending) != napi_ok || !pending) gone = true;
  return false;
}

}  // namespace warehouse
