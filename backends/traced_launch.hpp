// A launch whose ranks record their transport, merged into one Chrome trace
// (Perfetto, chrome://tracing): `ringlab run --trace`, and the worlds a
// program starts itself under `ringlab lesson/tour/bench --trace` (a
// TraceSession handed to run_ranks).
//
// Every rank gets RINGLAB_TRACE_DIR, a temporary folder (and the two
// variables below): in its environment when it is an executed program, as
// an argument when it is a fork (rank_processes.hpp). A rank whose process
// group comes from the tcp backend records its operations with wall-clock
// times and writes rank<r>.json there, atomically (also when it fails). After
// the ranks exit, failed or not, the files found are merged into the output
// (simulator/trace.hpp's merge_traces) and the folder is removed. README's
// `ringlab run --trace` lists the variables: a program of one's own may read
// them too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "launcher/launcher.hpp"

namespace ringlab::backends {

// Variables a traced rank reads (set by launch_traced).
inline constexpr const char* kTraceDirVariable = "RINGLAB_TRACE_DIR";
// The steady-clock time (ns) a rank's trace shows as 0.
inline constexpr const char* kTraceOriginVariable = "RINGLAB_TRACE_ORIGIN_NS";
// Single events each rank writes before aggregating the rest.
inline constexpr const char* kTraceMaxEventsVariable = "RINGLAB_TRACE_MAX_EVENTS";

// Where rank `rank` of a traced launch writes its trace in `folder`.
std::string rank_trace_path(const std::string& folder, int rank);

// What one rank of a traced launch writes, and where.
struct RankTrace {
  std::string path;  // RINGLAB_TRACE_DIR/rank<r>.json
  std::size_t max_events = 200000;  // RINGLAB_TRACE_MAX_EVENTS
  std::int64_t time_origin_ns = 0;  // RINGLAB_TRACE_ORIGIN_NS
  // Worlds that number their messages from 0 each but share one file (a
  // TraceSession's) number their arrows in series of their own.
  std::uint32_t flow_series = 0;
};

// The trace rank `rank` writes, from the variables above read through
// `lookup` (its environment, or a forked rank's RankStart); nothing when
// RINGLAB_TRACE_DIR is unset or empty: the launch is not traced.
std::optional<RankTrace> rank_trace(int rank,
                                    const std::function<const char*(const char*)>& lookup);

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

struct TraceOptions {
  // Chrome trace JSON of the run. With nnodes > 1 each node writes its own ranks.
  std::string output;
  // Merge into the trace already at output rather than replacing it (a
  // program that starts several worlds in a row, like `ringlab tour`).
  bool append = false;
  // Keeps the merged file bounded: the ranks of this launch share this many
  // single events (each writes its share, then one "aggregated" slice).
  std::size_t max_events = 200000;
  // The steady-clock time (ns) the trace shows as 0; 0: when the launch starts.
  // (Several launches appending to one trace pass the first one's.)
  std::int64_t time_origin_ns = 0;
};

struct TraceResult {
  // The ranks whose trace is in the output (a rank killed before it could
  // write one is missing), how many events the file holds, and one line for
  // the user saying where it went or why it did not.
  std::vector<int> traced_ranks;
  std::size_t events = 0;
  std::string message;
  // The ranks wrote traces but the output could not be written (its folder
  // went away during the run, the disk is full): the command fails.
  bool failed = false;
};

// launch::launch(options) with the ranks told to record, then the merge.
launch::LaunchResult launch_traced(const launch::LaunchOptions& options, const TraceOptions& trace,
                                   TraceResult& traced);

}  // namespace ringlab::backends
