#include "exercises/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace ringlab::exercises {

namespace {

using Clock = std::chrono::steady_clock;

// Reads the pipe until it closes or the deadline passes; true if it closed.
bool drain(int fd, std::string& output, Clock::time_point deadline) {
  char chunk[4096];
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    output.append(chunk, static_cast<std::size_t>(n));
  }
}

}  // namespace

std::string ProgramResult::describe() const {
  if (timed_out) return "did not finish in time and was stopped";
  if (signal_number != 0)
    return "was killed by signal " + std::to_string(signal_number) + " (" +
           ::strsignal(signal_number) + ")";
  return "exited with status " + std::to_string(exit_status);
}

ProgramResult run_program(const std::vector<std::string>& argv, std::chrono::seconds limit,
                          const std::string& folder) {
  if (argv.empty()) throw std::invalid_argument("run_program: no program");
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
    throw std::runtime_error("cannot make a pipe for " + argv[0] + ": " + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
  if (!folder.empty()) posix_spawn_file_actions_addchdir_np(&actions, folder.c_str());
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int error = ::posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(pipe_fds[1]);
  if (error != 0) {
    ::close(pipe_fds[0]);
    throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(error));
  }
  ProgramResult result;
  result.timed_out = !drain(pipe_fds[0], result.output, Clock::now() + limit);
  ::close(pipe_fds[0]);
  if (result.timed_out) ::kill(-pid, SIGKILL);  // the program and whatever it started
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) result.exit_status = WEXITSTATUS(status);
  if (WIFSIGNALED(status) && !result.timed_out) result.signal_number = WTERMSIG(status);
  return result;
}

}  // namespace ringlab::exercises
