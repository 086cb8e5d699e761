// The TCP engine's waits: a thread that waits drives the sockets (or follows
// the thread that does, driver.hpp), spinning first where the spin policy
// says so (spin_policy.hpp), until its operation is done or its deadline.
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "transport/tcp/engine.hpp"
#include "transport/tcp/io_timers.hpp"
#include "transport/tcp/parking.hpp"

namespace ringlab::tcp {

void Engine::wait(const std::shared_ptr<Op>& op, bool is_send, Duration timeout) {
  std::unique_lock lock(mutex_);
  if (!op->done) {
    const auto started = Clock::now();
    const auto deadline = started + timeout;
    const std::size_t bytes = is_send ? static_cast<const SendOp&>(*op).size
                                      : static_cast<const RecvOp&>(*op).buffer.size();
    // On record while it waits (answers to "whom do you wait for?").
    const BlameBook::OnRecord on_record(blame_, op.get());
    bool polled = false;  // even a zero timeout gets one look at the sockets
    unsigned looks = 0;   // while spinning (see kFullLookEvery)
    while (!op->done) {
      if (polled && Clock::now() >= deadline) {
        time_out(lock, op, is_send, timeout);  // returns only if op finished meanwhile
        break;
      }
      polled = true;
      if (driver_.busy()) {
        driver_.follow(lock, deadline);
        continue;
      }
      const bool spin = spin_.spins(bytes, started, Clock::now());
      {
        const Driver::Turn turn(driver_);
        if (spin && !is_send && ++looks % SpinPolicy::kFullLookEvery != 0 &&
            can_look_alone(op->peer))
          connection(op->peer).read(*this);
        else
          drive(lock, spin ? Clock::now() : deadline);  // spinning: a look that does not block
      }
      if (spin && !op->done) yield(lock);
    }
  }
  if (op->error.empty()) {
    blame_.recovered();  // a timeout before it is not why this rank stops
    return;
  }
  if (op->failed_peer >= 0) throw PeerError(op->failed_peer, op->error);
  throw CommError(op->error);
}

void Engine::yield(std::unique_lock<std::mutex>& lock) {
  lock.unlock();
  const auto yielded = Clock::now();
  {
    timers::Scope timed(timers::Yield);
    ::sched_yield();  // the rank this one waits for may share its processor
  }
  const auto back = Clock::now();
  lock.lock();
  spin_.yielded(yielded, back);
}

void Engine::time_out(std::unique_lock<std::mutex>& lock, const std::shared_ptr<Op>& op,
                      bool is_send, Duration timeout) {
  const std::string timed_out =
      timeout_message(rank_, is_send ? "send to" : "receive from", op->peer, op->tag, timeout);
  if (!is_send) withdraw_locked(std::static_pointer_cast<RecvOp>(op));
  if (!broken_.empty()) throw TimeoutError(timed_out);  // withdrawing it broke the stream
  // A receive from any source that met no message waited for nobody in
  // particular: there is no one to ask about, and no one to blame.
  if (op->peer == kAnySource) throw TimeoutError(timed_out);
  TimeoutVerdict verdict = find_blame(lock, *op, timed_out, timeout);
  if (op->done) return;    // a send that finished meanwhile
  if (!broken_.empty()) {  // another rank's abort came meanwhile: it names the cause
    if (broken_peer_ >= 0) throw PeerError(broken_peer_, broken_);
    throw CommError(broken_);
  }
  const std::string message = verdict.message;
  blame_.stalled(std::move(verdict));
  throw TimeoutError(message);
}

bool Engine::test(const std::shared_ptr<Op>& op) {
  std::unique_lock lock(mutex_);
  if (!op->done && !driver_.busy()) {
    const Driver::Turn turn(driver_);
    drive(lock, Clock::now());  // one round that does not block
  }
  return op->done;
}

bool Engine::gather_poll_set() {
  poll_fds_.clear();
  poll_connections_.clear();
  poll_fds_.push_back({driver_.wake_fd(), POLLIN, 0});
  bool any_parked = false;
  for (auto& c : connections_) {
    if (!c || !c->open()) continue;
    any_parked = any_parked || (c->parked && parking::may_queue(c->frame.length, max_unexpected_));
    const short events =
        static_cast<short>((c->parked ? 0 : POLLIN) | (c->writable() ? POLLOUT : 0));
    poll_fds_.push_back({c->fd, events, 0});
    poll_connections_.push_back(c.get());
  }
  return any_parked;
}

void Engine::drive(std::unique_lock<std::mutex>& lock, Clock::time_point deadline) {
  const bool any_parked = gather_poll_set();
  auto left = std::max(deadline - Clock::now(), Clock::duration::zero());
  // Wake up in time to check on parked payloads.
  if (any_parked) left = std::min<Clock::duration>(left, parking::kParkPatience);
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(left);
  const timespec limit{static_cast<time_t>(seconds.count()),
                       static_cast<long>(std::chrono::nanoseconds(left - seconds).count())};
  lock.unlock();
  int ready, poll_error;
  {
    timers::Scope timed(timers::Poll);
    ready = ::ppoll(poll_fds_.data(), poll_fds_.size(), &limit, nullptr);
    poll_error = errno;
  }
  lock.lock();
  if (ready < 0) {
    if (poll_error == EINTR) return;
    throw CommError("rank " + std::to_string(rank_) +
                    ": poll() failed: " + std::strerror(poll_error));
  }
  const auto polled = Clock::now();
  if (ready > 0) last_event_ = polled;
  // A parked payload may be what everyone waits for.
  if (any_parked) unpark_overdue(polled);
  if (ready == 0) return;
  if (poll_fds_[0].revents) driver_.clear_wake();
  for (std::size_t i = 1; i < poll_fds_.size(); ++i) {
    const short revents = poll_fds_[i].revents;
    Connection& c = *poll_connections_[i - 1];
    if (!revents || !c.open()) continue;
    // An error or hang-up is found by reading, so whatever is parked moves.
    if (c.parked && (revents & (POLLHUP | POLLERR)))
      unpark(c, parking::may_queue(c.frame.length, max_unexpected_));
    if (revents & (POLLIN | POLLHUP | POLLERR)) c.read(*this);
    if ((revents & (POLLOUT | POLLERR)) && c.writable()) c.write(*this);
  }
}

bool Engine::can_look_alone(int peer) const {
  if (peer == kAnySource) return false;
  const Connection* c = connections_[static_cast<std::size_t>(peer)].get();
  return c && c->open() && !c->parked && !sends_pending();
}

bool Engine::sends_pending() const {
  return std::any_of(connections_.begin(), connections_.end(),
                     [](const auto& c) { return c && c->writable(); });
}

}  // namespace ringlab::tcp
