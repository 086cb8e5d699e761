// Plain blocking loopback sockets for the fuzz targets that talk to a live
// server: connect, send everything, read until the server closes.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <vector>

namespace ringlab::fuzz {

// A connected socket to 127.0.0.1:port, closed when it goes.
class Loopback {
 public:
  explicit Loopback(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ < 0 ||
        !connected(::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address))) {
      std::perror("fuzz: cannot connect to the server under test");
      std::abort();
    }
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  ~Loopback() { ::close(fd_); }
  Loopback(const Loopback&) = delete;
  Loopback& operator=(const Loopback&) = delete;

  // False once the server has closed its end (a write fails).
  bool send(std::span<const std::byte> bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      bytes = bytes.subspan(static_cast<std::size_t>(n));
    }
    return true;
  }

  // Reads exactly `count` bytes; false on end of stream or after `timeout`.
  bool read_exactly(std::byte* into, std::size_t count, std::chrono::milliseconds timeout) {
    while (count > 0) {
      const ssize_t n = read_some(into, count, timeout);
      if (n <= 0) return false;
      into += n;
      count -= static_cast<std::size_t>(n);
    }
    return true;
  }

  // Says it has sent everything, then reads until the server closes. A
  // server that keeps the connection open past `timeout` is a hang: abort, so
  // libFuzzer keeps the input.
  void finish(std::chrono::milliseconds timeout) {
    ::shutdown(fd_, SHUT_WR);
    std::byte sink[4096];
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        std::fprintf(stderr, "fuzz: the server kept a finished connection open for %lld ms\n",
                     static_cast<long long>(timeout.count()));
        std::abort();
      }
      const ssize_t n = read_some(sink, sizeof sink, left);
      if (n == 0 || n == -1) return;  // closed, or reset: the server let go
    }
  }

 private:
  // libFuzzer's timers (SIGALRM, once a second) interrupt blocking calls:
  // each call below starts again (or, for connect, waits for the connection
  // the kernel goes on making) on EINTR.

  // Whether connect() (its result `status`) ended connected.
  bool connected(int status) {
    if (status == 0) return true;
    if (errno != EINTR) return false;
    pollfd ready{fd_, POLLOUT, 0};
    while (::poll(&ready, 1, 5000) < 0)
      if (errno != EINTR) return false;
    int error = 0;
    socklen_t length = sizeof error;
    if (::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &error, &length) != 0 || error != 0) {
      errno = error;
      return false;
    }
    return true;
  }

  // 0 at end of stream, -1 on an error (a reset), kTimedOut after `timeout`.
  ssize_t read_some(std::byte* into, std::size_t count, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd ready{fd_, POLLIN, 0};
      const int polled = ::poll(&ready, 1, static_cast<int>(std::max<long long>(left.count(), 0)));
      if (polled < 0 && errno == EINTR) continue;
      if (polled == 0) return kTimedOut;
      if (polled < 0) return -1;
      const ssize_t n = ::recv(fd_, into, count, 0);
      if (n < 0 && errno == EINTR) continue;
      return n;
    }
  }

  static constexpr ssize_t kTimedOut = -2;
  int fd_;
};

// The input, read front to back; past its end every read gives zeros.
class Input {
 public:
  Input(const std::uint8_t* data, std::size_t size)
      : bytes_(reinterpret_cast<const std::byte*>(data), size) {}
  bool empty() const { return bytes_.empty(); }
  std::uint8_t byte() {
    if (bytes_.empty()) return 0;
    const auto b = std::to_integer<std::uint8_t>(bytes_.front());
    bytes_ = bytes_.subspan(1);
    return b;
  }
  // The next `count` bytes (fewer at the end).
  std::span<const std::byte> take(std::size_t count) {
    const auto part = bytes_.first(std::min(count, bytes_.size()));
    bytes_ = bytes_.subspan(part.size());
    return part;
  }
  std::span<const std::byte> rest() { return take(bytes_.size()); }

 private:
  std::span<const std::byte> bytes_;
};

}  // namespace ringlab::fuzz
