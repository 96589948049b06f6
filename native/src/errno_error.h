// System call failures raised as JS errors shaped like Node's own (code, errno, syscall).
#pragma once

#include <napi.h>

#include <string>

namespace warehouse {

// Sets a pending JS Error "<where>: <syscall> failed: <text> (<CODE>)" and returns undefined.
// Pass errno by value right after the failing call: later calls may overwrite it.
Napi::Value ThrowErrno(Napi::Env env, const char* where, const char* syscall, int err);

// Sets a pending JS Error with a plain message and returns undefined.
Napi::Value ThrowMessage(Napi::Env env, const std::string& message);

// Sets a pending JS TypeError with a plain message and returns undefined.
Napi::Value ThrowType(Napi::Env env, const std::string& message);

}  // namespace warehouse
