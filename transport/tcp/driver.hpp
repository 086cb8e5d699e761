// Who drives the TCP engine's sockets (leader/followers).
//
// Nothing runs in the background: a thread that waits on a request drives
// every socket itself. If several threads wait at once, one drives (it holds
// a Turn) and the others follow: they sleep on a condition variable that the
// driver signals after each round and whenever an operation completes, and
// one of them takes over when the Turn ends. A driver blocked in poll() is
// woken through an eventfd when it must watch something new (a send queued,
// a connection unparked). Everything here is guarded by the engine's mutex.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace ringlab::tcp {

class Driver {
 public:
  using Clock = std::chrono::steady_clock;

  // rank: for the message if the eventfd cannot be made (CommError).
  explicit Driver(int rank);
  ~Driver();
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  // Whether a thread drives now.
  bool busy() const { return driving_; }

  // This thread drives the sockets for the Turn's lifetime; when it ends
  // (returning or throwing), a follower may take over.
  class Turn {
   public:
    explicit Turn(Driver& driver) : driver_(driver) { driver_.driving_ = true; }
    ~Turn() {
      driver_.driving_ = false;
      driver_.progressed();
    }
    Turn(const Turn&) = delete;
    Turn& operator=(const Turn&) = delete;

   private:
    Driver& driver_;
  };

  // Sleeps (lock released) until the driver signals progress, or `until`.
  void follow(std::unique_lock<std::mutex>& lock, Clock::time_point until);
  // Something completed or changed: the followers look again.
  void progressed() {
    if (followers_ > 0) progressed_.notify_all();
  }
  // Wakes a driver blocked in poll() (if one drives).
  void wake() const;
  // The eventfd a driver polls, and reading it clear after it fired.
  int wake_fd() const { return wake_fd_; }
  void clear_wake() const;

 private:
  bool driving_ = false;
  int followers_ = 0;
  std::condition_variable progressed_;
  int wake_fd_ = -1;
};

}  // namespace ringlab::tcp
