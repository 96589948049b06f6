// The state directory's lock: one daemon per state directory. flock(2) on a file in it, held
// for the life of the process and released by the kernel when the process ends however it
// ends (no stale lock to clean up after a crash, unlike a pid file checked by hand). The holder
// writes its pid into the file so that a second daemon can name it.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "addon.h"
#include "errno_error.h"
#include "fd.h"

namespace warehouse {

Napi::Value LockStateDir(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() != 1 || !info[0].IsString()) return ThrowType(env, "lockStateDir(path): path must be a string");
  const std::string path = info[0].As<Napi::String>().Utf8Value();
  Fd fd(open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!fd.ok()) return ThrowErrno(env, "lockStateDir", "open", errno);
  Napi::Object out = Napi::Object::New(env);
  if (flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (err != EWOULDBLOCK) return ThrowErrno(env, "lockStateDir", "flock", err);
    char buffer[32] = {0};
    const ssize_t n = pread(fd.get(), buffer, sizeof(buffer) - 1, 0);
    out.Set("locked", false);
    out.Set("holder", std::string(buffer, n > 0 ? static_cast<size_t>(n) : 0));
    return out;
  }
  const std::string pid = std::to_string(getpid()) + "\n";
  if (ftruncate(fd.get(), 0) != 0 || pwrite(fd.get(), pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    return ThrowErrno(env, "lockStateDir", "write", errno);
  }
  // Kept open (and locked) until the process ends.
  out.Set("locked", true);
  out.Set("fd", fd.release());
  return out;
}

}  // namespace warehouse
