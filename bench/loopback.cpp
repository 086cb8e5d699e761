// The loopback ceiling (see loopback.hpp).
#include "bench/loopback.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

namespace ringlab::bench {

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void fail(const std::string& call) {
  throw std::runtime_error("bench --op loopback: " + call + " failed: " + std::strerror(errno));
}

// A descriptor closed with its owner.
class Socket {
 public:
  explicit Socket(int fd = -1) : fd_(fd) {}
  Socket(Socket&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Socket& operator=(Socket&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  int fd() const { return fd_; }

 private:
  int fd_;
};

// One connected pair over 127.0.0.1: [0] the sender's end, [1] the receiver's.
std::pair<Socket, Socket> connected_pair() {
  Socket listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (listener.fd() < 0) fail("socket()");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (::bind(listener.fd(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
    fail("bind(127.0.0.1)");
  if (::listen(listener.fd(), 1) != 0) fail("listen()");
  if (::getsockname(listener.fd(), reinterpret_cast<sockaddr*>(&address), &length) != 0)
    fail("getsockname()");
  Socket sender(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (sender.fd() < 0) fail("socket()");
  if (::connect(sender.fd(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
    fail("connect(127.0.0.1)");
  Socket receiver(::accept4(listener.fd(), nullptr, nullptr, SOCK_CLOEXEC));
  if (receiver.fd() < 0) fail("accept()");
  return {std::move(sender), std::move(receiver)};
}

// What one pair's threads do in a run: move `bytes` one way.
void send_all(int fd, const std::byte* data, std::size_t bytes) {
  for (std::size_t done = 0; done < bytes;) {
    const ssize_t n =
        ::send(fd, data + done, std::min(kLoopbackWriteBytes, bytes - done), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("send()");
    done += static_cast<std::size_t>(n);
  }
}

void receive_all(int fd, std::byte* data, std::size_t bytes) {
  for (std::size_t done = 0; done < bytes;) {
    const ssize_t n = ::recv(fd, data + done, std::min(kLoopbackWriteBytes, bytes - done), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("recv()");
    done += static_cast<std::size_t>(n);
  }
}

// The runs of one size. The threads live for the whole size; every run they
// meet at `start` (the caller's clock starts) and at `end` (it stops).
class Runs {
 public:
  Runs(std::vector<std::pair<Socket, Socket>>& connections, std::size_t bytes, int runs)
      : connections_(connections),
        bytes_(bytes),
        runs_(runs),
        start_(static_cast<std::ptrdiff_t>(2 * connections.size() + 1)),
        end_(static_cast<std::ptrdiff_t>(2 * connections.size() + 1)),
        sent_(connections.size()),
        received_(connections.size()) {
    for (std::size_t i = 0; i < connections.size(); ++i) {
      sent_[i].resize(bytes);
      received_[i].resize(bytes);
      for (std::size_t b = 0; b < bytes; ++b)
        sent_[i][b] = static_cast<std::byte>((b * 131 + i * 7) & 0xFF);
    }
  }

  // Runs every run; returns each run's time in microseconds.
  std::vector<double> time_runs() {
    std::vector<std::jthread> threads;
    for (std::size_t i = 0; i < connections_.size(); ++i) {
      threads.emplace_back([this, i] { loop(i, true); });
      threads.emplace_back([this, i] { loop(i, false); });
    }
    std::vector<double> times;
    for (int run = 0; run < runs_; ++run) {
      start_.arrive_and_wait();
      const auto started = Clock::now();
      end_.arrive_and_wait();
      times.push_back(std::chrono::duration<double, std::micro>(Clock::now() - started).count());
    }
    threads.clear();  // joined
    if (failed_) std::rethrow_exception(failure_);
    return times;
  }

  // Bytes that differ from what was sent, over every connection.
  std::int64_t wrong() const {
    std::int64_t count = 0;
    for (std::size_t i = 0; i < sent_.size(); ++i)
      for (std::size_t b = 0; b < bytes_; ++b) count += sent_[i][b] != received_[i][b];
    return count;
  }

 private:
  void loop(std::size_t i, bool sends) {
    for (int run = 0; run < runs_; ++run) {
      // The last run is the checked one: it must fill a cleared buffer.
      if (!sends && run + 1 == runs_) std::fill(received_[i].begin(), received_[i].end(), std::byte{0});
      start_.arrive_and_wait();
      if (!failed_) {
        try {
          if (sends)
            send_all(connections_[i].first.fd(), sent_[i].data(), bytes_);
          else
            receive_all(connections_[i].second.fd(), received_[i].data(), bytes_);
        } catch (...) {
          if (!failed_.exchange(true)) failure_ = std::current_exception();
          // The other end may wait for bytes that will not come: stop it.
          ::shutdown(connections_[i].first.fd(), SHUT_RDWR);
        }
      }
      end_.arrive_and_wait();
    }
  }

  std::vector<std::pair<Socket, Socket>>& connections_;
  std::size_t bytes_;
  int runs_;
  std::barrier<> start_, end_;
  std::vector<std::vector<std::byte>> sent_, received_;
  std::atomic<bool> failed_{false};
  std::exception_ptr failure_;
};

}  // namespace

std::vector<Row> run_loopback(const BenchOptions& o, int pairs, bool print) {
  if (pairs < 1)
    throw std::invalid_argument("bench --op loopback: -n is the number of connections (1 or more)");
  check_sizes(o);
  std::vector<std::pair<Socket, Socket>> connections;
  for (int i = 0; i < pairs; ++i) connections.push_back(connected_pair());
  if (print) {
    std::printf("# ringlab bench: loopback, %d plain TCP connection%s over 127.0.0.1, %zu KiB "
                "writes; algbw = one connection, busbw = all of them\n",
                pairs, pairs == 1 ? "" : "s", kLoopbackWriteBytes >> 10);
    std::printf("#%11s %12s %8s %6s %5s %10s %8s %8s %6s\n", "size", "count", "type", "redop",
                "root", "time", "algbw", "busbw", "#wrong");
    std::printf("#%11s %12s %8s %6s %5s %10s %8s %8s %6s\n", "(B)", "(elements)", "", "", "",
                "(us)", "(GB/s)", "(GB/s)", "");
    std::fflush(stdout);
  }
  std::vector<Row> rows;
  for (std::size_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= 2) {
    // The warm-up runs, the timed runs and the checked run, with one set of threads.
    Runs runs(connections, bytes, o.warmup + o.iters + 1);
    const std::vector<double> times = runs.time_runs();
    double total = 0;
    for (int i = 0; i < o.iters; ++i) total += times[static_cast<std::size_t>(o.warmup + i)];
    Row row{bytes, bytes, total / o.iters, 0, 0, runs.wrong()};
    row.algbw_gbs = static_cast<double>(bytes) / (row.time_us * 1e3);
    row.busbw_gbs = row.algbw_gbs * pairs;
    rows.push_back(row);
    if (print) {
      std::printf(" %11zu %12zu %8s %6s %5s %10.1f %8.3f %8.3f %6lld\n", row.bytes, row.count,
                  "uint8", "none", "-", row.time_us, row.algbw_gbs, row.busbw_gbs,
                  static_cast<long long>(row.wrong));
      std::fflush(stdout);
    }
    if (bytes > o.max_bytes / 2) break;
  }
  return rows;
}

}  // namespace ringlab::bench
