// Who drives the TCP engine's sockets (see driver.hpp).
#include "transport/tcp/driver.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "transport/transport.hpp"

namespace ringlab::tcp {

Driver::Driver(int rank) : wake_fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (wake_fd_ < 0)
    throw CommError("rank " + std::to_string(rank) + ": eventfd failed: " + std::strerror(errno));
}

Driver::~Driver() { ::close(wake_fd_); }

void Driver::follow(std::unique_lock<std::mutex>& lock, Clock::time_point until) {
  ++followers_;
  progressed_.wait_until(lock, until);
  --followers_;
}

void Driver::wake() const {
  if (!driving_) return;
  const std::uint64_t one = 1;
  [[maybe_unused]] auto ignored = ::write(wake_fd_, &one, sizeof one);
}

void Driver::clear_wake() const {
  std::uint64_t count;
  [[maybe_unused]] auto ignored = ::read(wake_fd_, &count, sizeof count);
}

}  // namespace ringlab::tcp
