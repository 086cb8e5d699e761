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
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "net/asio.hpp"
#include "transport/tcp/tcp.hpp"
#include "transport/tcp/wait_report.hpp"

namespace ringlab::tcp {

class Mesh {
 public:
  // Starts listening on an ephemeral port at r.bind_addr (throws CommError if
  // it cannot). While run() waits, `report` (if not null) is told which
  // ranks have not connected to this one yet.
  Mesh(const WorldSpec& r, std::uint64_t job_id, std::chrono::steady_clock::time_point deadline,
       WaitReport* report = nullptr);
  ~Mesh();
  int port() const;

  struct Connected {
    std::unique_ptr<boost::asio::io_context> io;        // the sockets' context: keep it alive
    std::vector<boost::asio::ip::tcp::socket> sockets;  // by peer rank
    // The sockets' descriptors, taken out of Asio for the engine, which
    // drives them itself (engine.hpp): by peer rank, -1 for this rank.
    std::vector<int> release_descriptors();
  };
  // The Mesh's listener and timers live on `io` until the Mesh is destroyed:
  // keep the Connected (or the io_context moved out of it) alive until then.
  //
  // Connects to every lower rank (addresses[q] = "host:port") and accepts
  // every higher one; then stops listening. Throws TimeoutError at the
  // deadline naming the ranks that did not show up, or a PeerError naming
  // rank 0 if the store (watch_store) does not answer then. Meanwhile it
  // watches the connections already made (rendezvous_watch.hpp) and the
  // store's: a peer that closes, a peer's abort, or the store's host gone
  // ends it at once with a PeerError naming the rank at fault. On any failure
  // the peers already connected get an abort frame naming that rank.
  Connected run(const std::vector<std::string>& addresses);
  // While run() waits, closed() says whether the connection to the store
  // closed (it must not wait); when run() times out, answers() says whether
  // the store still answers (it may wait a little), since ranks that do not
  // show up may be waiting for a store that stopped.
  void watch_store(std::function<bool()> closed, std::function<bool()> answers);

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace ringlab::tcp
