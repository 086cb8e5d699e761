// The TCP engine's pace: who drives the sockets when several threads wait
// (driver.hpp), whether a wait spins before it blocks (spin_policy.hpp), one
// poll() round over the connections, and when a parked payload has waited
// long enough to be read into the queue (parking.hpp).
//
// State: the driver, the spin policy, when a socket last had news, and the
// poll set. Called with the engine's mutex held (released while poll()
// blocks and while a spinning wait yields).
#pragma once

#include <poll.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

#include "transport/tcp/connections.hpp"
#include "transport/tcp/driver.hpp"
#include "transport/tcp/spin_policy.hpp"

namespace ringlab::tcp {

class Poller {
 public:
  using Clock = std::chrono::steady_clock;

  explicit Poller(int rank);

  Driver& driver() { return driver_; }

  // Whether a wait for `bytes` that started at `started` spins now.
  bool spins(std::size_t bytes, Clock::time_point started) const {
    return spin_.spins(bytes, started, Clock::now());
  }
  // A spinning wait lets the other ranks run (lock released meanwhile).
  void yield(std::unique_lock<std::mutex>& lock);

  struct Event {
    Connection* connection;
    short revents;
  };
  struct Round {
    Clock::time_point at;           // when poll() returned
    bool any_parked = false;        // a parked payload may be read into the queue
    std::span<const Event> events;  // the connections with news (valid until the next round)
  };
  // One poll() over every open connection and the driver's wake-up, until
  // `deadline` (sooner while a payload that may be queued is parked), lock
  // released while blocked. max_unexpected: the most a kept message may
  // claim (parking.hpp). Throws CommError if poll() fails.
  Round poll(std::unique_lock<std::mutex>& lock, const Connections& connections,
             Clock::time_point deadline, std::uint64_t max_unexpected);
  // Whether c's parked payload has waited long enough (parking.hpp).
  bool overdue(const Connection& c, std::uint64_t max_unexpected, Clock::time_point now) const;

 private:
  int rank_;
  Driver driver_;
  SpinPolicy spin_;
  // When a poll() last reported an event (parking.hpp, overdue).
  Clock::time_point last_event_ = Clock::now();
  // The poll set, rebuilt each round: [0] is the driver's wake-up eventfd,
  // then one per open connection (polled_[i - 1]).
  std::vector<pollfd> fds_;
  std::vector<Connection*> polled_;
  std::vector<Event> events_;
};

}  // namespace ringlab::tcp
