// SIGCHLD, SIGINT and SIGTERM as bytes in a pipe, so that one poll() sees a
// child's exit, the user's Ctrl-C and the children's output alike.
//
// While a SignalPipe lives, its handlers replace the previous ones (restored
// when it goes). The handlers only write the signal number into the pipe.
// One at a time per process.
#pragma once

#include <signal.h>

#include <array>

namespace ringlab::launch {

class SignalPipe {
 public:
  SignalPipe();
  ~SignalPipe();
  SignalPipe(const SignalPipe&) = delete;
  SignalPipe& operator=(const SignalPipe&) = delete;

  // Readable when a signal arrived since the last drain().
  int read_end() const { return fds_[0]; }
  // Empties the pipe; returns the last SIGINT/SIGTERM received, or 0 (SIGCHLD
  // only wakes the reader).
  int drain();

 private:
  static constexpr std::array<int, 3> kSignals{SIGCHLD, SIGINT, SIGTERM};
  int fds_[2]{-1, -1};
  std::array<struct sigaction, 3> saved_{};
};

}  // namespace ringlab::launch
