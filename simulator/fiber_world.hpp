// Virtual ranks as fibers: every rank runs on one OS thread, switching
// (ucontext) only when it waits for a message that has not arrived. 1024
// ranks cost 1024 small stacks, not 1024 threads, and no locks. Messages are
// matched as in the in-process transport (transport/mailbox.hpp, on the one
// matcher, transport/matcher.hpp; receives may be for any source), and the
// world passes the transport conformance suite.
//
// Time is virtual. It passes only when every unfinished rank waits, and then
// it jumps to the earliest deadline among their waits, which time out as they
// would on a real transport after that long (TimeoutError, timeout_message).
// So a timeout costs no real time, and a wait times out only when nothing
// could ever arrive.
//
// With move_data = false the ranks move no bytes at all: memory from
// allocate() is address space reserved with PROT_NONE (touching it crashes,
// which is how we know the algorithms only use memory through the
// transport), copy/reduce/divide do nothing, and a message carries only its
// size. That is what lets a 1024-rank x 1 M-element run be recorded in
// seconds: the recorder needs the data movements, not the bytes.
//
// With share_memory as well (move_data = false only), every allocate() of
// every rank returns the start of one world-wide PROT_NONE reservation
// (grown when a larger buffer is asked for): buffers alias each other, which
// is harmless as nothing is ever read or written through them, and a world of
// tens of thousands of ranks costs one mapping instead of one per buffer.
// Only a transport that does not tell buffers apart by address can use it
// (the prediction path's, simulator/traffic.hpp; not the recorder).
#pragma once

#include <functional>
#include <memory>

#include "transport/transport.hpp"

namespace ringlab::sim {

class FiberWorld {
 public:
  FiberWorld(int size, bool move_data, bool share_memory = false);
  ~FiberWorld();
  FiberWorld(const FiberWorld&) = delete;
  FiberWorld& operator=(const FiberWorld&) = delete;

  // Runs body(transport) for every rank, one fiber each, until all return.
  // A rank that throws stops the others (their waits throw PeerError naming
  // it) and its error is rethrown here as "rank R: ...". A run that fails
  // because a wait timed out (every unfinished rank waited for a message
  // nobody would send) throws CommError naming each waiting rank and the
  // rank and tag it waited for: a deadlock.
  void run(const std::function<void(Transport&)>& body);

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace ringlab::sim
