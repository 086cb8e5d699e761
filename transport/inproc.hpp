// In-process transport: every rank is a thread of one process, and a message
// is a memcpy. A send that finds its receive already posted copies straight
// into the receiver's buffer; otherwise it is queued (eager), so a send never
// blocks. Used by the tests, the lessons' --backend inproc and the simulator.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "transport/transport.hpp"

namespace ringlab {

class InprocWorld {
 public:
  explicit InprocWorld(int size);
  ~InprocWorld();
  InprocWorld(const InprocWorld&) = delete;
  InprocWorld& operator=(const InprocWorld&) = delete;

  int size() const;
  // The transport of one rank; call once per rank.
  std::unique_ptr<Transport> connect(int rank);

  // Marks rank as failed: every wait in the world wakes up and throws a
  // PeerError naming it, instead of waiting for its timeout.
  void fail(int rank, const std::string& why);

  struct State;

 private:
  std::shared_ptr<State> state_;
};

// Runs body(transport) on `size` threads, one per rank, and joins them. If any
// rank throws, the others are woken (see InprocWorld::fail) and the first
// failure is rethrown here as a CommError/its original type with the rank
// named ("rank 2: ...").
void run_world(int size, const std::function<void(Transport&)>& body,
               Duration timeout = kDefaultTimeout);

}  // namespace ringlab
