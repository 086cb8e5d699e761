// The TCP engine's sockets (see connections.hpp).
#include "transport/tcp/connections.hpp"

#include <algorithm>

namespace ringlab::tcp {

Connections::Connections(int rank, const std::vector<int>& descriptors) {
  // Each descriptor is owned by a Connection as soon as one is made, so that
  // every one is closed if a later one cannot be made.
  by_peer_.resize(descriptors.size());
  for (std::size_t peer = 0; peer < descriptors.size(); ++peer)
    if (static_cast<int>(peer) != rank) {
      by_peer_[peer] =
          std::make_unique<Connection>(rank, static_cast<int>(peer), descriptors[peer]);
      all_.push_back(by_peer_[peer].get());
    }
}

bool Connections::everyone_departed() const {
  return std::all_of(all_.begin(), all_.end(), [](const Connection* c) { return c->departed; });
}

bool Connections::sends_pending() const {
  return std::any_of(all_.begin(), all_.end(), [](const Connection* c) { return c->writable(); });
}

bool Connections::can_look_alone(int peer) const {
  if (peer < 0) return false;  // kAnySource
  const Connection* c = by_peer_[static_cast<std::size_t>(peer)].get();
  return c && c->open() && !c->parked && !sends_pending();
}

}  // namespace ringlab::tcp
