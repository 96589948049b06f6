// The functions the module exports; each lives in the file named after its concept.
#pragma once

#include <napi.h>

namespace warehouse {

// pty.cc: openPty() -> { fd, path }
Napi::Value OpenPty(const Napi::CallbackInfo& info);

// notify.cc: notify(state) -> boolean
Napi::Value Notify(const Napi::CallbackInfo& info);

// link_binding.cc: the Link class, one bot link per serial line (docs/native.md)
Napi::Function DefineLink(Napi::Env env);

}  // namespace warehouse
