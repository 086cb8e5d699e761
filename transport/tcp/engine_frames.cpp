// What an arriving frame is for (the engine's FrameHandler, connection.hpp).
//
// A data frame's destination is decided when its header is complete, by the
// Inbox (inbox.hpp): a posted receive's buffer (or that receive fails, and
// the payload is dropped), a kept message, or nowhere yet (the connection
// parks, parking.hpp). Goodbye, abort and waiting frames go to
// engine_failure.cpp and engine_blame.cpp.
#include "transport/tcp/engine.hpp"

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
  if (failure_.failed()) return true;  // nobody will receive it: read and drop
  Inbox::Placement placement = inbox_.place(c.peer, header);
  switch (placement.kind) {
    case Inbox::Placement::Receive:
      c.target = std::move(placement.receive);
      break;
    case Inbox::Placement::Reject:  // the receive fails; the payload is read and dropped
      complete(*placement.receive, std::move(placement.why));
      break;
    case Inbox::Placement::Park:
      c.parked = true;
      c.parked_since = Clock::now();
      return true;
    case Inbox::Placement::Keep:
      if (!keep_arriving(c)) return false;  // it claims too much: the connection failed
      break;
  }
  if (header.length == 0) frame_finished(c);
  return true;
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

bool Engine::keep_arriving(Connection& c) {
  c.queued = inbox_.keep(c.peer, c.frame);
  if (c.queued) return true;
  connection_lost(c, inbox_.too_large_message(c.peer, c.frame));
  return false;
}

void Engine::unpark(Connection& c, bool into_queue) {
  c.parked = false;
  if (into_queue && !failure_.failed() && !keep_arriving(c)) return;  // failed: too large
  // What is staged already goes where it belongs now; the rest is read when
  // poll() next reports the socket, so a driver blocked without watching it
  // must look again.
  c.consume_staged(*this);
  poller_.driver().wake();
}

void Engine::unpark_overdue(Clock::time_point now) {
  for (Connection* c : connections_)
    if (poller_.overdue(*c, inbox_.max_unexpected(), now)) unpark(*c, true);
}

}  // namespace ringlab::tcp
