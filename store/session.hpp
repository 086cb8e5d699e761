// One connection to the store, from its first byte to its close: a coroutine
// that reads top to bottom. The hello and the proofs of the job token
// (token_proof.hpp: the store proves it knows the token, then the client;
// nothing is served to a client that has not), then one request after
// another, each read under the memory budget (budgeted_body.hpp), handled
// (key_table.hpp) and answered before the next is read. A get/wait on missing
// keys parks the session until the keys appear or its own timeout fires;
// meanwhile the session watches its socket, so a client that leaves is
// noticed at once and its wait and descriptor dropped.
//
// Every phase has a watchdog: the hello must arrive within the handshake
// timeout, a request within request_timeout of its first byte, a reply be
// read within request_timeout; a connection idle after hello is told so (a
// Closing notice) and closed, and its client reconnects when it needs the
// store again. Garbage (wrong magic, bad version, absurd length, a request
// before hello) is logged and the connection closed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "store/request.hpp"
#include "store/socket_util.hpp"
#include "store/store.hpp"

namespace ringlab::store {

template <typename T>
using awaitable = asio::awaitable<T>;

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(StoreServer::Impl& server, tcp::socket socket);

  // The whole life of the connection.
  awaitable<void> serve();
  // A parked get/wait's answer: the keys arrived, or its time ran out.
  void answer(Reply reply);
  // Connected for a while, and not one byte received yet (read or waiting
  // to be read): it may give its place to a newcomer.
  bool silent() const;
  // Logs why this connection goes, and closes it.
  void drop(const std::string& why);
  void close();

 private:
  enum class Phase { Hello, Idle, Request, Working, Parked, Replying, Closing };

  awaitable<bool> greet();
  void watch(Phase phase, Duration limit);
  void watch(Phase phase, Duration limit, Clock::time_point deadline);
  void unwatch(Phase phase);
  void on_watchdog();
  void say_goodbye();
  awaitable<std::pair<ErrorCode, std::size_t>> read_some(asio::mutable_buffer buffer);
  awaitable<void> drain();
  void ended(const ErrorCode& error, std::size_t got, std::size_t of, const char* part);
  awaitable<std::optional<StoreRequest>> read_request(std::size_t max_body,
                                                 std::optional<StoreOp> only);
  awaitable<std::optional<StoreHeader>> read_header(std::optional<StoreOp> only);
  std::string refusal(std::size_t length, std::size_t max_body) const;
  awaitable<bool> send(const Reply& reply);
  awaitable<std::optional<Reply>> park();

  StoreServer::Impl& server_;
  tcp::socket socket_;
  asio::steady_timer watchdog_;
  asio::steady_timer wake_;  // a parked get/wait sleeps on it
  std::string peer_;
  Clock::time_point opened_;
  Phase phase_ = Phase::Hello;
  Duration phase_limit_{0};
  std::uint64_t watch_generation_ = 0;
  bool challenged_ = false;  // its hello was answered; its proof is due
  bool greeted_ = false;     // it proved it knows the job token
  bool closed_ = false;
  bool peer_stirred_ = false;
  std::size_t received_ = 0;      // bytes, since the connection opened
  std::size_t request_got_ = 0;   // bytes of the request being read
  std::size_t request_size_ = 0;  // its size, as far as known
  std::optional<Reply> parked_reply_;
};

}  // namespace ringlab::store
