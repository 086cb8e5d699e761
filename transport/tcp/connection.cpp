// A peer's connection: the reads and writes of its socket (see connection.hpp).
#include "transport/tcp/connection.hpp"

#include "transport/tcp/io_timers.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace ringlab::tcp {

namespace {

constexpr std::size_t kStageBytes = 64 * 1024;
// A payload remainder at least this large is read straight into its destination.
constexpr std::size_t kDirectReadBytes = 16 * 1024;
// iovecs per sendmsg (header + payload per queued send).
constexpr std::size_t kMaxIovecs = 64;

}  // namespace

Connection::Connection(int self_rank, int peer_rank, int descriptor)
    : self(self_rank),
      peer(peer_rank),
      fd(descriptor),
      stage(std::make_unique<std::byte[]>(kStageBytes)) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

Connection::~Connection() { close(); }

void Connection::stop_traffic() { ::shutdown(fd, SHUT_RDWR); }

void Connection::close() {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

std::string Connection::closed_because(const std::string& how) const {
  const std::string them = "rank " + std::to_string(peer);
  return "rank " + std::to_string(self) + ": connection to " + them + " closed (" + how + "): " +
         them + " probably exited or crashed";
}

// ---- writing -----------------------------------------------------------------

long Connection::send_at_once(const FrameHeaderBytes& header, ConstBytes payload) {
  iovec iov[2] = {{const_cast<std::byte*>(header.data()), header.size()},
                  {const_cast<std::byte*>(payload.data()), payload.size()}};
  msghdr message{};
  message.msg_iov = iov;
  message.msg_iovlen = payload.empty() ? 1 : 2;
  ssize_t n;
  int error = 0;
  {
    timers::Scope timed(timers::Send);
    do n = ::sendmsg(fd, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    error = errno;
    timed.bytes(n);
  }
  if (n >= 0) return static_cast<long>(n);
  return error == EAGAIN || error == EWOULDBLOCK ? 0 : -error;
}

void Connection::queue_control(FrameKind kind, std::vector<std::byte> payload) {
  auto op = std::make_shared<SendOp>();
  op->peer = peer;
  op->header = encode_frame_header({kind, self, 0, static_cast<std::uint64_t>(payload.size())});
  op->owned = std::move(payload);
  op->data = op->owned.data();
  op->size = op->owned.size();
  op->done = true;  // nobody waits on it
  sends.push_back(std::move(op));
}

std::size_t unwritten_iovecs(const SendOp& op, iovec* iov) {
  std::size_t count = 0;
  if (op.written < kFrameHeaderBytes)
    iov[count++] = {const_cast<std::byte*>(op.header.data()) + op.written,
                    kFrameHeaderBytes - op.written};
  const std::size_t payload_done =
      op.written > kFrameHeaderBytes ? op.written - kFrameHeaderBytes : 0;
  if (op.size > payload_done)
    iov[count++] = {const_cast<std::byte*>(op.data) + payload_done, op.size - payload_done};
  return count;
}

void Connection::write(FrameHandler& handler) {
  while (!sends.empty() && send_failure.empty()) {
    iovec iov[kMaxIovecs];
    std::size_t count = 0;
    for (const auto& op : sends) {
      if (count + 2 > kMaxIovecs) break;
      count += unwritten_iovecs(*op, iov + count);
    }
    msghdr message{};
    message.msg_iov = iov;
    message.msg_iovlen = count;
    ssize_t n;
    int error;
    {
      timers::Scope timed(timers::Send);
      n = ::sendmsg(fd, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
      error = errno;
      timed.bytes(n);
    }
    if (n < 0) {
      if (error == EINTR) continue;
      if (error == EAGAIN || error == EWOULDBLOCK) return;
      return handler.sends_failed(*this, error);
    }
    auto sent = static_cast<std::size_t>(n);
    while (!sends.empty()) {
      SendOp& op = *sends.front();
      const std::size_t take = std::min(sent, op.total() - op.written);
      op.written += take;
      sent -= take;
      if (op.written < op.total()) break;
      handler.sent(op);
      sends.pop_front();
    }
  }
}

// ---- reading -----------------------------------------------------------------

std::byte* Connection::payload_destination() {
  if (frame.kind == FrameKind::Abort || frame.kind == FrameKind::Waiting)
    return control.data() + payload_got;
  if (target) return target->buffer.data() + payload_got;
  if (queued) return queued->data.storage.get() + payload_got;
  return nullptr;  // dropped
}

void Connection::consume_staged(FrameHandler& handler) {
  // Complete headers, then payload bytes, until the stage is empty, a header
  // is cut short, or a frame parks the connection.
  while (stage_begin < stage_end && failure.empty() && !parked) {
    const std::size_t staged = stage_end - stage_begin;
    if (!in_payload) {
      if (staged < kFrameHeaderBytes) break;
      const std::span<const std::byte, kFrameHeaderBytes> bytes(stage.get() + stage_begin,
                                                                kFrameHeaderBytes);
      stage_begin += kFrameHeaderBytes;
      const FrameDecode decoded = decode_frame_header(bytes);
      if (!decoded.header) {
        const std::string them = "rank " + std::to_string(peer);
        return handler.connection_lost(
            *this, "rank " + std::to_string(self) + ": " + them + " sent a corrupt frame (" +
                       decoded.error + "); closed the connection: is " + them +
                       " running the same ringlab build?");
      }
      if (!handler.frame_started(*this, *decoded.header)) return;
    } else {
      const std::size_t take = std::min<std::size_t>(staged, frame.length - payload_got);
      if (std::byte* destination = payload_destination())
        std::memcpy(destination, stage.get() + stage_begin, take);
      stage_begin += take;
      payload_got += take;
      if (payload_got == frame.length) handler.frame_finished(*this);
    }
  }
}

void Connection::read(FrameHandler& handler) {
  // A handler may come back here (a write that fails reads what the peer
  // said first, Engine::sends_failed): the read under way goes on instead.
  if (reading) return;
  reading = true;
  struct Done {
    bool& flag;
    ~Done() { flag = false; }
  } done{reading};
  bool drained = false;  // the last recv() was short: the socket is empty for now
  for (;;) {
    consume_staged(handler);
    // After a short read, poll() says when there is more; that saves a recv()
    // that would only say EAGAIN. A parked connection is not read.
    if (!failure.empty() || parked || drained) return;
    if (!read_once(handler, drained)) return;
  }
}

bool Connection::read_once(FrameHandler& handler, bool& drained) {
  // A large payload remainder straight to its destination, everything else
  // into the staging buffer.
  std::byte* into;
  std::size_t want;
  std::byte* destination = in_payload ? payload_destination() : nullptr;
  const bool direct = destination && frame.length - payload_got >= kDirectReadBytes;
  if (direct) {
    into = destination;
    want = frame.length - payload_got;
  } else {
    if (stage_begin == stage_end) {
      stage_begin = stage_end = 0;
    } else if (stage_begin > 0) {  // a partial header: move it to the front
      std::memmove(stage.get(), stage.get() + stage_begin, stage_end - stage_begin);
      stage_end -= stage_begin;
      stage_begin = 0;
    }
    into = stage.get() + stage_end;
    want = kStageBytes - stage_end;
  }
  ssize_t n;
  int error;
  {
    timers::Scope timed(timers::Recv);
    n = ::recv(fd, into, want, MSG_DONTWAIT);
    error = errno;
    timed.bytes(n);
  }
  if (n > 0) {
    const auto got = static_cast<std::size_t>(n);
    if (direct) {
      payload_got += got;
      if (payload_got == frame.length) handler.frame_finished(*this);
    } else {
      stage_end += got;
    }
    drained = got < want;
    return true;
  }
  if (n == 0) {
    handler.connection_lost(*this, closed_because("end of stream"));
    return false;
  }
  if (error == EINTR) return true;
  if (error == EAGAIN || error == EWOULDBLOCK) return false;
  handler.connection_lost(*this, closed_because(std::strerror(error)));
  return false;
}

}  // namespace ringlab::tcp
