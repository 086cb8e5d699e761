// What a TcpTransport owns, shared by rendezvous.cpp (which builds it) and
// tcp_transport.cpp (which uses it). Members are destroyed bottom-up: the
// connections close first, then the store client, then (rank 0) the server.
#pragma once

#include <cstdint>
#include <memory>

#include "transport/tcp/engine.hpp"
#include "transport/tcp/tcp.hpp"

namespace ringlab::tcp {

class TcpTransport::Impl {
 public:
  std::unique_ptr<store::StoreServer> server;  // rank 0 only
  std::shared_ptr<store::Store> store;
  std::uint64_t job_id = 0;
  std::shared_ptr<Engine> engine;
  bool prefers_fewer_messages = false;
  bool overlaps_transfers = false;  // writer threads: a processor to spare per rank
};

}  // namespace ringlab::tcp
