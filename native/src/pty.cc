// Pseudo-terminal pairs for the simulated site: a serial library opens the slave path as if
// it were a USB serial adapter, while the simulator plays the device on the master fd.
#include <fcntl.h>
#include <stdlib.h>
#include <termios.h>

#include <array>
#include <cerrno>
#include <optional>

#include "addon.h"
#include "errno_error.h"
#include "fd.h"

namespace warehouse {
namespace {

struct Failure {
  const char* syscall;
  int err;
};

// The line settings belong to the pair, not to a descriptor, so raw mode set through a
// short-lived slave descriptor stays for whoever opens the path later (until the master
// closes). Raw mode matters: the default line discipline would echo, turn \n into \r\n and
// eat ^C, ^S and friends, which are ordinary bytes in a binary protocol.
std::optional<Failure> MakeRaw(const char* slave_path) {
  Fd slave(open(slave_path, O_RDWR | O_NOCTTY | O_CLOEXEC));
  if (!slave.ok()) return Failure{"open", errno};
  termios settings{};
  if (tcgetattr(slave.get(), &settings) != 0) return Failure{"tcgetattr", errno};
  cfmakeraw(&settings);
  if (tcsetattr(slave.get(), TCSANOW, &settings) != 0) return Failure{"tcsetattr", errno};
  return std::nullopt;
}

}  // namespace

Napi::Value OpenPty(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  constexpr const char* kWhere = "openPty";
  // O_NOCTTY: the daemon must never acquire a controlling terminal by accident;
  // O_CLOEXEC: the master must not leak into child processes (glibc passes it to open).
  Fd master(posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
  if (!master.ok()) return ThrowErrno(env, kWhere, "posix_openpt", errno);
  if (grantpt(master.get()) != 0) return ThrowErrno(env, kWhere, "grantpt", errno);
  if (unlockpt(master.get()) != 0) return ThrowErrno(env, kWhere, "unlockpt", errno);
  std::array<char, 128> path{};
  // ptsname_r returns the error number itself instead of setting errno.
  if (int err = ptsname_r(master.get(), path.data(), path.size()); err != 0) {
    return ThrowErrno(env, kWhere, "ptsname_r", err);
  }
  if (std::optional<Failure> failure = MakeRaw(path.data())) {
    return ThrowErrno(env, kWhere, failure->syscall, failure->err);
  }

  Napi::Object result = Napi::Object::New(env);
  result.Set("path", Napi::String::New(env, path.data()));
  result.Set("fd", Napi::Number::New(env, master.release()));
  return result;
}

}  // namespace warehouse
