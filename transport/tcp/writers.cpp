// The writer threads' loop (see writers.hpp).
#include "transport/tcp/writers.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>
#include <system_error>

#include "transport/tcp/io_timers.hpp"

namespace ringlab::tcp {

namespace {
// How long a writer waits in poll() for room before it looks at its queue again.
constexpr int kWriterPollMs = 20;
}  // namespace

Writers::Writers(std::mutex& mutex, int size, Wrote wrote)
    : mutex_(mutex), wrote_(std::move(wrote)), by_peer_(static_cast<std::size_t>(size)) {}

Writers::~Writers() {
  // stop_all ran (Engine::shutdown); a writer left here would use a
  // connection that is going away, so stop it rather than crash.
  std::unique_lock lock(mutex_);
  for (auto& w : by_peer_)
    if (w) {
      w->stop = true;
      w->work.notify_one();
    }
  lock.unlock();
  for (auto& w : by_peer_)
    if (w && w->thread.joinable()) w->thread.join();
}

void Writers::start(Connection& c) {
  if (c.has_writer) return;
  auto w = std::make_unique<Writer>();
  w->connection = &c;
  try {
    w->thread = std::thread([this, &c, &writer = *w] { loop(c, writer); });
  } catch (const std::system_error&) {
    return;  // no thread to be had: the driver writes, as without writers
  }
  by_peer_[static_cast<std::size_t>(c.peer)] = std::move(w);
  c.has_writer = true;
}

void Writers::notify(const Connection& c) {
  if (Writer* w = of(c)) w->work.notify_one();
}

const SendOp* Writers::in_call(const Connection& c) const {
  const Writer* w = of(c);
  return w ? w->in_call : nullptr;
}

void Writers::loop(Connection& c, Writer& w) {
  std::unique_lock lock(mutex_);
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
    // A thread waiting for this call (await_call) goes before the next one.
    while (w.awaiting > 0) w.work.wait(lock);
    wrote_(c, op, static_cast<long>(n), error);
    if (n < 0 && (error == EAGAIN || error == EWOULDBLOCK) && !w.stop) {
      lock.unlock();  // the socket is full: wait for room (reading no payload)
      pollfd room{c.fd, POLLOUT, 0};
      ::poll(&room, 1, kWriterPollMs);
      lock.lock();
    }
  }
}

void Writers::await_call(std::unique_lock<std::mutex>& lock, const Connection& c,
                         const SendOp& op) {
  Writer* w = of(c);
  if (!w || w->in_call != &op) return;
  ++w->awaiting;
  while (w->in_call == &op) w->call_done.wait(lock);
  --w->awaiting;
  w->work.notify_one();  // the writer goes on
}

void Writers::stop_all(std::unique_lock<std::mutex>& lock) {
  bool any = false;
  for (auto& w : by_peer_)
    if (w) {
      w->stop = true;
      w->work.notify_one();
      any = true;
    }
  if (!any) return;
  lock.unlock();  // each finishes its call, then leaves
  for (auto& w : by_peer_)
    if (w) w->thread.join();
  lock.lock();
  for (auto& w : by_peer_)
    if (w) {
      w->connection->has_writer = false;
      w.reset();
    }
}

}  // namespace ringlab::tcp
