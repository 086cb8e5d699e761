#include "launcher/supervisor.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "launcher/spawn.hpp"

namespace ringlab::launch {

namespace {

// A rank killed by a signal we did not send, reaped this soon after another
// rank's failure, is taken as the cause: when a rank dies its peers see their
// connections close and fail at once, and one of them may be reaped first.
constexpr Milliseconds kCauseWindow{500};

// Once every rank is reaped, how long we wait for the ends of their pipes
// (something they started may still hold them).
constexpr Milliseconds kDrainTime{1000};

// poll() never sleeps longer than this, whatever the caller allows.
constexpr Milliseconds kLongestSleep{200};

std::string rank_list(const std::vector<int>& ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i) text += (i ? ", " : "") + std::to_string(ranks[i]);
  return text;
}

}  // namespace

Supervisor::Supervisor(LaunchOptions options, int master_port, SignalPipe& signals)
    : options_(std::move(options)), master_port_(master_port), signals_(signals) {}

Supervisor::~Supervisor() {
  signal_running(SIGKILL);
  for (Child& c : children_) {
    if (c.running) ::waitpid(c.pid, nullptr, 0);
    c.out.close();
    c.err.close();
  }
}

// ---- start ------------------------------------------------------------------

void Supervisor::start() {
  const LaunchOptions& o = options_;
  const std::string path = resolve_program(o.program.front());
  children_.resize(static_cast<std::size_t>(o.nproc_per_node));
  for (int local = 0; local < o.nproc_per_node; ++local) {
    Child& c = children_[static_cast<std::size_t>(local)];
    c.rank = o.node_rank * o.nproc_per_node + local;
    c.exit.rank = c.rank;
    const std::string prefix = o.tee_prefix ? "[rank " + std::to_string(c.rank) + "] " : "";
    c.out = {-1, o.stdout_fd, prefix, {}};
    c.err = {-1, o.stderr_fd, prefix, {}};
    try {
      const SpawnedChild spawned =
          spawn(path, o.program, child_environment(rank_environment(o, master_port_, local)),
                "rank " + std::to_string(c.rank));
      c.pid = spawned.pid;
      c.running = true;
      c.out.fd = spawned.stdout_fd;
      c.err.fd = spawned.stderr_fd;
    } catch (...) {
      signal_running(SIGKILL);
      for (Child& started : children_)
        if (started.running) {
          ::waitpid(started.pid, nullptr, 0);
          started.running = false;
        }
      throw;
    }
  }
  started_ = Clock::now();
}

// ---- poll ---------------------------------------------------------------------

bool Supervisor::poll(Milliseconds max_wait) {
  if (check_finished()) return true;
  const Ready ready = wait_for_events(max_wait);
  take_stop_signal();
  read_output(ready);
  reap();
  check_time_limit();
  escalate();
  return check_finished();
}

Supervisor::Ready Supervisor::wait_for_events(Milliseconds max_wait) {
  // Sleep until the next thing that is due.
  Clock::time_point wake = Clock::now() + std::min(max_wait, kLongestSleep);
  for (const auto& due : {term_at_, kill_at_, drain_until_})
    if (due) wake = std::min(wake, *due);
  if (options_.deadline.count() > 0 && !term_at_)
    wake = std::min(wake, started_ + options_.deadline);
  const auto wait_ms =
      std::max<long long>(0, std::chrono::ceil<Milliseconds>(wake - Clock::now()).count());

  std::vector<pollfd> fds{{signals_.read_end(), POLLIN, 0}};
  std::vector<LineStream*> streams;
  for (Child& c : children_)
    for (LineStream* s : {&c.out, &c.err})
      if (s->fd >= 0) {
        fds.push_back({s->fd, POLLIN, 0});
        streams.push_back(s);
      }
  if (::poll(fds.data(), fds.size(), static_cast<int>(wait_ms)) < 0 && errno != EINTR)
    throw std::runtime_error(std::string("poll failed: ") + std::strerror(errno));

  Ready ready;
  for (std::size_t i = 0; i < streams.size(); ++i)
    if (fds[i + 1].revents & (POLLIN | POLLHUP | POLLERR)) ready.streams.push_back(streams[i]);
  return ready;
}

void Supervisor::take_stop_signal() {
  const int stop_signal = signals_.drain();
  if (stop_signal == 0) return;
  interrupted_by_ = stop_signal;
  if (!reason_.empty() || failure_seen_) return;
  const char* name = ::strsignal(stop_signal);
  reason_ = "interrupted by signal " + std::to_string(stop_signal) +
            (name ? " (" + std::string(name) + ")" : "");
  exit_code_ = 128 + stop_signal;
  begin_stopping(Milliseconds(0));
}

void Supervisor::read_output(const Ready& ready) {
  for (LineStream* stream : ready.streams) {
    char buffer[65536];
    const ssize_t n = ::read(stream->fd, buffer, sizeof buffer);
    if (n > 0)
      stream->take(buffer, static_cast<std::size_t>(n));
    else if (n == 0 || errno != EINTR)
      stream->close();
  }
}

// ---- reap -----------------------------------------------------------------------

