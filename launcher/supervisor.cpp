#include "launcher/supervisor.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <tuple>

#include "launcher/blame.hpp"
#include "launcher/error_file.hpp"
#include "launcher/token_maker.hpp"
#include "launcher/spawn.hpp"

namespace ringlab::launch {

namespace {
// What net/log.hpp puts before each of its notices (the store's and the TCP
// transport's).
constexpr std::string_view kTransportNoticePrefix = "ringlab tcp: ";
}  // namespace

namespace {

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

// The kernel's count of out-of-memory kills ("oom_kill N" in /proc/vmstat),
// or nothing where it cannot be read.
std::optional<long long> read_oom_kills(const std::string& path) {
  std::ifstream in(path);
  for (std::string name; in >> name;) {
    long long value = 0;
    if (!(in >> value)) return std::nullopt;
    if (name == "oom_kill") return value;
  }
  return std::nullopt;
}

std::string make_temporary_folder() {
  std::string pattern = (std::filesystem::temp_directory_path() / "ringlab-run-XXXXXX").string();
  if (!::mkdtemp(pattern.data()))
    throw std::runtime_error("cannot create a folder for the ranks' error files (" + pattern +
                             "): " + std::strerror(errno) + "; set TMPDIR to a writable folder");
  return pattern;
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
  if (!temporary_error_folder_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(temporary_error_folder_, ignored);
  }
}

// ---- start ------------------------------------------------------------------

void Supervisor::start() {
  const LaunchOptions& o = options_;
  const std::string path = o.rank_entry ? std::string() : resolve_program(o.program.front());
  std::string error_folder = o.error_file_folder;
  if (error_folder.empty()) error_folder = temporary_error_folder_ = make_temporary_folder();
  oom_kills_at_start_ = read_oom_kills(o.oom_kill_counter);
  const std::string job_token = job_token_for(o);
  children_.resize(static_cast<std::size_t>(o.nproc_per_node));
  for (int local = 0; local < o.nproc_per_node; ++local) {
    Child& c = children_[static_cast<std::size_t>(local)];
    c.rank = o.node_rank * o.nproc_per_node + local;
    c.exit.rank = c.rank;
    const std::string prefix = o.tee_prefix ? "[rank " + std::to_string(c.rank) + "] " : "";
    c.out.out_fd = o.stdout_fd;
    c.err.out_fd = o.stderr_fd;
    c.out.prefix = c.err.prefix = prefix;
    c.err.on_line = [this, local](std::string_view line) {
      on_error_line(children_[static_cast<std::size_t>(local)], line);
    };
    try {
      if (!o.log_folder.empty()) open_log_files(c, local);
      // A file left by an earlier run would be taken for this one's.
      const std::filesystem::path folder =
          std::filesystem::path(error_folder) / std::to_string(local);
      std::filesystem::create_directories(folder);
      c.error_file = (folder / "error.json").string();
      std::filesystem::remove(c.error_file);
      auto environment = rank_environment(o, master_port_, local);
      environment.emplace_back(kErrorFileVariable, c.error_file);
      if (!job_token.empty()) environment.emplace_back(kJobTokenVariable, job_token);
      const std::string what = "rank " + std::to_string(c.rank);
      const SpawnedChild spawned =
          o.rank_entry ? spawn_forked([&] { return o.rank_entry(environment); }, what)
                       : spawn(path, o.program, child_environment(environment), what);
      c.pid = c.exit.pid = spawned.pid;
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

void Supervisor::open_log_files(Child& child, int local) {
  const std::filesystem::path folder =
      std::filesystem::path(options_.log_folder) / std::to_string(local);
  std::filesystem::create_directories(folder);
  const int redirected = options_.redirects.of(local);
  for (auto [stream, name, bit] : {std::tuple{&child.out, "stdout.log", StdStreams::kStdout},
                                   std::tuple{&child.err, "stderr.log", StdStreams::kStderr}}) {
    const std::string path = (folder / name).string();
    stream->file_fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (stream->file_fd < 0)
      throw std::runtime_error("cannot write the log file " + path + ": " + std::strerror(errno));
    if (redirected & bit) stream->out_fd = -1;
  }
}

void Supervisor::on_error_line(Child& child, std::string_view line) {
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
  // The TCP transport's notices to the operator ("ringlab tcp: rank 0:
  // waiting for ranks 2-3", "... this job has no token") name the rank but
  // report nothing wrong with it.
  if (line.starts_with(kTransportNoticePrefix)) return;
  child.last_error_line = line;
  if (child.error_at) return;
  // "rank 2: ...", "tcp_fault_rank: rank 2: ...": the rank's own error.
  const std::string own = "rank " + std::to_string(child.rank) + ": ";
  if (line.find(own) == std::string_view::npos) return;
  child.error_at = Clock::now();
  child.error_line = line;
  if (!error_line_seen_) first_error_names_ = first_other_rank_named(child.error_line, child.rank);
  error_line_seen_ = true;
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
  // the end (blame.hpp).
  for (Child& c : children_) {
    if (!c.running) continue;
    int status = 0;
    if (::waitpid(c.pid, &status, WNOHANG | WUNTRACED | WCONTINUED) != c.pid) continue;
    if (WIFSTOPPED(status)) {
      c.stopped_since = Clock::now();
      c.stopped_by = WSTOPSIG(status);
      continue;
    }
    if (WIFCONTINUED(status)) {
      c.stopped_since.reset();
      continue;
    }
    c.running = false;
    c.ended = Clock::now();
    if (WIFSIGNALED(status))
      c.exit.signal_number = WTERMSIG(status);
    else
      c.exit.exit_status = WEXITSTATUS(status);
    if (c.exit.signal_number == SIGKILL && !c.exit.stopped_by_us) {
      const auto now = read_oom_kills(options_.oom_kill_counter);
      c.exit.oom = !now || !oom_kills_at_start_  ? OomEvidence::Unknown
                   : *now > *oom_kills_at_start_ ? OomEvidence::Yes
                                                 : OomEvidence::No;
    }
    read_error_file(c);
    // (A rank that exits after our SIGTERM counts as stopped by us.)
    if (!c.exit.stopped_by_us && c.exit.failed() && reason_.empty() && !failure_seen_) {
      failure_seen_ = true;
      begin_stopping(options_.stop_after);
    }
  }
}

void Supervisor::read_error_file(Child& child) {
  const std::optional<ErrorReport> report = launch::read_error_file(child.error_file);
  if (!report) return;
  child.exit.error = report->message;
  // The time of its error line, when it printed one, is the finer: a file's
  // modification time comes from the kernel's coarse clock (a tick of a few
  // ms), so ranks that write theirs close together tie.
  if (child.error_at) return;
  const auto age = std::chrono::system_clock::now() - report->written;
  child.error_at =
      Clock::now() - std::chrono::duration_cast<Clock::duration>(std::max(age, age.zero()));
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
  for (Child& c : children_) {
    c.frozen_at_stop = c.running && c.stopped_since.has_value();
    if (c.frozen_at_stop) c.frozen_since_at_stop = c.stopped_since;
  }
  term_at_ = Clock::now() + delay;
  kill_at_ = *term_at_ + options_.kill_after;
}

void Supervisor::signal_running(int signal_number) {
  // The whole process group of the rank, or the rank alone if it has left it.
  for (Child& c : children_) {
    if (!c.running) continue;
    if (::kill(-c.pid, signal_number) == 0 || ::kill(c.pid, signal_number) == 0)
      c.exit.stopped_by_us = true;
    // A frozen rank acts on SIGTERM only once it runs again.
    if (signal_number == SIGTERM && ::kill(-c.pid, SIGCONT) != 0) ::kill(c.pid, SIGCONT);
  }
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
  std::vector<RankEvents> events;
  for (const Child& c : children_) {
    RankExit exit = c.exit;
    if (exit.error.empty()) exit.error = !c.error_line.empty() ? c.error_line : c.last_error_line;
    exit.wrote_output = c.out.got_bytes || c.err.got_bytes;
    if (c.frozen_at_stop) exit.frozen_by = c.stopped_by;
    result.ranks.push_back(exit);
    RankEvents e;
    e.rank = c.rank;
    if (!c.running) e.ended = c.ended;
    e.failed = exit.failed();
    e.stopped_by_us = exit.stopped_by_us;
    e.signal_number = exit.signal_number;
    e.error_at = c.error_at;
    e.error = exit.error;
    if (c.frozen_at_stop) e.frozen_since = c.frozen_since_at_stop;
    events.push_back(e);
  }
  const auto exit_of = [&](int rank) -> const RankExit& {
    return result
        .ranks[static_cast<std::size_t>(rank - options_.node_rank * options_.nproc_per_node)];
  };
  const auto code_of = [](const RankExit& e) {
    return e.signal_number != 0 ? 128 + e.signal_number : e.exit_status;
  };
  const std::optional<Blame> blame = failure_seen_ ? find_cause(events) : std::nullopt;
  if (!blame) {
    if (!reason_.empty()) {
      result.message = reason_ + others_summary(-1);
      for (const RankExit& e : result.ranks)
        if (e.frozen_by != 0)
          result.message += "; rank " + std::to_string(e.rank) + " " + e.describe();
    }
    return result;
  }
  const RankExit& blamed = exit_of(blame->rank);
  result.first_failure = blamed;
  if (blame->kind == BlameKind::Failed) {
    result.exit_code = code_of(blamed);
    result.message = "rank " + std::to_string(blame->rank) + " " + blamed.describe() +
                     others_summary(blame->rank);
    return result;
  }
  // Frozen or unresponsive, and stopped by us: the job's status is that of
  // the first rank that failed by itself.
  const Child* first_by_itself = nullptr;
  for (const Child& c : children_)
    if (c.exit.failed() && !c.exit.stopped_by_us &&
        (!first_by_itself || c.ended < first_by_itself->ended))
      first_by_itself = &c;
  if (first_by_itself) result.exit_code = code_of(first_by_itself->exit);
  if (blame->kind == BlameKind::Frozen)
    result.message = "rank " + std::to_string(blame->rank) + " " + blamed.describe() +
                     others_summary(blame->rank);
  else
    result.message = "rank " + std::to_string(blame->rank) + " did not respond (rank " +
                     std::to_string(blame->reporter) +
                     " timed out waiting for it) and was stopped" + others_summary(blame->rank);
  return result;
}

}  // namespace ringlab::launch
