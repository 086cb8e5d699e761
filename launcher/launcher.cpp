#include "launcher/launcher.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <optional>
#include <stdexcept>

extern char** environ;

namespace ringlab::launch {

namespace {

using Clock = std::chrono::steady_clock;

std::string system_error(const std::string& what) { return what + ": " + std::strerror(errno); }

// ---- signals: SIGCHLD wakes the loop; SIGINT/SIGTERM stop the job ---------
//
// The handlers only write the signal number into a pipe that poll() watches,
// so the loop sees a child's exit or the user's Ctrl-C at once.

int signal_pipe_write_end = -1;

void on_signal(int signal_number) {
  const int saved_errno = errno;
  const unsigned char byte = static_cast<unsigned char>(signal_number);
  [[maybe_unused]] const ssize_t ignored = ::write(signal_pipe_write_end, &byte, 1);
  errno = saved_errno;
}

class SignalPipe {
 public:
  SignalPipe() {
    if (::pipe2(fds_, O_CLOEXEC | O_NONBLOCK) != 0)
      throw std::runtime_error(system_error("cannot create a pipe"));
    signal_pipe_write_end = fds_[1];
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    for (std::size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &action, &saved_[i]);
  }
  ~SignalPipe() {
    for (std::size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &saved_[i], nullptr);
    signal_pipe_write_end = -1;
    ::close(fds_[0]);
    ::close(fds_[1]);
  }
  SignalPipe(const SignalPipe&) = delete;
  SignalPipe& operator=(const SignalPipe&) = delete;

  int read_end() const { return fds_[0]; }
  // The last SIGINT/SIGTERM received since the previous call, or 0.
  int drain() {
    int stop_signal = 0;
    unsigned char bytes[64];
    ssize_t n;
    while ((n = ::read(fds_[0], bytes, sizeof bytes)) > 0)
      for (ssize_t i = 0; i < n; ++i)
        if (bytes[i] != SIGCHLD) stop_signal = bytes[i];
    return stop_signal;
  }

 private:
  static constexpr std::array<int, 3> kSignals{SIGCHLD, SIGINT, SIGTERM};
  int fds_[2]{-1, -1};
  std::array<struct sigaction, 3> saved_{};
};

// ---- output: one write per line ------------------------------------------

void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the reader is gone; the ranks' output is lost, not the job
    done += static_cast<std::size_t>(n);
  }
}

// One child's stdout or stderr: bytes come in, whole lines go out.
struct Stream {
  int fd = -1;       // read end of the pipe; -1 once closed
  int out_fd = 1;    // where its lines go
  std::string prefix;
  std::string pending;  // bytes after the last newline

  // Lines longer than this go out in pieces (a runaway rank must not eat memory).
  static constexpr std::size_t kMaxLine = 1 << 20;

  void take(const char* data, std::size_t size) {
    pending.append(data, size);
    std::size_t start = 0;
    std::string lines;
    for (std::size_t newline; (newline = pending.find('\n', start)) != std::string::npos;
         start = newline + 1)
      lines += prefix + pending.substr(start, newline + 1 - start);
    pending.erase(0, start);
    if (pending.size() >= kMaxLine) {
      lines += prefix + pending + '\n';
      pending.clear();
    }
    // Every line ends up in one write: several whole lines of the same rank
    // may share it, but no line is ever split between two writes.
    if (!lines.empty()) write_all(out_fd, lines);
  }
  // End of stream: the last line, even without its newline, ends with one so
  // the next rank's line does not continue it.
  void close() {
    if (!pending.empty()) write_all(out_fd, prefix + pending + '\n');
    pending.clear();
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

struct Child {
  int rank = 0;
  pid_t pid = -1;
  bool running = false;
  RankExit exit;
  Clock::time_point ended;  // when we reaped it
  Stream out, err;
};

// A rank killed by a signal we did not send, reaped this soon after another
// rank's failure, is taken as the cause: when a rank dies its peers see their
// connections close and fail at once, and one of them may be reaped first.
constexpr Milliseconds kCauseWindow{500};

// The failure that started it all: the first rank to fail by itself, unless
// a rank killed by a signal follows within kCauseWindow. nullptr: none failed.
const Child* cause_of_failure(const std::vector<Child>& children) {
  const Child* first = nullptr;
  for (const Child& c : children)
    if (c.exit.failed() && !c.exit.stopped_by_us && (!first || c.ended < first->ended)) first = &c;
  if (!first || first->exit.signal_number != 0) return first;
  const Child* killed = nullptr;
  for (const Child& c : children)
    if (c.exit.signal_number != 0 && !c.exit.stopped_by_us &&
        c.ended <= first->ended + kCauseWindow && (!killed || c.ended < killed->ended))
      killed = &c;
  return killed ? killed : first;
}

// ---- starting a child --------------------------------------------------------

// The program's path, looked up on PATH before forking (execve in the child
// then needs no allocation). Throws when there is no such program.
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

// The parent's environment with the launcher's variables replacing any of the
// same name.
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

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> result;
  for (std::string& s : strings) result.push_back(s.data());
  result.push_back(nullptr);
  return result;
}

void start_child(Child& child, const std::string& path, std::vector<std::string> argv,
                 std::vector<std::string> environment) {
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) throw std::runtime_error(system_error("cannot create a pipe"));
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
    throw std::runtime_error(system_error("cannot start rank " + std::to_string(child.rank)));
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
    ::execve(path.c_str(), argv_pointers.data(), env_pointers.data());
    [[maybe_unused]] const ssize_t ignored = ::write(2, kExecFailed, sizeof kExecFailed - 1);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here: whichever runs first, the group exists before any kill
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  child.pid = pid;
  child.running = true;
  child.out.fd = out_pipe[0];
  child.err.fd = err_pipe[0];
}

