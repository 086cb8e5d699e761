// A launch whose ranks record their transport, merged into one Chrome trace
// (Perfetto, chrome://tracing): `ringlab run --trace`, and the tcp backend's
// own launches under `ringlab lesson/tour/bench --trace`.
//
// Every rank gets RINGLAB_TRACE_DIR, a temporary folder; a rank whose process
// group comes from the tcp backend records its operations with wall-clock
// times and writes rank<r>.json there (also when it fails). After the ranks
// exit, failed or not, the files found are merged into the output
// (simulator/trace.hpp's merge_traces) and the folder is removed.
#pragma once

#include <cstddef>
#include <cstdint>
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
// The trace file a program asked for with --trace (`ringlab lesson`, `tour`,
// `bench`): read by the tcp backend when it starts the ranks itself.
inline constexpr const char* kTraceOutputVariable = "RINGLAB_TRACE";

// Where rank `rank` of a traced launch writes its trace in `folder`.
std::string rank_trace_path(const std::string& folder, int rank);

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
};

// launch::launch(options) with the ranks told to record, then the merge.
launch::LaunchResult launch_traced(const launch::LaunchOptions& options, const TraceOptions& trace,
                                   TraceResult& traced);

}  // namespace ringlab::backends
