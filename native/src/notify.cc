// sd_notify(3) by hand: one datagram to the socket systemd names in NOTIFY_SOCKET. Written
// here instead of linking libsystemd so that the addon builds and loads on any Linux box.
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <string>

#include "addon.h"
#include "errno_error.h"
#include "fd.h"

namespace warehouse {
namespace {

constexpr const char* kWhere = "notify";

// Fills `address` from NOTIFY_SOCKET: "/path" for a socket file, "@name" for Linux's abstract
// namespace (no file; the name starts with a NUL byte and is not NUL-terminated).
bool ToAddress(const std::string& target, sockaddr_un& address, socklen_t& length) {
  address = sockaddr_un{};
  address.sun_family = AF_UNIX;
  const size_t base = offsetof(sockaddr_un, sun_path);
  if (target[0] == '/') {
    if (target.size() >= sizeof(address.sun_path)) return false;
    memcpy(address.sun_path, target.data(), target.size());
    length = static_cast<socklen_t>(base + target.size() + 1);
    return true;
  }
  if (target[0] == '@' && target.size() > 1) {
    if (target.size() > sizeof(address.sun_path)) return false;
    memcpy(address.sun_path + 1, target.data() + 1, target.size() - 1);
    length = static_cast<socklen_t>(base + target.size());
    return true;
  }
  return false;
}

}  // namespace

Napi::Value Notify(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() != 1 || !info[0].IsString()) return ThrowType(env, "notify(state): state must be a string");
  const std::string state = info[0].As<Napi::String>().Utf8Value();

  // Unset or empty: not started by systemd (or NotifyAccess forbids it), nothing to tell.
  const char* variable = getenv("NOTIFY_SOCKET");
  if (variable == nullptr || variable[0] == '\0') return Napi::Boolean::New(env, false);
  const std::string target(variable);

  sockaddr_un address;
  socklen_t length = 0;
  if (!ToAddress(target, address, length)) {
    return ThrowMessage(env, std::string(kWhere) + ": NOTIFY_SOCKET=\"" + target +
                                 "\" is neither an absolute socket path nor an @abstract name that fits sockaddr_un");
  }

  Fd socket_fd(socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!socket_fd.ok()) return ThrowErrno(env, kWhere, "socket", errno);
  ssize_t sent;
  do {
    sent = sendto(socket_fd.get(), state.data(), state.size(), 0,
                  reinterpret_cast<const sockaddr*>(&address), length);
  } while (sent < 0 && errno == EINTR);
  if (sent < 0) return ThrowErrno(env, kWhere, "sendto", errno);
  // A datagram goes whole or not at all; anything else means the kernel changed the rules.
  if (static_cast<size_t>(sent) != state.size()) {
    return ThrowMessage(env, std::string(kWhere) + ": sendto sent " + std::to_string(sent) + " of " +
                                 std::to_string(state.size()) + " bytes");
  }
  return Napi::Boolean::New(env, true);
}

}  // namespace warehouse
