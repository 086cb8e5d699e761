// The transport conformance suite (test_transport_conformance.cpp) is written
// once against Transport and checks the contract in transport/transport.hpp.
// Each transport runs it as its own test program: the suite plus one binding
// file (conformance_<transport>.cpp) that defines bindings(), saying how to
// start a world of that transport's ranks and what, if anything, the
// transport documents that it cannot do. tests/transport.cmake registers one
// ctest entry per program.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "transport/transport.hpp"

namespace ringlab::conformance {

using RankBody = std::function<void(Transport&)>;

// How one rank's body ended.
struct RankOutcome {
  enum class Kind { Finished, Timeout, PeerFailure, CommFailure, OtherFailure };
  Kind kind = Kind::Finished;
  std::string what;
  int peer = -1;  // PeerError::peer() for PeerFailure
};

struct Binding {
  std::string name;
  // The largest world it can start (NCCL: one rank per GPU).
  int max_ranks = 8;
  // Starts a fresh world of `size` ranks, sets every rank's timeout() to
  // `timeout`, runs body on every rank (wrapped with record_outcome) and
  // returns each rank's outcome. A failing rank must stop the others the way
  // the transport does in a real job (the world's failure path, or, for
  // processes, its transport closing).
  std::function<std::vector<RankOutcome>(int size, Duration timeout, const RankBody& body)> run;
  // Copy host bytes into memory from Transport::allocate and back. Unset:
  // memcpy (host memory).
  std::function<void(Transport&, MutBytes to, ConstBytes from)> to_transport;
  std::function<void(Transport&, MutBytes to, ConstBytes from)> to_host;
  // What the transport documents that it cannot do; the checks that need it
  // are skipped, with a message.
  bool matches_tags = true;           // false: two ranks' messages match in posting order
  bool buffers_sends = true;          // false: a send may wait until its receive is posted
  bool detects_size_mismatch = true;  // false: a receive of the wrong size goes unnoticed
  bool survives_timeout = true;       // false: a wait that times out ends the world
  // false: time is virtual (the fiber world), so a timeout takes no real time.
  bool real_time = true;
};

// Every binding of this test program.
std::vector<Binding> bindings();

// Wraps body so that outcomes[rank] records how it ended; an exception is
// rethrown, so the world sees the rank fail as it would in a real job.
RankBody record_outcome(std::vector<RankOutcome>& outcomes, const RankBody& body);

}  // namespace ringlab::conformance
