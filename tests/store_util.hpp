// Helpers for the store's tests (and the TCP transport's, which include
// them through test_tcp_util.hpp): a free port, a log capture, a raw client
// for sending garbage.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "net/asio.hpp"
#include "net/log.hpp"
#include "ops/comm_error.hpp"

namespace ringlab::store::testing {

using namespace std::chrono_literals;

// A port nothing listens on right now (bind port 0, read it, close).
inline int free_port() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor acceptor(
      io, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
  return acceptor.local_endpoint().port();
}

// Collects log lines while alive.
class LogCapture {
 public:
  LogCapture() {
    previous_ = net::set_log_sink([this](const std::string& line) {
      std::lock_guard lock(mutex_);
      lines_.push_back(line);
    });
  }
  ~LogCapture() { net::set_log_sink(std::move(previous_)); }

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
  net::LogSink previous_;
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

}  // namespace ringlab::store::testing