// ---- the job token -------------------------------------------------------------
//
// Every rank of a job proves to the store and to the others that it knows
// the job's secret, RINGLAB_JOB_TOKEN (transport/tcp/tcp.hpp). A launch of a
// single node makes one for its ranks, unless one was given; the nodes of a
// multi-node job must be given the same one (no node can hand its own to the
// others), and their ranks say so if it is missing.

bool token_given(const LaunchOptions& o) {
  if (std::getenv("RINGLAB_JOB_TOKEN")) return true;
  return std::any_of(o.extra_environment.begin(), o.extra_environment.end(),
                     [](const auto& variable) { return variable.first == "RINGLAB_JOB_TOKEN"; });
}

// 32 random bytes from the kernel, in hex.
std::string fresh_job_token() {
  unsigned char bytes[32];
  std::size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error(system_error("cannot make a job token (getrandom)"));
    got += static_cast<std::size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string token;
  for (unsigned char byte : bytes) {
    token += kHex[byte >> 4];
    token += kHex[byte & 15];
  }
  return token;
}

// ---- the failure message -----------------------------------------------------

std::string rank_list(const std::vector<int>& ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i)
    text += (i ? ", " : "") + std::to_string(ranks[i]);
  return text;
}

std::string others_summary(const std::vector<Child>& children, int failed_rank) {
  std::vector<int> stopped, failed_too;
  for (const Child& c : children) {
    if (c.rank == failed_rank) continue;
    if (c.exit.stopped_by_us)
      stopped.push_back(c.rank);
    else if (c.exit.failed())
      failed_too.push_back(c.rank);
  }
  std::string text;
  const int others = static_cast<int>(children.size()) - (failed_rank >= 0 ? 1 : 0);
  if (!stopped.empty()) {
    if (static_cast<int>(stopped.size()) == others)
      text += "; stopped the " + std::string(failed_rank >= 0 ? "other " : "") +
              std::to_string(others) + (others == 1 ? " rank" : " ranks");
    else
      text += "; stopped " + rank_list(stopped);
  }
  if (!failed_too.empty())
    text += "; " + rank_list(failed_too) + (failed_rank >= 0 ? " failed after it" : " failed");
  return text;
}

}  // namespace

// ---- public ------------------------------------------------------------------

std::string RankExit::describe() const {
  if (signal_number != 0) {
    const char* name = ::strsignal(signal_number);
    return "was killed by signal " + std::to_string(signal_number) +
           (name ? " (" + std::string(name) + ")" : "");
  }
  return "exited with status " + std::to_string(exit_status);
}

void validate(const LaunchOptions& o) {
  if (o.program.empty())
    throw std::invalid_argument(
        "no program to run: put it after --, e.g. ringlab run --nproc-per-node 4 -- ringlab "
        "lesson reduce");
  if (o.nproc_per_node < 1)
    throw std::invalid_argument("--nproc-per-node is " + std::to_string(o.nproc_per_node) +
                                ": it must be at least 1");
  if (o.nnodes < 1)
    throw std::invalid_argument("--nnodes is " + std::to_string(o.nnodes) +
                                ": it must be at least 1");
  if (o.node_rank < 0 || o.node_rank >= o.nnodes)
    throw std::invalid_argument("--node-rank is " + std::to_string(o.node_rank) +
                                " but --nnodes is " + std::to_string(o.nnodes) +
                                ": node ranks go from 0 to " + std::to_string(o.nnodes - 1));
  if (o.master_port < 0 || o.master_port > 65535)
    throw std::invalid_argument("--master-port is " + std::to_string(o.master_port) +
                                ": use a TCP port, 1 to 65535 (0: pick a free one)");
  if (o.nnodes > 1 && o.master_port == 0)
    throw std::invalid_argument(
        "--nnodes is " + std::to_string(o.nnodes) +
        ": give every node the same --master-port (and --master-addr, the address of node 0); "
        "only a single node can pick a free port by itself");
  if (o.master_addr.empty())
    throw std::invalid_argument("--master-addr is empty: give the address of node 0");
}

