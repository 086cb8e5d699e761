// Whether a host runs more ranks than it has processors, agreed by every
// rank (Transport::prefers_fewer_messages). Each rank counts the ranks on its
// own host (the connections whose two ends have the same address: loopback,
// or the host's own address) and compares that with the processors it may
// run on; rank 0 then gathers every rank's answer and tells them all whether
// any said yes, so every rank's algorithms choose alike.
#pragma once

#include <vector>

#include "net/asio.hpp"
#include "transport/tcp/engine.hpp"

namespace ringlab::tcp {

// This rank and the peers whose connection joins an address to itself.
// sockets[peer] as the mesh hands them over (this rank's own entry unopened).
int ranks_on_this_host(const std::vector<boost::asio::ip::tcp::socket>& sockets);

// The processors this process may run on (its CPU affinity).
int processors_here();

// True on every rank if any rank passed true: 2(P-1) one-byte messages on
// kSetupTag through rank 0, every wait within `timeout` of the call. A rank
// that fails or stops answering fails the call as any wait does (naming it).
bool any_rank_says(Engine& engine, bool mine, Duration timeout);

}  // namespace ringlab::tcp
