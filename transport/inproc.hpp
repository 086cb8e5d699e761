// In-process transport: every rank is a thread of one process, and a message
// is a memcpy. A send that finds its receive already posted copies straight
// into the receiver's buffer; otherwise it is queued (eager), so a send never
// blocks. Receives may be for any source. Used by the tests, the lessons'
// --backend inproc and the simulator.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "transport/thread_world.hpp"
#include "transport/transport.hpp"

namespace ringlab {

class InprocWorld final : public ThreadWorld {
 public:
  explicit InprocWorld(int size);
  ~InprocWorld() override;

  int size() const override;
  std::unique_ptr<Transport> connect(int rank) override;
  void fail(int rank, const std::string& why) override;

  struct State;

 private:
  std::shared_ptr<State> state_;
};

// An InprocWorld of `size` ranks, run (ThreadWorld::run).
void run_world(int size, const std::function<void(Transport&)>& body,
               Duration timeout = kDefaultTimeout);

}  // namespace ringlab