int pick_free_port(const std::string& address) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int error = ::getaddrinfo(address.c_str(), "0", &hints, &found); error != 0)
    throw std::runtime_error("cannot resolve master address '" + address +
                             "': " + ::gai_strerror(error) + "; pass --master-addr");
  std::string last_error = "no address";
  for (addrinfo* a = found; a; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    sockaddr_storage bound{};
    socklen_t length = sizeof bound;
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) == 0) {
      ::close(fd);
      ::freeaddrinfo(found);
      return bound.ss_family == AF_INET6
                 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                 : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    }
    last_error = std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(found);
  throw std::runtime_error("cannot bind a port on master address '" + address + "' (" +
                           last_error +
                           "): pass an address of this machine as --master-addr, or a "
                           "--master-port");
}

std::vector<std::pair<std::string, std::string>> rank_environment(const LaunchOptions& o,
                                                                  int master_port,
                                                                  int local_rank) {
  std::vector<std::pair<std::string, std::string>> variables = o.extra_environment;
  if (o.rank_timeout.count() > 0)
    variables.emplace_back("RINGLAB_TIMEOUT_MS", std::to_string(o.rank_timeout.count()));
  const auto set = [&](const std::string& name, const std::string& value) {
    std::erase_if(variables, [&](const auto& v) { return v.first == name; });
    variables.emplace_back(name, value);
  };
  set("MASTER_ADDR", o.master_addr);
  set("MASTER_PORT", std::to_string(master_port));
  set("RANK", std::to_string(o.node_rank * o.nproc_per_node + local_rank));
  set("WORLD_SIZE", std::to_string(o.nnodes * o.nproc_per_node));
  set("LOCAL_RANK", std::to_string(local_rank));
  set("LOCAL_WORLD_SIZE", std::to_string(o.nproc_per_node));
  set("GROUP_RANK", std::to_string(o.node_rank));
  set("GROUP_WORLD_SIZE", std::to_string(o.nnodes));
  return variables;
}

