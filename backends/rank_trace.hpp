// A rank's trace: the one path by which a rank that is a process records what
// it does and writes it, for the tcp backend's ranks (launched or forked,
// backends/tcp.cpp) and for the Python backend's groups
// (python/bridge_group.hpp) alike.
//
// A rank is traced when its variables say where its file goes:
//  - RINGLAB_TRACE_DIR, set by a traced launch (traced_launch.hpp) with
//    RINGLAB_TRACE_ORIGIN_NS, RINGLAB_TRACE_MAX_EVENTS and, for the second
//    and later worlds of a TraceSession, RINGLAB_TRACE_SERIES: the rank
//    writes rank<r>.json there, and the launcher merges the files once the
//    ranks have ended (merge_rank_traces);
//  - RINGLAB_TRACE=DIR, read for a torch.distributed group only, where no
//    launcher merges: every rank writes DIR/rank<r>.json, and the last one to
//    write merges them into DIR/trace.json, so nobody waits for anybody's
//    file. Each rank checks at its start that it can write there
//    (prepare_trace_folder), before it meets the others, and removes its
//    file of an earlier run, which would otherwise be taken for this one's.
//
// RankRecorder wraps the rank's transport in a sim::RecordingTransport that
// keeps wall-clock times and marks every collective the rank's ProcessGroup
// runs (primitives/collective_observer.hpp), and write() writes what it
// recorded so far (sim::write_rank_trace) through ops/atomic_file: a rank
// killed while writing leaves no half file. Beside the Perfetto events, the
// file holds each collective's walkthrough (simulator/walkthrough_file.hpp):
// every message (sender, receiver, tag, bytes, which region of which
// buffer) and the buffers' values around it, whole where the collective's
// buffers are small (kTraceWholeValuesBytes), else a sample and a checksum;
// `ringlab replay` and `ringlab gui --trace` read them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "simulator/trace.hpp"
#include "transport/transport.hpp"

namespace ringlab::sim {
class RecordingTransport;
}

namespace ringlab::backends {

// The variables a traced rank reads.
inline constexpr const char* kTraceDirVariable = "RINGLAB_TRACE_DIR";
// The steady-clock time (ns) a rank's trace shows as 0.
inline constexpr const char* kTraceOriginVariable = "RINGLAB_TRACE_ORIGIN_NS";
// Single events each rank writes before aggregating the rest.
inline constexpr const char* kTraceMaxEventsVariable = "RINGLAB_TRACE_MAX_EVENTS";
// The series its arrows are numbered in (TraceSession: one per world).
inline constexpr const char* kTraceSeriesVariable = "RINGLAB_TRACE_SERIES";
// A torch.distributed group's own: the folder its ranks write and merge in.
inline constexpr const char* kTorchTraceVariable = "RINGLAB_TRACE";

// What a traced rank keeps of the values (README's limits): every write's
// values of a collective whose buffers hold at most this many bytes on the
// rank that has the most; ...
inline constexpr std::size_t kTraceWholeValuesBytes = std::size_t{64} << 10;
// ... while it has kept fewer than this many bytes of values in all; of
// every collective, each buffer's first elements, before and after, and a
// checksum of all its bytes.
inline constexpr std::size_t kTraceValueBudgetBytes = std::size_t{16} << 20;
inline constexpr std::size_t kTraceSampleElements = 16;

// Where rank `rank` writes its trace in `folder`.
std::string rank_trace_path(const std::string& folder, int rank);

// What one rank writes, and where.
struct RankTrace {
  std::string variable;  // the one that named the folder, for messages
  std::string folder;
  // RINGLAB_TRACE: the ranks merge their files into folder/trace.json.
  bool ranks_merge = false;
  std::size_t max_events = sim::kTraceEventLimit;
  // The steady-clock time (ns) shown as 0 (sim::steady_clock_ns); 0: not
  // given, the ranks agree on one (the Python backend, through its store).
  std::int64_t time_origin_ns = 0;
  std::uint32_t flow_series = 0;
  std::string path(int rank) const { return rank_trace_path(folder, rank); }
  std::string merged_path() const;  // folder/trace.json
};

using TraceLookup = std::function<const char*(const char* name)>;

// RINGLAB_TRACE_DIR and the variables beside it, read through `lookup` (a
// process's environment, or a forked rank's RankStart); nothing when it is
// unset or empty. Throws std::invalid_argument naming a bad number.
std::optional<RankTrace> rank_trace(const TraceLookup& lookup);
// A torch.distributed group's: rank_trace(), else RINGLAB_TRACE=DIR.
std::optional<RankTrace> torch_group_trace(const TraceLookup& lookup);

// Before the rank meets the others (ranks_merge only): makes the folder,
// checks that this rank's file and the merged one can be written there, and
// removes this rank's file of an earlier run. Throws std::invalid_argument
// naming the variable, the folder and what is wrong.
void prepare_trace_folder(const RankTrace& trace, int rank);

// What merging some ranks' files did.
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

// Merges the files that `ranks` left in `folder` into `output` (after what
// `output` already holds, when `append`); says in the result what it did.
TraceResult merge_rank_traces(const std::string& folder, const std::vector<int>& ranks,
                              const std::string& output, bool append);

class RankRecorder {
 public:
  // Records everything rank `rank` of a world of `world_size` does through
  // `inner`, which must outlive it; `process_name` names the trace's process
  // ("ringlab (tcp)").
  RankRecorder(Transport& inner, int rank, int world_size, RankTrace trace,
               std::string process_name);
  ~RankRecorder();
  RankRecorder(const RankRecorder&) = delete;
  RankRecorder& operator=(const RankRecorder&) = delete;

  // The transport to make the rank's process group on.
  std::shared_ptr<Transport> transport() const;
  // The name of the next collective's walkthrough ("bucket 2"), where the
  // program knows better than the call order what it is.
  void label_next_collective(std::string label);
  // Writes everything recorded so far (again: a rank running several worlds
  // writes after each) and, where the ranks merge and every rank's file is
  // there, merges them, once per run. Returns a line for the user, "" when
  // there is nothing to say: why this rank wrote no trace (which costs the
  // trace, not the run), or where the merged one went. Does not throw.
  std::string write();

 private:
  std::string merge_if_complete();

  int rank_;
  int world_size_;
  RankTrace trace_;
  std::string process_name_;
  std::shared_ptr<sim::RecordingTransport> recorder_;
};

}  // namespace ringlab::backends
