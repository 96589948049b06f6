// Errors carry the errno name as `code`, like Node's fs and net errors, so callers can
// branch on err.code without parsing the message.
#include "errno_error.h"

#include <string.h>

#include <string>
#include <system_error>

namespace warehouse {
namespace {

// The symbolic name ("ENOENT"), or "" where the C library has no table for it.
std::string ErrnoName(int err) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
  if (const char* name = strerrorname_np(err)) return name;
#endif
  (void)err;
  return "";
}

}  // namespace

Napi::Value ThrowErrno(Napi::Env env, const char* where, const char* syscall, int err) {
  std::string code = ErrnoName(err);
  // generic_category().message() is strerror without its shared static buffer.
  std::string message = std::string(where) + ": " + syscall + " failed: " + std::generic_category().message(err);
  if (!code.empty()) message += " (" + code + ")";
  Napi::Error error = Napi::Error::New(env, message);
  if (!code.empty()) error.Set("code", Napi::String::New(env, code));
  // Negative, as in Node's own system errors (err.errno === -os.constants.errno.ENOENT).
  error.Set("errno", Napi::Number::New(env, -err));
  error.Set("syscall", Napi::String::New(env, syscall));
  error.ThrowAsJavaScriptException();
  return env.Undefined();
}

Napi::Value ThrowMessage(Napi::Env env, const std::string& message) {
  Napi::Error::New(env, message).ThrowAsJavaScriptException();
  return env.Undefined();
}

Napi::Value ThrowType(Napi::Env env, const std::string& message) {
  Napi::TypeError::New(env, message).ThrowAsJavaScriptException();
  return env.Undefined();
}

}  // namespace warehouse
