// What a StoreServer is made of (store_server.cpp), shared with its sessions
// (session.cpp): the acceptor and the connections, the log, the memory
// budget, and the table of keys that answers the requests.
#pragma once

#include <list>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "store/key_table.hpp"
#include "store/memory_budget.hpp"
#include "store/request.hpp"
#include "store/socket_util.hpp"
#include "store/store.hpp"

namespace ringlab::store {

class Session;

class StoreServer::Impl {
 public:
  Impl(const std::string& bind_addr, int port, Duration handshake_timeout, StoreLimits limits,
       std::string job_token);
  ~Impl();

  int port() const { return port_; }
  Duration handshake_timeout() const { return handshake_timeout_; }
  const StoreLimits& limits() const { return limits_; }
  const std::string& job_token() const { return job_token_; }
  MemoryBudget& budget() { return budget_; }
  const MemoryBudget& budget() const { return budget_; }
  asio::io_context& io() { return io_; }

  // The answer to a request, or nullopt when a get/wait parked the session
  // (Session::answer() comes later). Never throws.
  std::optional<Reply> handle(const std::shared_ptr<Session>& session, StoreRequest& request) {
    return table_.handle(session, request);
  }
  // Writes "NAME: LINE" to the log, at most a few lines a second.
  void note(const std::string& line);

 private:
  void listen(const std::string& bind_addr, int port);
  void run();
  asio::awaitable<void> accept_connections();
  void serve(tcp::socket socket);
  bool evict_silent(const std::string& why);
  void refuse(tcp::socket& socket, const std::string& why);
  void shut_down();

  // First, so it outlives io_: requests that coroutines still hold when io_
  // destroys them give their bytes back to it.
  MemoryBudget budget_;
  asio::io_context io_;
  tcp::acceptor acceptor_{io_};
  asio::steady_timer backoff_{io_};
  int port_ = 0;
  std::string name_;  // "store at 127.0.0.1:29500"
  Duration handshake_timeout_;
  StoreLimits limits_;
  std::string job_token_;
  KeyTable table_{io_, limits_, budget_};
  std::list<std::shared_ptr<Session>> sessions_;  // oldest first
  bool stopping_ = false;
  Clock::time_point log_window_{};
  int log_lines_ = 0;
  int log_suppressed_ = 0;
  std::thread thread_;
};

}  // namespace ringlab::store
