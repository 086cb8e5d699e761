// The ranks of one node for one run of the job, as a supervisor with four
// steps:
//   start     fork and execute every rank (spawn.hpp);
//   poll      wait for the next event: output, a child's exit, a signal, or a
//             time that is due; pass output on as whole lines (line_stream.hpp);
//   reap      collect the ranks that ended (and note those that were frozen by
//             SIGSTOP); the first failure starts stopping;
//   escalate  once stopping: SIGTERM when due, SIGKILL kill_after later.
// Which rank is blamed at the end is blame.hpp's choice, from what the
// supervisor saw: each rank's first stderr line that names it ("rank 2:
// ..."), its error file, the time it ended or froze, and for a SIGKILL the
// kernel's count of out-of-memory kills.
//
// launch() (launcher.hpp) runs start() and then poll() until finished(); the
// elastic agent does the same for each round and calls stop() when the group
// must re-form.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "launcher/launcher.hpp"
#include "launcher/line_stream.hpp"
#include "launcher/signal_pipe.hpp"

namespace ringlab::launch {

class Supervisor {
 public:
  using Clock = std::chrono::steady_clock;

  // Takes options as launch() does (validated by the caller); the ranks get
  // master_port. signals must outlive the supervisor.
  Supervisor(LaunchOptions options, int master_port, SignalPipe& signals);
  // Kills (SIGKILL) and reaps every rank still running: nothing outlives it.
  ~Supervisor();
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // Starts every rank. Throws std::invalid_argument when the program cannot
  // be found and std::runtime_error when a rank cannot be started (the ranks
  // already started are killed first).
  void start();

  // Handles what happens within max_wait (at most; it returns as soon as
  // something was handled). True once finished().
  bool poll(Milliseconds max_wait);

  // Stops every rank for a reason outside them (the elastic agent's: a node
  // joined or left): SIGTERM after `delay`, SIGKILL kill_after later. The
  // result then carries reason and exit_code unless a rank failed first.
  void stop(const std::string& reason, int exit_code, Milliseconds delay = Milliseconds(0));

  // Every rank reaped and its output passed on.
  bool finished() const { return finished_; }
  // A rank failed by itself (not stopped by us).
  bool failure_seen() const { return failure_seen_; }
  // A rank reported an error (a stderr line naming it, "rank 2: ..."), or
  // failed: the first sign of trouble, often well before the failed rank
  // has exited.
  bool trouble_seen() const { return failure_seen_ || error_line_seen_; }
  // The first rank other than its own that the first error line names
  // ("rank 1: rank 3 failed or stopped answering": 3), or -1.
  int first_error_names() const { return first_error_names_; }
  // The SIGINT/SIGTERM the launcher received, or 0.
  int interrupted_by() const { return interrupted_by_; }
  // How the ranks ended (complete once finished()).
  LaunchResult result() const;

 private:
  struct Child {
    int rank = 0;
    pid_t pid = -1;
    bool running = false;
    RankExit exit;
    Clock::time_point ended;  // when we reaped it
    LineStream out, err;
    std::string error_file;  // TORCHELASTIC_ERROR_FILE
    // Its first stderr line naming it ("rank 2: ...") and when it came; its
    // last stderr line.
    std::optional<Clock::time_point> error_at;
    std::string error_line, last_error_line;
    // Stopped by a signal (WIFSTOPPED) and not resumed since; frozen_at_stop:
    // it still was when the job began stopping.
    std::optional<Clock::time_point> stopped_since;
    int stopped_by = 0;
    bool frozen_at_stop = false;
    // When it froze, kept from the moment the stopping began: the SIGCONT
    // sent with SIGTERM resumes it (and resets stopped_since) before it exits.
    std::optional<Clock::time_point> frozen_since_at_stop;
  };
  struct Ready {
    std::vector<LineStream*> streams;  // readable, hung up or failed
  };

  Ready wait_for_events(Milliseconds max_wait);
  void take_stop_signal();
  void read_output(const Ready& ready);
  void reap();
  void check_time_limit();
  void escalate();
  bool check_finished();

  void begin_stopping(Milliseconds delay);
  void signal_running(int signal_number);
  void open_log_files(Child& child, int local);
  void on_error_line(Child& child, std::string_view line);
  void read_error_file(Child& child);
  std::string others_summary(int failed_rank) const;

  LaunchOptions options_;
  int master_port_;
  SignalPipe& signals_;
  std::vector<Child> children_;
  Clock::time_point started_;
  // Stopping: SIGTERM at term_at_, SIGKILL at kill_at_ (max(): already sent).
  std::optional<Clock::time_point> term_at_, kill_at_;
  // Every child reaped: how long we still wait for the ends of their pipes.
  std::optional<Clock::time_point> drain_until_;
  std::string reason_;  // why we stopped, when not a rank's failure
  int exit_code_ = 0;   // with reason_
  bool failure_seen_ = false;
  bool error_line_seen_ = false;
  int first_error_names_ = -1;
  int interrupted_by_ = 0;
  bool finished_ = false;
  // The folder of the error files when it is ours to remove.
  std::string temporary_error_folder_;
  // The kernel's count of out-of-memory kills when the ranks started.
  std::optional<long long> oom_kills_at_start_;
};

}  // namespace ringlab::launch
