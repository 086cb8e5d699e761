// The TCP engine's sockets: one Connection per peer (connection.hpp: its
// socket, the frame being read from it, the sends waiting to be written),
// and what the engine asks of all of them at once.
//
// State: the connections. Called with the engine's mutex held.
#pragma once

#include <memory>
#include <vector>

#include "transport/tcp/connection.hpp"

namespace ringlab::tcp {

class Connections {
 public:
  // descriptors[peer]: the connected socket to peer (-1 for this rank
  // itself); taken, and closed with the connections.
  Connections(int rank, const std::vector<int>& descriptors);

  Connection& operator[](int peer) { return *by_peer_[static_cast<std::size_t>(peer)]; }
  // Every peer's connection, by rank (this rank has none).
  auto begin() const { return all_.begin(); }
  auto end() const { return all_.end(); }

  // Every peer said goodbye (or aborted): nothing more will arrive.
  bool everyone_departed() const;
  // The driver has something to write on some connection.
  bool sends_pending() const;
  // A spinning wait may read peer's socket without polling the others: it
  // is open and not parked, and no send waits to be written anywhere.
  bool can_look_alone(int peer) const;

 private:
  std::vector<std::unique_ptr<Connection>> by_peer_;  // null for this rank
  std::vector<Connection*> all_;
};

}  // namespace ringlab::tcp
