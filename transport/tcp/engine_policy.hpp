// The TCP engine's performance policy: how a host sets the engine up once
// its connections are made (step 6 of connect(), rendezvous.cpp).
//   - Writer threads (writers.hpp) where the host has at least two of the
//     processors it gives its ranks per rank on it: each rank then has one to
//     spare for its sends, and overlaps them with receiving and reducing.
//     That needs no agreement: a rank's writers change nothing its peers see.
//   - Fewer messages (Transport::prefers_fewer_messages) where a host runs
//     more ranks than it has processors (crowding.hpp). Every rank must
//     choose its algorithms alike, so the ranks agree: crowded if any host is.
// The engine's other tuning stays with the part it tunes: when a wait spins
// (spin_policy.hpp), when a large early message parks (parking.hpp), the
// size from which a send takes a writer (WorldSpec::writer_bytes, tcp.hpp).
// Measurements behind them: docs/benchmarks.md.
#pragma once

#include <cstddef>

#include "transport/tcp/engine.hpp"

namespace ringlab::tcp {

// What this rank's host has: the processors it gives its ranks, and the
// ranks on it (this one included).
struct HostShare {
  int processors = 1;
  int ranks_here = 1;
};

// This host's part of the policy.
struct EnginePolicy {
  bool writers = false;  // large sends through writer threads
  bool crowded = false;  // more ranks here than processors
};
EnginePolicy policy_for(const HostShare& host);

// What the engine was set up to do (TcpTransport's answers).
struct EngineSetup {
  bool overlaps_transfers = false;      // it has writer threads
  bool prefers_fewer_messages = false;  // some host of the job is crowded
};
// Applies the policy to engine: writers from writer_bytes on, and the
// ranks' agreement on crowding (crowding.hpp's any_rank_says, within
// timeout; a rank that fails or stops answering fails it, named).
EngineSetup set_up(Engine& engine, const HostShare& host, std::size_t writer_bytes,
                   Duration timeout);

}  // namespace ringlab::tcp
