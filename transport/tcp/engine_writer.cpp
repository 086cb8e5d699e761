// Writer threads: on a host with processors to spare, a connection's large
// sends leave through a thread of their own, so that a rank's thread receives
// and reduces while its sends go out (on loopback the sender's processor
// copies every byte into the kernel: a thread that did both would do one
// after the other).
//
// The first send of at least writer_bytes_ on a connection (use_writers)
// makes its writer; from then on the writer alone writes that connection,
// every send in order (small ones too, and the engine's own frames), and the
// driver only reads it. The writer takes the oldest send, releases the lock
// for one non-blocking sendmsg of it (and, if the socket is full, a short
// poll() for room), and takes the lock again to count what went out. While
// its sendmsg reads a send's payload (Writer::in_call), nothing may let the
// caller free that memory: a failure leaves that send to the writer, which
// fails it when its call is back, and a request dropped meanwhile waits for
// the call (abandon_send). shutdown() stops the writers (each after its
// call) and joins them before it writes anything itself.
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>
#include <system_error>

#include "transport/tcp/engine.hpp"
#include "transport/tcp/io_timers.hpp"

namespace ringlab::tcp {

namespace {
// How long a writer waits in poll() for room before it looks at its queue again.
constexpr int kWriterPollMs = 20;
}  // namespace

void Engine::use_writers(std::size_t from_bytes) {
  std::lock_guard lock(mutex_);
  writer_bytes_ = from_bytes;
}

void Engine::push(Connection& c) {
  if (c.writer)
    c.writer->work.notify_one();
  else
    c.write(*this);
}

void Engine::start_writer(Connection& c) {
  c.writer = std::make_unique<Connection::Writer>();
  try {
    c.writer->thread = std::thread([this, &c] { write_loop(c); });
  } catch (const std::system_error&) {
    c.writer.reset();  // no thread to be had: the driver writes, as without writers
  }
}

void Engine::write_loop(Connection& c) {
  std::unique_lock lock(mutex_);
  Connection::Writer& w = *c.writer;
  while (!w.stop) {
    if (!c.has_sends()) {
      w.work.wait(lock);
      continue;
    }
    const std::shared_ptr<SendOp> op = c.sends.front();
    iovec iov[2];
    const std::size_t count = unwritten_iovecs(*op, iov);
    msghdr message{};
    message.msg_iov = iov;
    message.msg_iovlen = count;
    w.in_call = op.get();
    lock.unlock();
    ssize_t n;
    int error;
    {
      timers::Scope timed(timers::Send);
      n = ::sendmsg(c.fd, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
      error = errno;
      timed.bytes(n);
    }
    lock.lock();
    w.in_call = nullptr;
    w.call_done.notify_all();
    // A thread waiting for this call (abandon_send) goes before the next one.
    while (w.awaiting > 0) w.work.wait(lock);
    wrote(c, op, n, error);
    if (n < 0 && (error == EAGAIN || error == EWOULDBLOCK) && !w.stop) {
      lock.unlock();  // the socket is full: wait for room (reading no payload)
      pollfd room{c.fd, POLLOUT, 0};
      ::poll(&room, 1, kWriterPollMs);
      lock.lock();
    }
  }
}

void Engine::wrote(Connection& c, const std::shared_ptr<SendOp>& op, long n, int error) {
  if (n > 0) op->written += static_cast<std::size_t>(n);
  if (op->written == op->total()) {
    complete(*op);
    if (!c.sends.empty() && c.sends.front() == op) c.sends.pop_front();
    driver_.wake();  // a wait on it may be blocked in poll()
  }
  // The peer said goodbye during the call (goodbye_received left this to
  // us): anything still to send can no longer arrive.
  if (c.departed && broken_.empty() && !c.sends.empty())
    fail_all(c.peer, departed_message(c.peer, "to send to it (" +
                                                  describe_tag(c.sends.front()->tag) + ")"));
  if (!op->done && !broken_.empty()) {
    // The engine failed during the call (fail_connection left it to us).
    complete(*op, broken_, broken_peer_);
    driver_.wake();
  }
  if (n < 0 && error != EAGAIN && error != EWOULDBLOCK && error != EINTR && c.open() &&
      c.send_failure.empty())
    sends_failed(c, error);
}

void Engine::await_writer(std::unique_lock<std::mutex>& lock, const SendOp& op) {
  Connection& c = connection(op.peer);
  if (!c.writer || c.writer->in_call != &op) return;
  Connection::Writer& w = *c.writer;
  ++w.awaiting;
  while (w.in_call == &op) w.call_done.wait(lock);
  --w.awaiting;
  w.work.notify_one();  // the writer goes on
}

void Engine::stop_writers(std::unique_lock<std::mutex>& lock) {
  bool any = false;
  for (auto& c : connections_)
    if (c && c->writer) {
      c->writer->stop = true;
      c->writer->work.notify_one();
      any = true;
    }
  if (!any) return;
  lock.unlock();  // each finishes its call, then leaves
  for (auto& c : connections_)
    if (c && c->writer) c->writer->thread.join();
  lock.lock();
  for (auto& c : connections_)
    if (c) c->writer.reset();
}

}  // namespace ringlab::tcp
