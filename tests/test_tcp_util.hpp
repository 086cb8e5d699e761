// Helpers for the TCP backend's tests: a free port, a world of ranks that are
// threads of this process but talk only over TCP (each calls tcp::connect()
// with the same Rendezvous, as separate processes would), and a log capture.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "transport/tcp/asio.hpp"
#include "transport/tcp/log.hpp"
#include "primitives/process_group.hpp"
#include "transport/tcp/tcp.hpp"

namespace ringlab::tcp::testing {

using namespace std::chrono_literals;

// A port nothing listens on right now (bind port 0, read it, close).
inline int free_port() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor acceptor(
      io, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
  return acceptor.local_endpoint().port();
}

inline Rendezvous local_rendezvous(int world, int rank, int port, Duration timeout = 10s) {
  Rendezvous r;
  r.master_addr = "127.0.0.1";
  r.master_port = port;
  r.rank = rank;
  r.world_size = world;
  r.timeout = timeout;
  r.handshake_timeout = 300ms;
  return r;
}

// Runs rank_body(rank) on `world` threads and joins them. Returns each
// rank's error ("" if it finished; "(empty error)" for an exception whose
// what() is empty, so it still counts as a failure).
inline std::vector<std::string> run_rank_threads(int world,
                                                 const std::function<void(int rank)>& rank_body) {
  std::vector<std::string> errors(static_cast<std::size_t>(world));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world; ++rank) {
    threads.emplace_back([&, rank] {
      std::string& error = errors[static_cast<std::size_t>(rank)];
      try {
        rank_body(rank);
      } catch (const std::exception& e) {
        error = e.what();
        if (error.empty()) error = "(empty error)";
      }
    });
  }
  for (auto& thread : threads) thread.join();
  return errors;
}

// Runs body(transport) on `world` threads, each connecting over TCP. Returns
// each rank's error ("" if it finished). A rank's transport is destroyed as
// soon as its body ends or throws, as a process that exits would close it.
inline std::vector<std::string> run_tcp(int world, const std::function<void(TcpTransport&)>& body,
                                        Duration timeout = 10s,
                                        const std::function<void(Rendezvous&)>& adjust = {}) {
  const int port = free_port();
  return run_rank_threads(world, [&](int rank) {
    Rendezvous r = local_rendezvous(world, rank, port, timeout);
    if (adjust) adjust(r);
    auto transport = connect(r);
    body(*transport);
  });
}

inline std::string first_error(const std::vector<std::string>& errors) {
  for (std::size_t r = 0; r < errors.size(); ++r)
    if (!errors[r].empty()) return "rank " + std::to_string(r) + ": " + errors[r];
  return {};
}

// Collects log lines while alive.
class LogCapture {
 public:
  LogCapture() {
    previous_ = set_log_sink([this](const std::string& line) {
      std::lock_guard lock(mutex_);
      lines_.push_back(line);
    });
  }
  ~LogCapture() { set_log_sink(std::move(previous_)); }

  std::vector<std::string> lines() {
    std::lock_guard lock(mutex_);
    return lines_;
  }
  // Waits (up to `limit`) for a line containing every piece.
  bool wait_for(const std::vector<std::string>& pieces, Duration limit = 3s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    do {
      for (const auto& line : lines()) {
        bool all = true;
        for (const auto& piece : pieces) all = all && line.find(piece) != std::string::npos;
        if (all) return true;
      }
      std::this_thread::sleep_for(5ms);
    } while (std::chrono::steady_clock::now() < deadline);
    return false;
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> lines_;
  LogSink previous_;
};

// A raw TCP client for sending garbage.
class RawClient {
 public:
  explicit RawClient(int port) : socket_(io_) {
    socket_.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"),
                                                   static_cast<unsigned short>(port)));
  }
  explicit RawClient(const std::string& host_port) : socket_(io_) {
    const auto colon = host_port.rfind(':');
    socket_.connect(boost::asio::ip::tcp::endpoint(
        boost::asio::ip::make_address(host_port.substr(0, colon)),
        static_cast<unsigned short>(std::stoi(host_port.substr(colon + 1)))));
  }
  void send(const void* data, std::size_t size) {
    boost::asio::write(socket_, boost::asio::buffer(data, size));
  }
  void send(const std::string& text) { send(text.data(), text.size()); }
  // True once the other side has closed (reads until EOF or an error), false
  // if it is still open after `limit`.
  bool closed_within(Duration limit) {
    socket_.non_blocking(true);
    const auto deadline = std::chrono::steady_clock::now() + limit;
    char sink[256];
    while (std::chrono::steady_clock::now() < deadline) {
      boost::system::error_code error;
      socket_.read_some(boost::asio::buffer(sink), error);
      if (error == boost::asio::error::would_block) {
        std::this_thread::sleep_for(5ms);
        continue;
      }
      if (error) return true;  // eof or reset
    }
    return false;
  }
  void close() { socket_.close(); }

 private:
  boost::asio::io_context io_;
  boost::asio::ip::tcp::socket socket_;
};

}  // namespace ringlab::tcp::testing

namespace ringlab::tcp::testing {

// Like run_tcp, with a ProcessGroup per rank over its TCP transport.
inline std::vector<std::string> run_tcp_groups(int world,
                                               const std::function<void(ProcessGroup&)>& body,
                                               ProcessGroupOptions options = {},
                                               Duration timeout = 10s) {
  if (options.timeout == kDefaultTimeout) options.timeout = timeout;
  const int port = free_port();
  return run_rank_threads(world, [&](int rank) {
    ProcessGroup pg(connect(local_rendezvous(world, rank, port, timeout)), options);
    body(pg);
  });
}

}  // namespace ringlab::tcp::testing
