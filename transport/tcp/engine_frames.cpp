// What an arriving frame is for (the engine's FrameHandler, connection.hpp).
//
// A data frame's destination is decided when its header is complete:
//   - the oldest posted receive for (source, tag) or for (any source, tag)
//     (transport/matcher.hpp), if its size matches: the
//     payload goes straight into the user's buffer (zero copy);
//   - a posted receive of another size: that receive fails (size mismatch,
//     naming both ranks) and the payload is read and dropped;
//   - no posted receive, and the payload is small (< kParkBytes): a Queued
//     message of the frame's length, which a later irecv copies from (or, if
//     it is still arriving, takes over: the bytes so far are copied and the
//     rest goes straight into the receive's buffer);
//   - no posted receive, and the payload is large: the connection is parked
//     (parking.hpp).
// Goodbye, abort and waiting frames go to engine_failure.cpp and
// engine_blame.cpp.
#include <algorithm>

#include "transport/tcp/engine.hpp"
#include "transport/tcp/parking.hpp"

namespace ringlab::tcp {

bool Engine::frame_started(Connection& c, const FrameHeader& header) {
  const std::string me = "rank " + std::to_string(rank_);
  if (header.kind == FrameKind::Hello || header.kind == FrameKind::HelloAck) {
    connection_lost(c, me + ": rank " + std::to_string(c.peer) +
                           " sent a handshake frame after the handshake; closed the connection");
    return false;
  }
  if (header.source != c.peer) {
    connection_lost(c, me + ": the connection to rank " + std::to_string(c.peer) +
                           " carried a frame claiming to come from rank " +
                           std::to_string(header.source) + "; closed the connection");
    return false;
  }
  if (header.kind == FrameKind::Goodbye) {
    goodbye_received(c);
    return false;  // nothing more is read from this connection
  }
  c.frame = header;
  c.payload_got = 0;
  c.in_payload = true;
  c.target = nullptr;
  c.queued = nullptr;
  if (header.kind == FrameKind::Abort || header.kind == FrameKind::Waiting) {
    c.control.assign(header.length, std::byte{0});
    return true;  // frame_finished acts on it
  }
  if (!broken_.empty()) return true;  // nobody will receive it: read and drop
  if (!place_payload(c, header)) return false;
  if (header.length == 0) frame_finished(c);
  return true;
}

bool Engine::place_payload(Connection& c, const FrameHeader& header) {
  if (auto posted = matcher_.take_receive(c.peer, header.tag)) {
    std::shared_ptr<RecvOp> op = std::move(*posted);
    op->peer = c.peer;  // the sender, for a receive from any source
    const std::string wrong =
        op->buffer.size() != header.length
            ? size_mismatch_message(rank_, c.peer, header.tag, op->buffer.size(), header.length)
            : element_problem(rank_, c.peer, header.tag, op->element, header.element);
    if (wrong.empty())
      c.target = std::move(op);
    else  // fail the receive; the payload is read and dropped
      complete(*op, wrong);
    return true;
  }
  const bool later_wanted =
      matcher_.posted_for(c.peer).has_value() || matcher_.posted_for(kAnySource).has_value();
  if (parking::parks(header.length, later_wanted)) {
    c.parked = true;
    c.parked_since = Clock::now();
    return true;
  }
  return queue_arriving(c);  // false: it claims too much to be kept, the connection failed
}

void Engine::frame_finished(Connection& c) {
  if (c.frame.kind == FrameKind::Abort || c.frame.kind == FrameKind::Waiting) {
    const FrameKind kind = c.frame.kind;
    c.in_payload = false;
    c.frame.kind = FrameKind::Data;
    return kind == FrameKind::Abort ? abort_received(c) : waiting_received(c);
  }
  if (c.target) complete(*c.target);
  if (c.queued) c.queued->complete = true;
  c.target = nullptr;
  c.queued = nullptr;
  c.in_payload = false;
  c.payload_got = 0;
}

bool Engine::queue_arriving(Connection& c) {
  if (!parking::may_queue(c.frame.length, max_unexpected_)) {
    const std::string them = "rank " + std::to_string(c.peer);
    connection_lost(
        c, "rank " + std::to_string(rank_) + ": " + them + " sent a message of " +
               std::to_string(c.frame.length) + " bytes (" + describe_tag(c.frame.tag) +
               ") before its receive was posted, and a later message from " + them +
               " is wanted first; a message that comes before its receive is kept in memory "
               "only up to " +
               std::to_string(max_unexpected_) +
               " bytes (kMaxUnexpectedBytes, transport/tcp/framing.hpp): post the receive for a "
               "large message before receiving later ones from the same rank (or is " +
               them + " not a ringlab rank of this job?)");
    return false;
  }
  auto message = std::make_shared<Queued>();
  message->size = c.frame.length;
  message->element = c.frame.element;
  message->data = pool_->take(c.frame.length);
  matcher_.keep(c.peer, c.frame.tag, message);
  c.queued = std::move(message);
  return true;
}

void Engine::unpark(Connection& c, bool into_queue) {
  c.parked = false;
  if (into_queue && broken_.empty() && !queue_arriving(c)) return;  // failed: too large
  // What is staged already goes where it belongs now; the rest is read when
  // poll() next reports the socket, so a driver blocked without watching it
  // must look again.
  c.consume_staged(*this);
  driver_.wake();
}

void Engine::unpark_overdue(Clock::time_point now) {
  for (auto& c : connections_)
    if (c && c->parked &&
        parking::overdue(c->frame.length, max_unexpected_, now, c->parked_since, last_event_))
      unpark(*c, true);
}

}  // namespace ringlab::tcp
