// The TCP engine's pace (see poller.hpp).
#include "transport/tcp/poller.hpp"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <string>

#include "transport/tcp/io_timers.hpp"
#include "transport/tcp/parking.hpp"

namespace ringlab::tcp {

Poller::Poller(int rank) : rank_(rank), driver_(rank) {}

void Poller::yield(std::unique_lock<std::mutex>& lock) {
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

bool Poller::overdue(const Connection& c, std::uint64_t max_unexpected,
                     Clock::time_point now) const {
  return c.parked &&
         parking::overdue(c.frame.length, max_unexpected, now, c.parked_since, last_event_);
}

Poller::Round Poller::poll(std::unique_lock<std::mutex>& lock, const Connections& connections,
                           Clock::time_point deadline, std::uint64_t max_unexpected) {
  Round round;
  fds_.clear();
  polled_.clear();
  events_.clear();
  fds_.push_back({driver_.wake_fd(), POLLIN, 0});
  for (Connection* c : connections) {
    if (!c->open()) continue;
    round.any_parked =
        round.any_parked || (c->parked && parking::may_queue(c->frame.length, max_unexpected));
    const short events =
        static_cast<short>((c->parked ? 0 : POLLIN) | (c->writable() ? POLLOUT : 0));
    fds_.push_back({c->fd, events, 0});
    polled_.push_back(c);
  }
  auto left = std::max(deadline - Clock::now(), Clock::duration::zero());
  // Wake up in time to check on parked payloads.
  if (round.any_parked) left = std::min<Clock::duration>(left, parking::kParkPatience);
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(left);
  const timespec limit{static_cast<time_t>(seconds.count()),
                       static_cast<long>(std::chrono::nanoseconds(left - seconds).count())};
  lock.unlock();
  int ready, poll_error;
  {
    timers::Scope timed(timers::Poll);
    ready = ::ppoll(fds_.data(), fds_.size(), &limit, nullptr);
    poll_error = errno;
  }
  lock.lock();
  round.at = Clock::now();
  if (ready < 0) {
    round.any_parked = false;  // looked at in the next round
    if (poll_error == EINTR) return round;
    throw CommError("rank " + std::to_string(rank_) +
                    ": poll() failed: " + std::strerror(poll_error));
  }
  if (ready == 0) return round;
  last_event_ = round.at;
  if (fds_[0].revents) driver_.clear_wake();
  for (std::size_t i = 1; i < fds_.size(); ++i)
    if (fds_[i].revents) events_.push_back({polled_[i - 1], fds_[i].revents});
  round.events = events_;
  return round;
}

}  // namespace ringlab::tcp
