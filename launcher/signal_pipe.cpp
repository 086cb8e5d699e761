#include "launcher/signal_pipe.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace ringlab::launch {

namespace {

int signal_pipe_write_end = -1;

void on_signal(int signal_number) {
  const int saved_errno = errno;
  const unsigned char byte = static_cast<unsigned char>(signal_number);
  [[maybe_unused]] const ssize_t ignored = ::write(signal_pipe_write_end, &byte, 1);
  errno = saved_errno;
}

}  // namespace

SignalPipe::SignalPipe() {
  if (::pipe2(fds_, O_CLOEXEC | O_NONBLOCK) != 0)
    throw std::runtime_error(std::string("cannot create a pipe: ") + std::strerror(errno));
  signal_pipe_write_end = fds_[1];
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // SIGCHLD also when a child stops or resumes
  for (std::size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &action, &saved_[i]);
}

SignalPipe::~SignalPipe() {
  for (std::size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &saved_[i], nullptr);
  signal_pipe_write_end = -1;
  ::close(fds_[0]);
  ::close(fds_[1]);
}

int SignalPipe::drain() {
  int stop_signal = 0;
  unsigned char bytes[64];
  ssize_t n;
  while ((n = ::read(fds_[0], bytes, sizeof bytes)) > 0)
    for (ssize_t i = 0; i < n; ++i)
      if (bytes[i] != SIGCHLD) stop_signal = bytes[i];
  return stop_signal;
}

}  // namespace ringlab::launch
