// Failure, giving up, and shutting down in the TCP engine.
//
// Ranks finish at different times, so a connection that closes is not by
// itself a failure: a rank that shuts its transport down normally first
// delivers everything it queued, then sends a goodbye frame on every
// connection (framing.hpp), then closes. The rule:
//   - goodbye from p: p's messages already here stay receivable; nothing more
//     comes from p. Only if p is still needed (a receive from p or a send to p
//     pending, or posted later) does it become a failure, named after p.
//   - end of stream or reset without a goodbye, or a write that fails: p died
//     (or its process exited without shutting down): a failure named after p.
//     Frames read before the end come first, so an abort frame p sent before
//     it exited names the root cause instead; a write that fails reads what
//     p sent before it fails anything (sends_failed).
//   - a failure fails EVERY pending and future operation of this engine with
//     PeerError(p), not just those on p's connection (a rank waiting on a
//     survivor would otherwise time out, naming the survivor), and sends an
//     abort frame naming p to every other peer, so one that waits on this
//     rank learns the root cause (p) at once rather than when this rank
//     exits; a rank receiving an abort naming p fails the same way (naming p).
//   - while shutting down, a connection that ends is only closed: this rank
//     needs nothing more, and must not abort ranks that may still finish.
// As in InprocWorld::fail, the first failure wins; later ones change nothing
// (first_failure.hpp). Where a writer's call is under way, send_custody.hpp says
// what a goodbye or a failure may do to the send it is writing.
#include <cstring>

#include "transport/tcp/engine.hpp"
#include "transport/tcp/io_timers.hpp"
#include "transport/tcp/rendezvous_watch.hpp"
#include "transport/tcp/send_custody.hpp"

