// Steps 3 and 4 of the rendezvous (see rendezvous.cpp): this rank's listener,
// and the handshakes that connect it to every other rank.
//
// The higher rank of each pair connects to the lower and sends a hello
// (framing.hpp); the lower checks it (magic, version, ranks, world size, job
// id) and answers with a hello_ack, which the higher checks in turn. Anything
// else that reaches the listener (a port scanner, a stale job, a connection
// that says nothing within the handshake timeout) is logged and closed; the
// rendezvous goes on. Accepting and connecting overlap on one io_context that
// the calling thread runs until every peer is connected or the deadline: each
// handshake is a coroutine (co_spawn) that reads top to bottom, and an
// exception escaping one of them ends run() with that exception.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "transport/tcp/asio.hpp"
#include "transport/tcp/tcp.hpp"
#include "transport/tcp/wait_report.hpp"

namespace ringlab::tcp {

class Mesh {
 public:
  // Starts listening on an ephemeral port at r.bind_addr (throws CommError if
  // it cannot). While run() waits, `report` (if not null) is told which
  // ranks have not connected to this one yet.
  Mesh(const Rendezvous& r, std::uint64_t job_id, std::chrono::steady_clock::time_point deadline,
       WaitReport* report = nullptr);
  ~Mesh();
  int port() const;

  struct Connected {
    std::unique_ptr<boost::asio::io_context> io;        // the sockets' context: keep it alive
    std::vector<boost::asio::ip::tcp::socket> sockets;  // by peer rank
  };
  // Connects to every lower rank (addresses[q] = "host:port") and accepts
  // every higher one; then stops listening. Throws TimeoutError at the
  // deadline naming the ranks that did not show up.
  Connected run(const std::vector<std::string>& addresses);

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace ringlab::tcp
