#include "launcher/spawn.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string_view>

extern char** environ;

namespace ringlab::launch {

namespace {

std::string system_error(const std::string& what) { return what + ": " + std::strerror(errno); }

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> result;
  for (std::string& s : strings) result.push_back(s.data());
  result.push_back(nullptr);
  return result;
}

}  // namespace

std::string resolve_program(const std::string& program) {
  if (program.find('/') != std::string::npos) {
    if (::access(program.c_str(), X_OK) != 0)
      throw std::invalid_argument(system_error("cannot run '" + program + "'"));
    return program;
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t colon = dirs.find(':', start);
    if (colon == std::string::npos) colon = dirs.size();
    const std::string dir = colon == start ? "." : dirs.substr(start, colon - start);
    const std::string candidate = dir + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = colon + 1;
  }
  throw std::invalid_argument("cannot run '" + program +
                              "': no such program on PATH; give its path (./prog) or fix PATH");
}

std::vector<std::string> child_environment(
    const std::vector<std::pair<std::string, std::string>>& ours) {
  std::vector<std::string> result;
  for (char** entry = environ; *entry; ++entry) {
    const std::string_view text(*entry);
    const std::string_view name = text.substr(0, text.find('='));
    const bool replaced = std::any_of(ours.begin(), ours.end(),
                                      [&](const auto& variable) { return variable.first == name; });
    if (!replaced) result.emplace_back(text);
  }
  for (const auto& [name, value] : ours) result.push_back(name + "=" + value);
  return result;
}

SpawnedChild spawn(const std::string& path, std::vector<std::string> argv,
                   std::vector<std::string> environment, const std::string& what) {
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0)
    throw std::runtime_error(system_error("cannot create a pipe"));
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    throw std::runtime_error(system_error("cannot create a pipe"));
  }
  std::vector<char*> argv_pointers = pointers(argv);
  std::vector<char*> env_pointers = pointers(environment);
  const pid_t parent = ::getpid();
  static constexpr char kExecFailed[] = "ringlab run: cannot execute the program (execve failed)\n";

  // Signals stay blocked across fork, so that no handler of ours runs in the
  // child (it would write into our signal pipe) before it resets them.
  sigset_t all, previous;
  sigfillset(&all);
  ::sigprocmask(SIG_SETMASK, &all, &previous);
  const pid_t pid = ::fork();
  if (pid != 0) ::sigprocmask(SIG_SETMASK, &previous, nullptr);
  if (pid < 0) {
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) ::close(fd);
    throw std::runtime_error(system_error("cannot start " + what));
  }
  if (pid == 0) {
    // In the child: only async-signal-safe calls until execve.
    // If the launcher dies, so does the rank: no orphans left running.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    // Its own process group, so stopping the rank also stops what it started.
    ::setpgid(0, 0);
    for (int signal_number : {SIGCHLD, SIGINT, SIGTERM}) ::signal(signal_number, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    // Nothing else of ours goes with it: not the store's sockets, not the
    // other ranks' pipes (as torchrun's subprocesses, which close_fds).
    if (::close_range(3, ~0U, 0) != 0)
      for (int fd = 3; fd < 4096; ++fd) ::close(fd);
    ::execve(path.c_str(), argv_pointers.data(), env_pointers.data());
    [[maybe_unused]] const ssize_t ignored = ::write(2, kExecFailed, sizeof kExecFailed - 1);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here: whichever runs first, the group exists before any kill
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  return {pid, out_pipe[0], err_pipe[0]};
}

}  // namespace ringlab::launch
