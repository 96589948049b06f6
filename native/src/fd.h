// An owned file descriptor, so that every early return closes it.
#pragma once

#include <unistd.h>

namespace warehouse {

class Fd {
 public:
  explicit Fd(int fd) noexcept : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;

  bool ok() const noexcept { return fd_ >= 0; }
  int get() const noexcept { return fd_; }
  // Hands the descriptor to the caller, who then closes it.
  int release() noexcept {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

}  // namespace warehouse
