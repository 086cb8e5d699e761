// The end of an elastic job, in the shape of torchrun's error report
// (torch.distributed.elastic.multiprocessing.errors.ChildFailedError): the
// first failure with its rank, host, exit code or signal, time and the error
// the worker wrote. The agent that ends the job stores it (as JSON) so that
// every agent prints the same report.
#pragma once

#include <optional>
#include <string>

#include "launcher/launcher.hpp"

namespace ringlab::launch {

struct FailureRecord {
  int rank = -1;
  int local_rank = -1;
  int node = 0;  // the node id (rendezvous.hpp)
  std::string host;
  int agent_pid = 0;
  long long round = 0;
  int restart_count = 0;
  int pid = 0;  // the worker's
  int exit_status = 0;
  int signal_number = 0;
  std::string description;  // RankExit::describe(): "exited with status 3"
  std::string error;        // what the worker said, if anything
  std::string error_file;   // where it is kept, or ""
  std::string time;         // local time it was seen, "2024-05-01_12:03:04"
};

// From a worker's exit as the supervisor saw it.
FailureRecord failure_record(const RankExit& exit, int nproc_per_node);

std::string to_json(const FailureRecord& record);
// Nothing when text is not a record.
std::optional<FailureRecord> failure_from_json(const std::string& text);

// What the job came to, shared through the store.
struct JobOutcome {
  std::string
      reason;  // "rank 1 exited with status 3, and the 3 restarts of --max-restarts 3 are used up"
  int exit_code = 1;
  std::optional<FailureRecord> first_failure;
};

std::string to_json(const JobOutcome& outcome);
// Nothing when text is not an outcome.
std::optional<JobOutcome> outcome_from_json(const std::string& text);

// The report, torchrun's way:
//   ============================================================
//   PROGRAM FAILED
//   ------------------------------------------------------------
//   REASON
//   Root cause (first observed failure):
//     time      : ...
//     host      : ... (node 1, agent pid 4711)
//     rank      : 1 (local_rank: 1, round 4, restart 3)
//     exitcode  : 3 (pid: 4800)
//     error_file: ...
//     error     : ...
//   ============================================================
std::string format_summary(const JobOutcome& outcome, const std::string& program);

}  // namespace ringlab::launch
