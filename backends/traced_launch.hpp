// A launch whose ranks record their transport, merged into one Chrome trace
// (Perfetto, chrome://tracing): `ringlab run --trace`, and the worlds a
// program starts itself under `ringlab lesson/tour/bench --trace` (a
// TraceSession handed to run_ranks).
//
// Every rank gets RINGLAB_TRACE_DIR, a temporary folder (and the variables
// beside it, rank_trace.hpp): in its environment when it is an executed
// program, as an argument when it is a fork (rank_processes.hpp). A rank
// whose process group comes from the tcp backend records its operations
// with wall-clock times and writes rank<r>.json there, atomically (also when
// it fails; rank_trace.hpp's RankRecorder). After the ranks exit, failed or
// not, the files found are merged into the output (merge_rank_traces) and
// the folder is removed. README's `ringlab run --trace` lists the variables:
// a program of one's own may read them too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "backends/backends.hpp"
#include "backends/rank_trace.hpp"
#include "launcher/launcher.hpp"

namespace ringlab::backends {

// `--trace FILE` of a program that starts its own worlds (ringlab lesson,
// tour, bench): the program makes one and hands it to run_ranks. Each world's
// ranks record, and after the world their traces are merged into `output`,
// a later world's added to the earlier ones' on one time axis.
struct TraceSession {
  explicit TraceSession(std::string file) : output(std::move(file)) {}
  std::string output;
  // The steady-clock time (ns) every world's trace shows as 0: when the first
  // world started (0: none has yet).
  std::int64_t time_origin_ns = 0;
  // Worlds started so far: world k's ranks draw arrows in series k + 1.
  std::uint32_t worlds = 0;
  // `output` holds an earlier world's traces: merge into it.
  bool written = false;
};

// How a launch is traced (`ringlab run --trace FILE --trace-limit N`, or a
// TraceSession's world).
struct TracedLaunchOptions {
  // Chrome trace JSON of the run. With nnodes > 1 each node writes its own ranks.
  std::string output;
  // Merge into the trace already at output rather than replacing it (a
  // program that starts several worlds in a row, like `ringlab tour`).
  bool append = false;
  // Keeps the merged file bounded: the ranks of this launch share this many
  // single events (each writes its share, then one "aggregated" slice).
  std::size_t max_events = sim::kTraceEventLimit;
  // The steady-clock time (ns) the trace shows as 0; 0: when the launch starts.
  // (Several launches appending to one trace pass the first one's.)
  std::int64_t time_origin_ns = 0;
  // The series the ranks number their arrows in (RINGLAB_TRACE_SERIES, when
  // not 0): launches merged into one file each take their own.
  std::uint32_t flow_series = 0;
};

// launch::launch(options) with the ranks told to record, then the merge.
launch::LaunchResult launch_traced(const launch::LaunchOptions& options,
                                   const TracedLaunchOptions& trace, TraceResult& traced);

// run_world's world, its ranks threads of this process (inproc,
// nccl_rules), traced into `session`: each rank's process group records,
// each rank writes its file into a folder of this call's, and the files are
// merged into the session's output after the world (also one that failed;
// its failure is rethrown after).
void run_traced_thread_world(void (*run_world)(int, const RankBody&, const ProcessGroupOptions&),
                             std::string_view backend, int world, const RankBody& body,
                             const ProcessGroupOptions& group, TraceSession& session);

// The next world of `session`: how its launch is traced (the session's time
// origin, set by its first world; a flow series of its own).
TracedLaunchOptions next_traced_world(TraceSession& session);
// After that world: notes what was merged, says it on stderr (after
// `launcher_name`), and throws std::runtime_error where the ranks did their
// work (ranks_ok) but the trace could not be written.
void end_traced_world(TraceSession& session, const TraceResult& traced,
                      const std::string& launcher_name, bool ranks_ok);

}  // namespace ringlab::backends
