#include "launcher/spawn.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <stdexcept>
#include <string_view>

extern char** environ;

namespace ringlab::launch {

namespace {

std::string system_error(const std::string& what) { return what + ": " + std::strerror(errno); }

// The threads this process runs: /proc/self/task holds an entry for each
// (Linux). 0 when it cannot tell.
int thread_count() {
  DIR* tasks = ::opendir("/proc/self/task");
  if (!tasks) return 0;
  int count = 0;
  while (const dirent* entry = ::readdir(tasks))
    if (entry->d_name[0] != '.') ++count;
  ::closedir(tasks);
  return count;
}

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

namespace {

struct Pipes {
  int out[2] = {-1, -1};  // the child's stdout: read end, write end
  int err[2] = {-1, -1};
};

Pipes make_pipes() {
  Pipes p;
  if (::pipe2(p.out, O_CLOEXEC) != 0) throw std::runtime_error(system_error("cannot create a pipe"));
  if (::pipe2(p.err, O_CLOEXEC) != 0) {
    ::close(p.out[0]);
    ::close(p.out[1]);
    throw std::runtime_error(system_error("cannot create a pipe"));
  }
  return p;
}

// Signals stay blocked across fork, so that no handler of ours runs in the
// child (it would write into our signal pipe) before it resets them. Returns
// fork()'s value; throws (naming `what`) when it fails.
pid_t fork_with_signals_blocked(const Pipes& p, const std::string& what) {
  sigset_t all, previous;
  sigfillset(&all);
  ::sigprocmask(SIG_SETMASK, &all, &previous);
  const pid_t pid = ::fork();
  if (pid != 0) ::sigprocmask(SIG_SETMASK, &previous, nullptr);
  if (pid < 0) {
    for (int fd : {p.out[0], p.out[1], p.err[0], p.err[1]}) ::close(fd);
    throw std::runtime_error(system_error("cannot start " + what));
  }
  return pid;
}

// In the child, both kinds: only async-signal-safe calls. False when the
// launcher is already gone.
bool set_up_child(pid_t parent, const Pipes& p, bool every_handler) {
  // If the launcher dies, so does the rank: no orphans left running.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) return false;
  // Its own process group, so stopping the rank also stops what it started.
  ::setpgid(0, 0);
  for (int signal_number : {SIGCHLD, SIGINT, SIGTERM}) ::signal(signal_number, SIG_DFL);
  // A forked rank, which no execve resets: every handler, ignored ones kept.
  for (int signal_number = 1; every_handler && signal_number < NSIG; ++signal_number) {
    struct sigaction action {};
    if (::sigaction(signal_number, nullptr, &action) == 0 && action.sa_handler != SIG_IGN &&
        action.sa_handler != SIG_DFL)
      ::signal(signal_number, SIG_DFL);
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::dup2(p.out[1], 1);
  ::dup2(p.err[1], 2);
  return true;
}

SpawnedChild parent_side(pid_t pid, const Pipes& p) {
  ::setpgid(pid, pid);  // also here: whichever runs first, the group exists before any kill
  ::close(p.out[1]);
  ::close(p.err[1]);
  return {pid, p.out[0], p.err[0]};
}

// Where every child of the launcher that does not become another program
// ends: _exit, which runs none of what belongs to the parent (its atexit
// handlers, its static destructors) and unwinds none of its frames.
[[noreturn]] void end_child(int status) { ::_exit(status); }

// A forked rank from the fork to its end (spawn.hpp, spawn_forked).
[[noreturn]] void run_forked_child(const std::function<int()>& entry, const Pipes& p,
                                   pid_t parent) {
  if (!set_up_child(parent, p, true)) end_child(127);
  for (int fd : {p.out[0], p.out[1], p.err[0], p.err[1]}) ::close(fd);
  std::setvbuf(stdout, nullptr, _IOFBF, BUFSIZ);
  int status = 1;
  try {
    status = entry();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", program_invocation_short_name, e.what());
  } catch (...) {
    std::fprintf(stderr, "%s: error: an exception that is not a std::exception\n",
                 program_invocation_short_name);
  }
  std::cout.flush();
  std::fflush(stdout);
  std::fflush(stderr);
  end_child(status);
}

}  // namespace

SpawnedChild spawn(const std::string& path, std::vector<std::string> argv,
                   std::vector<std::string> environment, const std::string& what) {
  const Pipes p = make_pipes();
  std::vector<char*> argv_pointers = pointers(argv);
  std::vector<char*> env_pointers = pointers(environment);
  const pid_t parent = ::getpid();
  static constexpr char kExecFailed[] = "ringlab run: cannot execute the program (execve failed)\n";
  const pid_t pid = fork_with_signals_blocked(p, what);
  if (pid == 0) {
    if (set_up_child(parent, p, false)) {
      // Nothing else of ours goes with it: not the store's sockets, not the
      // other ranks' pipes (as torchrun's subprocesses, which close_fds).
      if (::close_range(3, ~0U, 0) != 0)
        for (int fd = 3; fd < 4096; ++fd) ::close(fd);
      ::execve(path.c_str(), argv_pointers.data(), env_pointers.data());
      [[maybe_unused]] const ssize_t ignored = ::write(2, kExecFailed, sizeof kExecFailed - 1);
    }
    end_child(127);
  }
  return parent_side(pid, p);
}

SpawnedChild spawn_forked(const std::function<int()>& entry, const std::string& what) {
  if (const int threads = thread_count(); threads > 1)
    throw std::runtime_error(
        "cannot start " + what + " as a fork of this program: it runs " +
        std::to_string(threads) + " threads, and a fork copies only the calling one (a lock "
        "another thread holds would stay locked in the rank for good): start the ranks before "
        "the program starts a thread, or start the program under ringlab run (each of its "
        "processes is then one rank, and forks none)");
  // What this process has buffered would otherwise be written twice: once by
  // it, once by the child's copy.
  std::cout.flush();
  std::fflush(stdout);
  std::fflush(stderr);
  const Pipes p = make_pipes();
  const pid_t parent = ::getpid();
  const pid_t pid = fork_with_signals_blocked(p, what);
  if (pid == 0) run_forked_child(entry, p, parent);
  return parent_side(pid, p);
}

}  // namespace ringlab::launch
