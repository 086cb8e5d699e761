// The process launcher behind `ringlab run` and the tcp backend: starts the
// ranks of one node as child processes, like torchrun's static mode or
// torch.multiprocessing.spawn.
//
// Each child gets the variables torchrun gives (MASTER_ADDR, MASTER_PORT,
// RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK,
// GROUP_WORLD_SIZE, ROLE_RANK, ROLE_NAME, ROLE_WORLD_SIZE,
// TORCHELASTIC_RESTART_COUNT, TORCHELASTIC_MAX_RESTARTS, TORCHELASTIC_RUN_ID,
// TORCHELASTIC_ERROR_FILE). Its stdout and stderr come back through pipes and
// are written out line by line, one write per line, so lines of different
// ranks never mix (and, with a log folder, into a file per rank and stream). When one rank exits
// non-zero or is killed by a signal, the others get a moment to notice and report it themselves
// (their peer is gone; every wait has a timeout), then SIGTERM, then SIGKILL: nothing is left
// running.
//
// launch() is a Supervisor (supervisor.hpp: start, poll, reap, escalate) run
// to its end. It knows nothing of what the ranks run: a traced launch
// (backends/traced_launch.hpp) passes its variables in extra_environment and
// merges the ranks' files afterwards.
//
// A rank is either an executed program (`program`, ringlab run's ranks) or a
// fork of this process that runs a function (`rank_entry`: a program that
// starts its own ranks, backends/rank_processes.hpp). Both are supervised,
// blamed and stopped alike.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ringlab::launch {

using Milliseconds = std::chrono::milliseconds;

// A wait or timeout for messages, to a tenth of a second: "30 s", "2.5 s".
// Milliseconds and steady_clock durations alike convert to its parameter.
std::string seconds_text(std::chrono::nanoseconds d);

// The variables the launcher gives one rank, (name, value).
using RankVariables = std::vector<std::pair<std::string, std::string>>;

// Which of a rank's streams an option applies to, torchrun's way: "3" (both,
// every rank) or "0:1,1:2" (stdout of local rank 0, stderr of local rank 1).
struct StdStreams {
  static constexpr int kStdout = 1, kStderr = 2;
  int all = 0;                                // for every local rank
  std::vector<std::pair<int, int>> per_rank;  // (local rank, streams)
  int of(int local_rank) const;
};

struct LaunchOptions {
  int nproc_per_node = 1;
  int nnodes = 1;
  int node_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;  // 0: pick a free port on master_addr (single node only)
  // Every wait's limit in the ranks, passed as RINGLAB_TIMEOUT_MS; 0: unset.
  Milliseconds rank_timeout{0};
  // After a rank fails: how long the others may take to exit on their own
  // before SIGTERM, and how long after SIGTERM before SIGKILL.
  Milliseconds stop_after{1000};
  Milliseconds kill_after{3000};
  // Stops every rank once the job has run this long; 0: no limit.
  Milliseconds deadline{0};
  bool tee_prefix = false;  // start each line with "[rank r] "
  // argv of every rank: program (found on PATH if it has no '/') and arguments.
  std::vector<std::string> program;
  // Instead of executing `program` (which may then be empty): every rank is a
  // fork of this process that runs rank_entry(variables) and ends with the
  // status it returns (spawn.hpp's spawn_forked says how a forked rank starts
  // and ends). `variables` are the ones an executed rank would find in its
  // environment (the torchrun ones, extra_environment, its error file, the job
  // token), handed over as an argument: the launcher leaves the rank's
  // environment as this process's (rank_entry may set what it wants there).
  std::function<int(const RankVariables& variables)> rank_entry;
  // Variables set in every rank besides the torchrun ones (they win over these).
  std::vector<std::pair<std::string, std::string>> extra_environment;
  // Where the children's lines go (the launcher's own stdout/stderr by default).
  int stdout_fd = 1;
  int stderr_fd = 2;
  // Prefix of the launcher's own messages.
  std::string name = "ringlab run";
  // Where each rank's error file goes (TORCHELASTIC_ERROR_FILE is
  // <folder>/<local rank>/error.json); empty: a temporary folder, removed
  // when the ranks are done.
  std::string error_file_folder;
  // The kernel's count of out-of-memory kills ("oom_kill N" lines); tests
  // point it elsewhere.
  std::string oom_kill_counter = "/proc/vmstat";
  // A folder for the ranks' output: <folder>/<local rank>/stdout.log and
  // stderr.log get every line (without --tee-prefix); empty: no files.
  std::string log_folder;
  // The streams that go to the files only, not also to stdout_fd/stderr_fd.
  StdStreams redirects;
  // What the ranks learn of the job they are part of (torchrun's variables).
  std::string run_id = "none";
  int restart_count = 0;
  int max_restarts = 0;
};

