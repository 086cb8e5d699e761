// Who may touch a send's payload, and when: the rules where a writer thread
// (writers.hpp), a goodbye from the peer, a failure of the engine and a
// dropped request meet. A send's payload is the caller's memory until the
// send is done or its request is dropped (then a copy, SendOp::own_payload).
// While a writer's sendmsg reads it (the send is in_call, the lock released),
// nothing may let the caller free that memory, and nothing may decide what
// the call did before it is back. So:
//
//   1. Goodbye: the peer needs nothing more, so a queued send still needs
//      the peer (a failure naming it) unless it is the one in_call, which may
//      have gone out whole: that is known when the call is back (rule 4).
//   2. Failure: every queued send fails at once, except the one in_call,
//      which is its writer's to fail when the call is back (rule 4). A frame
//      partly written, or in a call, must be finished before an abort frame
//      can follow it: it stays queued with a copy of its payload.
//   3. A dropped request: its send copies its unsent payload, after waiting
//      for a call that reads it to come back (Writers::await_call): the
//      caller may free the memory as soon as the request is gone.
//   4. A call back: the writer counts what went out; a send now whole is
//      done. If the peer said goodbye meanwhile and anything is still
//      queued, that fails naming the peer (rule 1's deferred half); if the
//      engine failed meanwhile, the send fails with it (rule 2's).
//
// Rules 1 to 3 are the functions below; the engine applies rule 4 where a
// writer's call comes back (Engine::wrote, engine_writes.cpp).
#pragma once

#include <deque>
#include <memory>
#include <vector>

#include "transport/tcp/operations.hpp"

namespace ringlab::tcp::custody {

using SendQueue = std::deque<std::shared_ptr<SendOp>>;

// Rule 1: whether a queued send still needs a peer that said goodbye.
// in_call: the send a writer's call reads now (the queue's front), or null.
inline bool needs_departed_peer(const SendQueue& sends, const SendOp* in_call) {
  return sends.size() > (in_call ? 1u : 0u);
}

// Rule 2: what a failure does to a connection's queued sends.
struct OnFailure {
  std::vector<std::shared_ptr<SendOp>> fail_now;  // done now, with the failure
  std::shared_ptr<SendOp> unfinished;  // to finish (with its own copy) before an abort frame
};
inline OnFailure on_failure(const SendQueue& sends, const SendOp* in_call) {
  OnFailure out;
  if (!sends.empty() && (sends.front()->written > 0 || sends.front().get() == in_call))
    out.unfinished = sends.front();
  for (const auto& op : sends)
    if (op.get() != in_call) out.fail_now.push_back(op);
  return out;
}

// Rule 3: whether dropping op's request waits for a writer's call first.
inline bool drop_waits_for_call(const SendOp& op, const SendOp* in_call) { return in_call == &op; }

}  // namespace ringlab::tcp::custody
