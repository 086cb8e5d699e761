// NCCL's point-to-point rules on CPU threads: `--backend nccl_rules`.
//
// ringlab's inproc and TCP transports match a message to the receive posted
// for its (source, tag) and buffer every send. NCCL does neither, so an
// algorithm that posts its messages in another order on the two sides, or
// waits for a send before its peer has launched the receive, passes there
// and fails (wrong data, or a hang) on GPUs. This transport behaves as
// NcclTransport (transport/nccl/nccl_transport.hpp) does, without a GPU:
//
//  - Matching: between two ranks, the k-th send one launches to the other
//    meets the other's k-th launched receive from it. Tags play no part
//    (transport/matcher.hpp's MatchBy::SourceOrder).
//  - Launching: isend/irecv only queue. A wait or a test (or synchronize())
//    launches everything the rank has queued, as one group; nothing queued
//    moves before that.
//  - Groups: the operations of one group progress together, and a wait
//    returns when its whole group has finished (NcclTransport waits for an
//    event recorded after the group). A rank's groups finish in launch order:
//    NCCL runs them one after another on the rank's one CUDA stream.
//  - No buffering: a send moves only when its matched receive is running,
//    and the bytes are read then, not when the send was posted.
//  - Unlike NCCL, a receive whose size differs from its matched send fails
//    with size_mismatch_message (naming both ranks); the send completes.
//  - Also unlike NCCL, a world in which every remaining rank waits and none
//    can move is reported at once: each rank's wait throws a CommError that
//    says what every rank waits for and why it cannot move.
//  - As on NCCL, a receive names its sender: irecv refuses kAnySource.
//
// A launched operation cannot be withdrawn (NCCL cannot either): a wait that
// times out leaves it launched, and the world should not be used after.
// primitives/comm.hpp states the rule algorithms follow because of all this.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "transport/thread_world.hpp"
#include "transport/transport.hpp"

namespace ringlab {

class NcclRulesWorld final : public ThreadWorld {
 public:
  explicit NcclRulesWorld(int size);
  ~NcclRulesWorld() override;

  int size() const override;
  // Destroying a rank's transport is the rank leaving: whoever still waits
  // for it is told (a deadlock report).
  std::unique_ptr<Transport> connect(int rank) override;
  void fail(int rank, const std::string& why) override;

  struct State;

 private:
  std::shared_ptr<State> state_;
};

// Launches everything `transport` (an nccl_rules transport) has queued and
// waits, with its timeout, until all of it has finished: what
// NcclTransport::synchronize() does before the host reads a result.
void synchronize_nccl_rules(Transport& transport);

// An NcclRulesWorld of `size` ranks, run (ThreadWorld::run).
void run_nccl_rules_world(int size, const std::function<void(Transport&)>& body,
                          Duration timeout = kDefaultTimeout);

}  // namespace ringlab