// For a rank killed by SIGKILL that we did not send: whether the kernel's
// out-of-memory killer was at work meanwhile (its count of kills, oom_kill in
// /proc/vmstat, went up between the start of the job and the rank's death).
enum class OomEvidence {
  NotChecked,  // not a SIGKILL of someone else's
  Unknown,     // the count could not be read
  Yes,         // the count went up
  No,          // the count stayed the same: someone else sent the SIGKILL
};

// How one rank ended.
struct RankExit {
  int rank = -1;               // global rank
  int exit_status = 0;         // when it exited
  int signal_number = 0;       // when a signal killed it (0: it exited)
  bool stopped_by_us = false;  // we sent the signal that ended it
  int pid = 0;
  // What it said about its failure: the message in its error file
  // (TORCHELASTIC_ERROR_FILE), else the first line of its stderr that names
  // it ("rank 2: ..."), else its last line on stderr. Empty: it wrote nothing
  // to stderr.
  std::string error;
  bool wrote_output = false;  // anything at all, on stdout or stderr
  // Stopped by this signal (SIGSTOP, SIGTSTP, ...) and not resumed when the
  // job began stopping: a frozen rank. 0: it was not.
  int frozen_by = 0;
  OomEvidence oom = OomEvidence::NotChecked;
  bool failed() const { return signal_number != 0 || exit_status != 0; }
  // "exited with status 1", "was killed by signal 9 (Killed)", "was killed by
  // the kernel's out-of-memory killer (signal 9)", "was frozen by signal 19
  // (Stopped (signal)) and did not resume".
  std::string describe() const;
};

struct LaunchResult {
  // 0 when every rank exited 0; else the failed rank's status, or 128 + the
  // signal that killed it (as a shell reports it).
  int exit_code = 0;
  // The rank the failure is blamed on (launcher/blame.hpp says how it is
  // chosen: by time and cause, not by who exited first).
  std::optional<RankExit> first_failure;
  std::vector<RankExit> ranks;  // by local rank
  // One line for the user ("rank 2 exited with status 1; stopped the other 3
  // ranks"); empty on success.
  std::string message;
  int master_port = 0;  // the port the ranks were given
};

// Throws std::invalid_argument saying what is wrong and what to pass instead.
void validate(const LaunchOptions& options);

// A TCP port nobody listens on at address right now: binds port 0, reads the
// port the kernel chose, closes. Throws std::runtime_error naming the address.
// Another process may take the port once it is closed: to hand it to a store
// that binds it later, hold a PortReservation instead.
int pick_free_port(const std::string& address);

// A free port, held until this object goes: a socket bound to it (with
// SO_REUSEADDR, never listening, closed on exec). While it is held the kernel
// gives the port to no one else (no bind to port 0, no outgoing connection
// takes it, a bind without SO_REUSEADDR fails), yet the job's store, which
// binds with SO_REUSEADDR, can bind and listen on it. Without it, jobs
// started side by side could pick the same port in the moment between the
// pick and rank 0's bind (tools/soak.sh saw it). Throws like pick_free_port.
class PortReservation {
 public:
  explicit PortReservation(const std::string& address);
  ~PortReservation();
  PortReservation(const PortReservation&) = delete;
  PortReservation& operator=(const PortReservation&) = delete;
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// Starts the ranks of this node, passes their output through and waits for
// all of them (see the file comment). Throws std::invalid_argument on bad
// options and std::runtime_error when a rank cannot be started.
LaunchResult launch(const LaunchOptions& options);

// A fresh folder for one run's logs in log_dir, "<run_id>_XXXXXX" (torchrun
// makes the same); log_dir empty: in $TMPDIR. Throws std::runtime_error
// naming the folder.
std::string make_log_root(const std::string& log_dir, const std::string& run_id);

// The variables the launcher sets (name, value) for one local rank.
std::vector<std::pair<std::string, std::string>> rank_environment(const LaunchOptions& options,
                                                                  int master_port, int local_rank);

}  // namespace ringlab::launch