LaunchResult launch(const LaunchOptions& o) {
  validate(o);
  LaunchResult result;
  result.master_port = o.master_port != 0 ? o.master_port : pick_free_port(o.master_addr);
  const std::string path = resolve_program(o.program.front());

  const std::string job_token = o.nnodes == 1 && !token_given(o) ? fresh_job_token() : "";
  SignalPipe signals;
  std::vector<Child> children(static_cast<std::size_t>(o.nproc_per_node));
  const auto stop = [&](int signal_number) {
    for (Child& c : children)
      if (c.running && (::kill(-c.pid, signal_number) == 0 || ::kill(c.pid, signal_number) == 0))
        c.exit.stopped_by_us = true;
  };

  for (int local = 0; local < o.nproc_per_node; ++local) {
    Child& c = children[static_cast<std::size_t>(local)];
    c.rank = o.node_rank * o.nproc_per_node + local;
    c.exit.rank = c.rank;
    const std::string prefix = o.tee_prefix ? "[rank " + std::to_string(c.rank) + "] " : "";
    c.out = {-1, o.stdout_fd, prefix, {}};
    c.err = {-1, o.stderr_fd, prefix, {}};
    try {
      auto variables = rank_environment(o, result.master_port, local);
      if (!job_token.empty()) variables.emplace_back("RINGLAB_JOB_TOKEN", job_token);
      start_child(c, path, o.program, child_environment(variables));
    } catch (...) {
      stop(SIGKILL);
      for (Child& started : children)
        if (started.running) ::waitpid(started.pid, nullptr, 0);
      throw;
    }
  }

  // Stopping: after the first failure (or the deadline, or a signal), SIGTERM
  // at term_at, then SIGKILL at kill_at.
  const Clock::time_point started = Clock::now();
  std::optional<Clock::time_point> term_at, kill_at;
  std::optional<Clock::time_point> drain_until;  // every child reaped: wait this long for EOF
  std::string reason;  // why we stopped, when not a rank's failure
  bool failure_seen = false;  // a rank failed by itself
  const auto begin_stopping = [&](Milliseconds delay) {
    if (term_at) return;
    term_at = Clock::now() + delay;
    kill_at = *term_at + o.kill_after;
  };

  for (;;) {
    const bool any_running =
        std::any_of(children.begin(), children.end(), [](const Child& c) { return c.running; });
    const bool any_open = std::any_of(children.begin(), children.end(), [](const Child& c) {
      return c.out.fd >= 0 || c.err.fd >= 0;
    });
    if (!any_running && !any_open) break;
    if (!any_running && !drain_until) drain_until = Clock::now() + Milliseconds(1000);
    if (drain_until && Clock::now() >= *drain_until) {
      // Something the ranks started still holds their pipes: stop listening.
      for (Child& c : children) c.out.close(), c.err.close();
      break;
    }

    // Poll until the next thing that is due; never longer than 200 ms.
    Clock::time_point wake = Clock::now() + Milliseconds(200);
    for (const auto& due : {term_at, kill_at, drain_until})
      if (due) wake = std::min(wake, *due);
    if (o.deadline.count() > 0 && !term_at) wake = std::min(wake, started + o.deadline);
    const auto wait_ms = std::max<long long>(
        0, std::chrono::ceil<Milliseconds>(wake - Clock::now()).count());

    std::vector<pollfd> fds{{signals.read_end(), POLLIN, 0}};
    std::vector<Stream*> streams;
    for (Child& c : children)
      for (Stream* s : {&c.out, &c.err})
        if (s->fd >= 0) {
          fds.push_back({s->fd, POLLIN, 0});
          streams.push_back(s);
        }
    if (::poll(fds.data(), fds.size(), static_cast<int>(wait_ms)) < 0 && errno != EINTR)
      throw std::runtime_error(system_error("poll failed"));

    if (const int stop_signal = signals.drain();
        stop_signal != 0 && reason.empty() && !failure_seen) {
      const char* name = ::strsignal(stop_signal);
      reason = "interrupted by signal " + std::to_string(stop_signal) +
               (name ? " (" + std::string(name) + ")" : "");
      result.exit_code = 128 + stop_signal;
      begin_stopping(Milliseconds(0));
    }
    for (std::size_t i = 0; i < streams.size(); ++i) {
      if (!(fds[i + 1].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buffer[65536];
      const ssize_t n = ::read(streams[i]->fd, buffer, sizeof buffer);
      if (n > 0)
        streams[i]->take(buffer, static_cast<std::size_t>(n));
      else if (n == 0 || errno != EINTR)
        streams[i]->close();
    }

    // Reap. The first failure starts the stopping; which rank caused it is
    // decided at the end (cause_of_failure).
    for (Child& c : children) {
      if (!c.running) continue;
      int status = 0;
      const pid_t pid = ::waitpid(c.pid, &status, WNOHANG);
      if (pid != c.pid) continue;
      c.running = false;
      c.ended = Clock::now();
      if (WIFSIGNALED(status)) c.exit.signal_number = WTERMSIG(status);
      else c.exit.exit_status = WEXITSTATUS(status);
      // (A rank that exits after our SIGTERM counts as stopped by us.)
      if (!c.exit.stopped_by_us && c.exit.failed() && reason.empty() && !failure_seen) {
        failure_seen = true;
        begin_stopping(o.stop_after);
      }
    }

    const Clock::time_point now = Clock::now();
    if (o.deadline.count() > 0 && !term_at && !failure_seen && now >= started + o.deadline) {
      reason = "the job ran longer than its limit of " + std::to_string(o.deadline.count()) +
               " ms";
      result.exit_code = 124;
      begin_stopping(Milliseconds(0));
    }
    if (term_at && now >= *term_at) {
      stop(SIGTERM);
      term_at = Clock::time_point::max();  // sent; do not send again
    }
    if (kill_at && now >= *kill_at) {
      stop(SIGKILL);
      kill_at = Clock::time_point::max();
    }
  }

  for (const Child& c : children) result.ranks.push_back(c.exit);
  if (const Child* cause = failure_seen ? cause_of_failure(children) : nullptr) {
    result.first_failure = cause->exit;
    result.exit_code = cause->exit.signal_number != 0 ? 128 + cause->exit.signal_number
                                                      : cause->exit.exit_status;
    result.message = "rank " + std::to_string(cause->rank) + " " + cause->exit.describe() +
                     others_summary(children, cause->rank);
  } else if (!reason.empty())
    result.message = reason + others_summary(children, -1);
  return result;
}

}  // namespace ringlab::launch
