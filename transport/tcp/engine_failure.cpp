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
//   - a failure fails EVERY pending and future operation of this engine with
//     PeerError(p), not just those on p's connection (a rank waiting on a
//     survivor would otherwise time out, naming the survivor), and sends an
//     abort frame naming p to every other peer, so one that waits on this
//     rank learns the root cause (p) at once rather than when this rank
//     exits; a rank receiving an abort naming p fails the same way (naming p).
//   - while shutting down, a connection that ends is only closed: this rank
//     needs nothing more, and must not abort ranks that may still finish.
// As in InprocWorld::fail, the first failure wins; later ones change nothing.
#include <cstring>

#include "transport/tcp/engine.hpp"
#include "transport/tcp/io_timers.hpp"
#include "transport/tcp/parking.hpp"
#include "transport/tcp/rendezvous_watch.hpp"

namespace ringlab::tcp {

void Engine::connection_lost(Connection& c, const std::string& why) {
  if (!c.open()) return;
  c.failure = why;
  // Stop the traffic both ways; the descriptor stays open (a driver may be
  // polling it) until the engine shuts down.
  c.stop_traffic();
  c.clear_reading();
  c.parked = false;
  if (shutting_down_ && c.sends.empty()) return;  // nothing more needed from it
  fail_all(c.peer, why);
}

void Engine::sends_failed(Connection& c, int error) {
  c.send_failure = "rank " + std::to_string(rank_) + ": connection to rank " +
                   std::to_string(c.peer) + " failed while sending (" + std::strerror(error) +
                   "): rank " + std::to_string(c.peer) + " probably exited or crashed";
  for (auto& op : c.sends) complete(*op, c.send_failure, c.peer);
  c.sends.clear();
  fail_all(c.peer, c.send_failure);
}

std::string Engine::departed_message(int peer, const std::string& what) const {
  return "rank " + std::to_string(rank_) + ": rank " + std::to_string(peer) +
         " shut down its transport (its program finished or stopped) while rank " +
         std::to_string(rank_) + " still needed it, " + what + ": rank " + std::to_string(peer) +
         " stopped early, or the ranks did not run the same collectives";
}

void Engine::goodbye_received(Connection& c) {
  c.departed = true;
  c.failure = "rank " + std::to_string(rank_) + ": rank " + std::to_string(c.peer) +
              " shut down its transport";
  c.clear_reading();
  if (!broken_.empty()) return;
  // Still needed? A send not yet written, or a receive posted for it. A send
  // whose writer is writing it right now may have gone out whole: that is
  // known when the writer's call is back (wrote(), engine_writer.cpp).
  const SendOp* writing = c.writer ? c.writer->in_call : nullptr;
  if (c.sends.size() > (writing ? 1u : 0u))
    return fail_all(c.peer, departed_message(c.peer, "to send to it (" +
                                                         describe_tag(c.sends.front()->tag) + ")"));
  if (const auto tag = matcher_.posted_for(c.peer))
    return fail_all(c.peer,
                    departed_message(c.peer, "to receive from it (" + describe_tag(*tag) + ")"));
  // A receive from any source needs whoever is left.
  if (const auto tag = matcher_.posted_for(kAnySource); tag && everyone_departed())
    fail_all(c.peer,
             departed_message(c.peer, "to receive from any rank (" + describe_tag(*tag) + ")"));
}

void Engine::abort_received(Connection& c) {
  const std::optional<Abort> abort = decode_abort(c.control);
  c.control.clear();
  // The sender closes next; what it failed on is the root cause.
  c.failure = "rank " + std::to_string(rank_) + ": rank " + std::to_string(c.peer) + " aborted";
  c.departed = true;
  c.stage_begin = c.stage_end = 0;
  if (!broken_.empty()) return;
  int culprit = c.peer;
  if (abort && abort->culprit >= 0 && abort->culprit < size_ && abort->culprit != rank_)
    culprit = abort->culprit;
  const std::string reason = abort ? abort->reason : "no reason given";
  // The culprit first: every rank's error names the same rank first. What is
  // passed on is the root cause.
  fail_all(culprit, abort_message(rank_, c.peer, culprit, reason), &reason);
}

void Engine::fail_all(int culprit, const std::string& why, const std::string* relayed) {
  if (!broken_.empty()) return;
  broken_ = why;
  broken_peer_ = culprit;
  const std::vector<std::byte> abort = encode_abort({culprit, relayed ? *relayed : why});
  for (auto& c : connections_)
    if (c) fail_connection(*c, culprit, why, abort);
  for (auto& op : matcher_.take_all_posted()) complete(*op, why, culprit);
  matcher_.drop_kept();
  driver_.wake();  // a driver in poll() now has sends to watch
  driver_.progressed();
}

void Engine::fail_connection(Connection& c, int culprit, const std::string& why,
                             const std::vector<std::byte>& abort) {
  // A frame partly written must be finished before another can follow:
  // keep it (with a copy of its payload, as its request may be gone soon).
  // One a writer is sending right now is its writer's to fail, once the
  // writer's call no longer reads the caller's memory (engine_writer.cpp).
  const SendOp* writing = c.writer ? c.writer->in_call : nullptr;
  std::shared_ptr<SendOp> partial;
  if (!c.sends.empty() && (c.sends.front()->written > 0 || c.sends.front().get() == writing))
    partial = c.sends.front();
  for (auto& op : c.sends)
    if (op.get() != writing) complete(*op, why, culprit);
  c.sends.clear();
  if (c.target) complete(*c.target, why, culprit);
  c.target = nullptr;
  c.queued = nullptr;  // a message still arriving is read and dropped
  c.parked = false;    // so is a parked one
  if (c.peer == culprit || !c.open() || !c.send_failure.empty()) return;
  if (partial) {
    partial->own_payload();
    c.sends.push_back(std::move(partial));
  }
  c.queue_control(FrameKind::Abort, abort);
  push(c);  // best effort now; shutdown() finishes it
}

void Engine::withdraw_locked(const std::shared_ptr<RecvOp>& op) {
  if (op->done || matcher_.withdraw(op->any_source ? kAnySource : op->peer, op->tag, op)) return;
  if (op->peer == kAnySource) return;  // matched nothing yet, and withdrawn before
  // Being filled right now: move what arrived into a queued message that
  // takes the rest, so nothing is written into a buffer nobody waits on.
  Connection& c = connection(op->peer);
  if (c.target != op) return;
  if (!parking::may_queue(c.frame.length, max_unexpected_)) {
    // Too large to keep for a later receive: it is lost, so is the stream.
    connection_lost(c, "rank " + std::to_string(rank_) + ": the receive of " +
                           std::to_string(c.frame.length) + " bytes from rank " +
                           std::to_string(c.peer) + " (" + describe_tag(c.frame.tag) +
                           ") was given up while its message was arriving, and a message of more "
                           "than " +
                           std::to_string(max_unexpected_) +
                           " bytes (kMaxUnexpectedBytes) cannot be kept for a later receive");
    return;
  }
  auto message = std::make_shared<Queued>();
  message->size = c.frame.length;
  message->data = pool_->take(c.frame.length);
  std::memcpy(message->data.storage.get(), op->buffer.data(), c.payload_got);
  matcher_.keep(op->peer, op->tag, message, true);
  c.target = nullptr;
  c.queued = std::move(message);
}

void Engine::abandon_send(const std::shared_ptr<SendOp>& op) {
  std::unique_lock lock(mutex_);
  if (op->done) return;
  // The caller may free its buffer now: keep a copy of the payload, and let
  // no writer read the caller's copy after this returns.
  await_writer(lock, *op);
  if (!op->done) op->own_payload();
}

void Engine::abandon_recv(const std::shared_ptr<RecvOp>& op) {
  std::lock_guard lock(mutex_);
  withdraw_locked(op);
}

void Engine::shutdown(Duration timeout) {
  std::unique_lock lock(mutex_);
  if (shut_down_) return;
  stop_writers(lock);  // from here on this thread writes everything
  // Leaving right after a wait ran out of time, it leaves because of that:
  // the peers learn whom it blamed (abort frames) rather than a goodbye.
  if (const TimeoutVerdict* stalled = blame_.stalled(); broken_.empty() && stalled)
    fail_all(stalled->rank, stalled->message);
  shutting_down_ = true;
  // Finish queued sends (dropped requests' copies included) so the peers get
  // every message this rank sent, then say goodbye on every connection whose
  // last frame is complete (one with a frame cut short just closes: the peer
  // rightly sees that as a failure). A failed engine only flushes its abort
  // frames, and not for long: its peers may have stopped reading.
  constexpr Duration kAbortLinger{500};
  const auto deadline =
      Clock::now() + (broken_.empty() ? timeout : std::min(timeout, kAbortLinger));
  // Nothing will be received any more; a peer may still be sending.
  for (auto& c : connections_)
    if (c && c->parked) unpark(*c, parking::may_queue(c->frame.length, max_unexpected_));
  flush(lock, deadline);
  if (broken_.empty()) {
    for (auto& c : connections_) {
      if (!c || !c->open() || !c->send_failure.empty() || !c->sends.empty()) continue;
      c->queue_control(FrameKind::Goodbye, {});
      push(*c);
    }
    flush(lock, deadline);
  }
  shut_down_ = true;
  close_all();
  timers::report(rank_);
}

void Engine::flush(std::unique_lock<std::mutex>& lock, Clock::time_point deadline) {
  while (sends_pending() && Clock::now() < deadline && !driver_.busy()) {
    const Driver::Turn turn(driver_);
    try {
      drive(lock, deadline);
    } catch (...) {
      return;  // poll() failed: nothing more can be sent (this runs in destructors too)
    }
  }
}

void Engine::close_all() {
  const std::string closed = "rank " + std::to_string(rank_) + ": the transport was shut down";
  if (broken_.empty()) broken_ = closed;  // later operations fail (a CommError)
  for (auto& c : connections_) {
    if (!c) continue;
    for (auto& op : c->sends) complete(*op, closed, c->peer);
    c->sends.clear();
    if (c->target) complete(*c->target, closed, c->peer);
    c->target = nullptr;
    if (c->open()) c->failure = closed;
    c->close();
  }
  for (auto& op : matcher_.take_all_posted()) complete(*op, broken_, broken_peer_);
}

}  // namespace ringlab::tcp