void Supervisor::reap() {
  // The first failure starts the stopping; which rank caused it is decided at
  // the end (cause_of_failure).
  for (Child& c : children_) {
    if (!c.running) continue;
    int status = 0;
    if (::waitpid(c.pid, &status, WNOHANG) != c.pid) continue;
    c.running = false;
    c.ended = Clock::now();
    if (WIFSIGNALED(status))
      c.exit.signal_number = WTERMSIG(status);
    else
      c.exit.exit_status = WEXITSTATUS(status);
    // (A rank that exits after our SIGTERM counts as stopped by us.)
    if (!c.exit.stopped_by_us && c.exit.failed() && reason_.empty() && !failure_seen_) {
      failure_seen_ = true;
      begin_stopping(options_.stop_after);
    }
  }
}

// ---- escalate ---------------------------------------------------------------------

void Supervisor::check_time_limit() {
  if (options_.deadline.count() <= 0 || term_at_ || failure_seen_) return;
  if (Clock::now() < started_ + options_.deadline) return;
  reason_ =
      "the job ran longer than its limit of " + std::to_string(options_.deadline.count()) + " ms";
  exit_code_ = 124;
  begin_stopping(Milliseconds(0));
}

void Supervisor::escalate() {
  const Clock::time_point now = Clock::now();
  if (term_at_ && now >= *term_at_) {
    signal_running(SIGTERM);
    term_at_ = Clock::time_point::max();  // sent; do not send again
  }
  if (kill_at_ && now >= *kill_at_) {
    signal_running(SIGKILL);
    kill_at_ = Clock::time_point::max();
  }
}

void Supervisor::stop(const std::string& reason, int exit_code, Milliseconds delay) {
  if (reason_.empty() && !failure_seen_) {
    reason_ = reason;
    exit_code_ = exit_code;
  }
  begin_stopping(delay);
  escalate();
}

void Supervisor::begin_stopping(Milliseconds delay) {
  if (term_at_) return;
  term_at_ = Clock::now() + delay;
  kill_at_ = *term_at_ + options_.kill_after;
}

void Supervisor::signal_running(int signal_number) {
  // The whole process group of the rank, or the rank alone if it has left it.
  for (Child& c : children_)
    if (c.running && (::kill(-c.pid, signal_number) == 0 || ::kill(c.pid, signal_number) == 0))
      c.exit.stopped_by_us = true;
}

bool Supervisor::check_finished() {
  if (finished_) return true;
  const bool any_running =
      std::any_of(children_.begin(), children_.end(), [](const Child& c) { return c.running; });
  const bool any_open = std::any_of(children_.begin(), children_.end(),
                                    [](const Child& c) { return c.out.fd >= 0 || c.err.fd >= 0; });
  if (!any_running && !any_open) return finished_ = true;
  if (!any_running && !drain_until_) drain_until_ = Clock::now() + kDrainTime;
  if (drain_until_ && Clock::now() >= *drain_until_) {
    // Something the ranks started still holds their pipes: stop listening.
    for (Child& c : children_) c.out.close(), c.err.close();
    return finished_ = true;
  }
  return false;
}

// ---- the result -----------------------------------------------------------------------

// The failure that started it all: the first rank to fail by itself, unless
// a rank killed by a signal follows within kCauseWindow. nullptr: none failed.
const Supervisor::Child* Supervisor::cause_of_failure() const {
  const Child* first = nullptr;
  for (const Child& c : children_)
    if (c.exit.failed() && !c.exit.stopped_by_us && (!first || c.ended < first->ended)) first = &c;
  if (!first || first->exit.signal_number != 0) return first;
  const Child* killed = nullptr;
  for (const Child& c : children_)
    if (c.exit.signal_number != 0 && !c.exit.stopped_by_us &&
        c.ended <= first->ended + kCauseWindow && (!killed || c.ended < killed->ended))
      killed = &c;
  return killed ? killed : first;
}

std::string Supervisor::others_summary(int failed_rank) const {
  std::vector<int> stopped, failed_too;
  for (const Child& c : children_) {
    if (c.rank == failed_rank) continue;
    if (c.exit.stopped_by_us)
      stopped.push_back(c.rank);
    else if (c.exit.failed())
      failed_too.push_back(c.rank);
  }
  std::string text;
  const int others = static_cast<int>(children_.size()) - (failed_rank >= 0 ? 1 : 0);
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

LaunchResult Supervisor::result() const {
  LaunchResult result;
  result.master_port = master_port_;
  result.exit_code = exit_code_;
  for (const Child& c : children_) result.ranks.push_back(c.exit);
  if (const Child* cause = failure_seen_ ? cause_of_failure() : nullptr) {
    result.first_failure = cause->exit;
    result.exit_code =
        cause->exit.signal_number != 0 ? 128 + cause->exit.signal_number : cause->exit.exit_status;
    result.message = "rank " + std::to_string(cause->rank) + " " + cause->exit.describe() +
                     others_summary(cause->rank);
  } else if (!reason_.empty()) {
    result.message = reason_ + others_summary(-1);
  }
  return result;
}

}  // namespace ringlab::launch