namespace ringlab::tcp {

void Engine::connection_lost(Connection& c, const std::string& why) {
  if (!c.open()) return;
  c.failure = why;
  // Stop the traffic both ways; the descriptor stays open (a driver may be
  // polling it) until the engine shuts down.
  c.stop_traffic();
  c.clear_reading();
  c.parked = false;
  if (failure_.shutting_down && c.sends.empty()) return;  // nothing more needed from it
  fail_all(c.peer, why);
}

void Engine::sends_failed(Connection& c, int error) {
  c.send_failure = "rank " + std::to_string(rank_) + ": connection to rank " +
                   std::to_string(c.peer) + " failed while sending (" + std::strerror(error) +
                   "): rank " + std::to_string(c.peer) + " probably exited or crashed";
  // A peer that failed because of another rank sends an abort frame naming
  // that rank, then exits: a write may meet the closed socket before the
  // frame, which already arrived, is read. It is read first, so the error
  // names the rank the peer named (abort_received), not the peer.
  if (!failure_.failed() && c.open()) c.read(*this);
  for (auto& op : c.sends) complete(*op, c.send_failure, c.peer);
  c.sends.clear();
  fail_all(c.peer, c.send_failure);
}

std::string departed_message(int rank, int peer, const std::string& what) {
  return "rank " + std::to_string(rank) + ": rank " + std::to_string(peer) +
         " shut down its transport (its program finished or stopped) while rank " +
         std::to_string(rank) + " still needed it, " + what + ": rank " + std::to_string(peer) +
         " stopped early, or the ranks did not run the same collectives";
}

void Engine::goodbye_received(Connection& c) {
  c.departed = true;
  c.failure = "rank " + std::to_string(rank_) + ": rank " + std::to_string(c.peer) +
              " shut down its transport";
  c.clear_reading();
  if (failure_.failed()) return;
  // Still needed? A send not yet written (custody rule 1), or a receive
  // posted for it.
  if (custody::needs_departed_peer(c.sends, writers_.in_call(c)))
    return fail_all(c.peer,
                    departed_message(rank_, c.peer,
                                     "to send to it (" + describe_tag(c.sends.front()->tag) + ")"));
  if (const auto tag = inbox_.posted_for(c.peer))
    return fail_all(
        c.peer, departed_message(rank_, c.peer, "to receive from it (" + describe_tag(*tag) + ")"));
  // A receive from any source needs whoever is left.
  if (const auto tag = inbox_.posted_for(kAnySource); tag && connections_.everyone_departed())
    fail_all(c.peer, departed_message(rank_, c.peer,
                                      "to receive from any rank (" + describe_tag(*tag) + ")"));
}

void Engine::abort_received(Connection& c) {
  const std::optional<Abort> abort = decode_abort(c.control);
  c.control.clear();
  // The sender closes next; what it failed on is the root cause.
  c.failure = "rank " + std::to_string(rank_) + ": rank " + std::to_string(c.peer) + " aborted";
  c.departed = true;
  c.stage_begin = c.stage_end = 0;
  if (failure_.failed()) return;
  int culprit = c.peer;
  if (abort && abort->culprit >= 0 && abort->culprit < size_ && abort->culprit != rank_)
    culprit = abort->culprit;
  const std::string reason = abort ? abort->reason : "no reason given";
  // The culprit first: every rank's error names the same rank first. What is
  // passed on is the root cause.
  fail_all(culprit, abort_message(rank_, c.peer, culprit, reason), &reason);
}

void Engine::fail_all(int culprit, const std::string& why, const std::string* relayed) {
  if (!failure_.set(culprit, why)) return;
  const std::vector<std::byte> abort = encode_abort({culprit, relayed ? *relayed : why});
  for (Connection* c : connections_) fail_connection(*c, culprit, why, abort);
  for (auto& op : inbox_.clear()) complete(*op, why, culprit);
  poller_.driver().wake();  // a driver in poll() now has sends to watch
  poller_.driver().progressed();
}

void Engine::fail_connection(Connection& c, int culprit, const std::string& why,
                             const std::vector<std::byte>& abort) {
  // Custody rule 2: the sends fail, but the one a writer's call reads is
  // its writer's to fail, and a frame partly written (or in a call) is
  // finished, from a copy, before the abort frame follows it.
  custody::OnFailure sends = custody::on_failure(c.sends, writers_.in_call(c));
  for (auto& op : sends.fail_now) complete(*op, why, culprit);
  c.sends.clear();
  if (c.target) complete(*c.target, why, culprit);
  c.target = nullptr;
  c.queued = nullptr;  // a message still arriving is read and dropped
  c.parked = false;    // so is a parked one
  if (c.peer == culprit || !c.open() || !c.send_failure.empty()) return;
  if (sends.unfinished) {
    sends.unfinished->own_payload();
    c.sends.push_back(std::move(sends.unfinished));
  }
  c.queue_control(FrameKind::Abort, abort);
  push(c);  // best effort now; shutdown() finishes it
}

void Engine::withdraw_locked(const std::shared_ptr<RecvOp>& op) {
  if (op->done || inbox_.withdraw(op)) return;
  if (op->peer == kAnySource) return;  // matched nothing yet, and withdrawn before
  // Being filled right now: move what arrived into a queued message that
  // takes the rest, so nothing is written into a buffer nobody waits on.
  Connection& c = connections_[op->peer];
  if (c.target != op) return;
  if (!inbox_.may_keep(c.frame.length)) {
    // Too large to keep for a later receive: it is lost, so is the stream.
    connection_lost(c, "rank " + std::to_string(rank_) + ": the receive of " +
                           std::to_string(c.frame.length) + " bytes from rank " +
                           std::to_string(c.peer) + " (" + describe_tag(c.frame.tag) +
                           ") was given up while its message was arriving, and a message of more "
                           "than " +
                           std::to_string(inbox_.max_unexpected()) +
                           " bytes (kMaxUnexpectedBytes) cannot be kept for a later receive");
    return;
  }
  c.queued = inbox_.keep_partial(*op, c.frame, c.payload_got);
  c.target = nullptr;
}

void Engine::abandon_send(const std::shared_ptr<SendOp>& op) {
  std::unique_lock lock(mutex_);
  if (op->done) return;
  // Custody rule 3: the caller may free its buffer now: keep a copy of the
  // payload, and let no writer read the caller's copy after this returns.
  Connection& c = connections_[op->peer];
  if (custody::drop_waits_for_call(*op, writers_.in_call(c))) writers_.await_call(lock, c, *op);
  if (!op->done) op->own_payload();
}

void Engine::abandon_recv(const std::shared_ptr<RecvOp>& op) {
  std::lock_guard lock(mutex_);
  withdraw_locked(op);
}

void Engine::shutdown(Duration timeout) {
  std::unique_lock lock(mutex_);
  if (failure_.shut_down) return;
  writers_.stop_all(lock);  // from here on this thread writes everything
  // Leaving right after a wait ran out of time, it leaves because of that:
  // the peers learn whom it blamed (abort frames) rather than a goodbye.
  if (const TimeoutVerdict* stalled = blame_.stalled(); !failure_.failed() && stalled)
    fail_all(stalled->rank, stalled->message);
  failure_.shutting_down = true;
  // Finish queued sends (dropped requests' copies included) so the peers get
  // every message this rank sent, then say goodbye on every connection whose
  // last frame is complete (one with a frame cut short just closes: the peer
  // rightly sees that as a failure). A failed engine only flushes its abort
  // frames, and not for long: its peers may have stopped reading.
  constexpr Duration kAbortLinger{500};
  const auto deadline =
      Clock::now() + (failure_.failed() ? std::min(timeout, kAbortLinger) : timeout);
  // Nothing will be received any more; a peer may still be sending.
  for (Connection* c : connections_)
    if (c->parked) unpark(*c, inbox_.may_keep(c->frame.length));
  flush(lock, deadline);
  if (!failure_.failed()) {
    for (Connection* c : connections_) {
      if (!c->open() || !c->send_failure.empty() || !c->sends.empty()) continue;
      c->queue_control(FrameKind::Goodbye, {});
      push(*c);
    }
    flush(lock, deadline);
  }
  failure_.shut_down = true;
  close_all();
  timers::report(rank_);
}

void Engine::flush(std::unique_lock<std::mutex>& lock, Clock::time_point deadline) {
  while (connections_.sends_pending() && Clock::now() < deadline && !poller_.driver().busy()) {
    const Driver::Turn turn(poller_.driver());
    try {
      drive(lock, deadline);
    } catch (...) {
      return;  // poll() failed: nothing more can be sent (this runs in destructors too)
    }
  }
}

void Engine::close_all() {
  const std::string closed = "rank " + std::to_string(rank_) + ": the transport was shut down";
  failure_.set(-1, closed);  // unless failed already: later operations fail (a CommError)
  for (Connection* c : connections_) {
    for (auto& op : c->sends) complete(*op, closed, c->peer);
    c->sends.clear();
    if (c->target) complete(*c->target, closed, c->peer);
    c->target = nullptr;
    if (c->open()) c->failure = closed;
    c->close();
  }
  for (auto& op : inbox_.clear()) complete(*op, failure_.why(), failure_.culprit());
}

}  // namespace ringlab::tcp
