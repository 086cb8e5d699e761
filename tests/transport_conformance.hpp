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
  // false: irecv refuses kAnySource (NCCL posts every receive for one sender)
  bool receives_from_any_source = true;
  // true: a rank's operations run only once a wait or test launches them, and
  // its launched groups finish in launch order (NCCL's one CUDA stream per
  // rank), so a rank that waits on a receive can send nothing until it comes.
  bool launches_in_order = false;
  // true: a world where every remaining rank waits and none can go on fails
  // at once with a CommError saying so, instead of timing out.
  bool detects_deadlock = false;
  // false: time is virtual (the fiber world), so a timeout takes no real time.
  bool real_time = true;
  // The world sizes at which every algorithm of every collective runs
  // (conformance_algorithms.cpp), each at 0, 1, 997 and 1 M elements.
  std::vector<int> algorithm_worlds{1, 2, 3, 4};
};

// Every binding of this test program.
std::vector<Binding> bindings();

// Wraps body so that outcomes[rank] records how it ended; an exception is
// rethrown, so the world sees the rank fail as it would in a real job.
RankBody record_outcome(std::vector<RankOutcome>& outcomes, const RankBody& body);

// Test values in the transport's memory: a vector<int> on the host, a Buffer
// from Transport::allocate on the transport's side.
class Memory {
 public:
  Memory(const Binding& binding, Transport& t) : binding_(binding), t_(t) {}

  Buffer holding(const std::vector<int>& values);
  Buffer holding_bytes(ConstBytes bytes);
  // n ints, each -1.
  Buffer blank(std::size_t n) { return holding(std::vector<int>(n, -1)); }
  std::vector<int> read(const Buffer& buffer);
  std::vector<std::byte> read_bytes(const Buffer& buffer);

  // Blocking send of values; blocking receive of n ints.
  void send(int dst, Tag tag, const std::vector<int>& values);
  std::vector<int> recv(int src, Tag tag, std::size_t n);

 private:
  const Binding& binding_;
  Transport& t_;
};

}  // namespace ringlab::conformance
