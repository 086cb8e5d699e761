#include "backends/rank_trace.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <utility>

#include "ops/atomic_file.hpp"
#include "simulator/recording_transport.hpp"

namespace ringlab::backends {

namespace {

namespace fs = std::filesystem;

// The mark of the rank that merges a RINGLAB_TRACE folder: made by the first
// rank to find every rank's file there (and the only one to merge), removed
// by rank 0 when the next run in that folder starts.
constexpr const char* kMergeMark = ".trace.json.merging";

template <typename Number>
Number number(const TraceLookup& lookup, const char* name, Number fallback) {
  const char* text = lookup(name);
  if (!text || !*text) return fallback;
  Number value{};
  const char* end = text + std::strlen(text);
  const auto [at, error] = std::from_chars(text, end, value);
  if (error != std::errc() || at != end)
    throw std::invalid_argument(std::string(name) + "=" + text +
                                " is not a number: it is ringlab run's (or the launching "
                                "program's) own; unset it");
  return value;
}

std::string list_ranks(const std::vector<int>& ranks) {
  std::string text;
  for (std::size_t i = 0; i < ranks.size(); ++i) text += (i ? ", " : "") + std::to_string(ranks[i]);
  return text;
}

}  // namespace

std::string rank_trace_path(const std::string& folder, int rank) {
  return (fs::path(folder) / ("rank" + std::to_string(rank) + ".json")).string();
}

std::string RankTrace::merged_path() const { return (fs::path(folder) / "trace.json").string(); }

std::optional<RankTrace> rank_trace(const TraceLookup& lookup) {
  const char* folder = lookup(kTraceDirVariable);
  if (!folder || !*folder) return std::nullopt;
  RankTrace trace;
  trace.variable = kTraceDirVariable;
  trace.folder = folder;
  trace.max_events = std::max<std::size_t>(
      1, number<std::size_t>(lookup, kTraceMaxEventsVariable, sim::kTraceEventLimit));
  trace.time_origin_ns = number<std::int64_t>(lookup, kTraceOriginVariable, 0);
  trace.flow_series = number<std::uint32_t>(lookup, kTraceSeriesVariable, 0);
  return trace;
}

std::optional<RankTrace> torch_group_trace(const TraceLookup& lookup) {
  if (auto launched = rank_trace(lookup)) return launched;
  const char* folder = lookup(kTorchTraceVariable);
  if (!folder || !*folder) return std::nullopt;
  RankTrace trace;
  trace.variable = kTorchTraceVariable;
  trace.folder = folder;
  trace.ranks_merge = true;
  return trace;
}

void prepare_trace_folder(const RankTrace& trace, int rank) {
  const std::string where = trace.variable + "=" + trace.folder + ": ";
  std::error_code error;
  fs::create_directories(trace.folder, error);
  if (error)
    throw std::invalid_argument(where + "cannot make that folder (" + error.message() +
                                "): point " + trace.variable +
                                " at a folder this program can write, or unset it");
  try {
    check_file_destination(trace.path(rank), "trace file");
    check_file_destination(trace.merged_path(), "trace file");
  } catch (const std::runtime_error& e) {
    throw std::invalid_argument(where + e.what() + " (or unset " + trace.variable + ")");
  }
  fs::remove(trace.path(rank), error);
  // Rank 0 starts before any rank of this run can finish (they meet first).
  if (rank == 0) fs::remove(fs::path(trace.folder) / kMergeMark, error);
}

TraceResult merge_rank_traces(const std::string& folder, const std::vector<int>& ranks,
                              const std::string& output, bool append) {
  TraceResult result;
  std::vector<std::string> inputs;
  if (append && fs::exists(output)) inputs.push_back(output);
  std::vector<int> missing;
  for (int rank : ranks) {
    const std::string file = rank_trace_path(folder, rank);
    if (fs::exists(file)) {
      inputs.push_back(file);
      result.traced_ranks.push_back(rank);
    } else {
      missing.push_back(rank);
    }
  }
  if (result.traced_ranks.empty()) {
    result.message =
        "no rank wrote a trace, so " + output +
        " was not written: ranks record one when their process group comes from ringlab's tcp "
        "backend (ringlab lesson, tour, bench, init_process_group(\"tcp\")) and they get as far "
        "as it";
    return result;
  }
  try {
    result.events = sim::merge_traces(inputs, output);
  } catch (const std::exception& e) {
    result.traced_ranks.clear();
    result.message = std::string("cannot merge the ranks' traces: ") + e.what();
    result.failed = true;
    return result;
  }
  result.message = "trace of " + std::to_string(result.traced_ranks.size()) + " rank(s) (" +
                   std::to_string(result.events) + " events) written to " + output +
                   "; open it in https://ui.perfetto.dev or chrome://tracing";
  if (!missing.empty())
    result.message +=
        "; rank(s) " + list_ranks(missing) + " wrote none (stopped before they could)";
  return result;
}

RankRecorder::RankRecorder(Transport& inner, int rank, int world_size, RankTrace trace,
                           std::string process_name)
    : rank_(rank),
      world_size_(world_size),
      trace_(std::move(trace)),
      process_name_(std::move(process_name)) {
  sim::RecordOptions options;
  options.wall_clock = true;
  options.collectives = true;
  options.whole_values_bytes = kTraceWholeValuesBytes;
  options.value_budget_bytes = kTraceValueBudgetBytes;
  options.sample_elements = kTraceSampleElements;
  recorder_ = std::make_shared<sim::RecordingTransport>(inner, options);
}

void RankRecorder::label_next_collective(std::string label) {
  recorder_->label_next_collective(std::move(label));
}

RankRecorder::~RankRecorder() = default;

std::shared_ptr<Transport> RankRecorder::transport() const { return recorder_; }

std::string RankRecorder::write() {
  sim::TraceOptions options;
  options.max_events = trace_.max_events;
  options.process_name = process_name_;
  options.time_origin_ns = trace_.time_origin_ns;
  options.flow_series = trace_.flow_series;
  options.walkthroughs = true;
  try {
    write_file_atomically(trace_.path(rank_), "trace file", [&](std::ostream& out) {
      sim::write_rank_trace(recorder_->log(), out, options);
    });
    return trace_.ranks_merge ? merge_if_complete() : "";
  } catch (const std::exception& e) {
    return "rank " + std::to_string(rank_) + ": no trace written: " + e.what();
  }
}

// Every rank writes its file before it looks for the others', so the last
// one to write finds them all; of the ranks that do, the one that makes the
// mark merges (O_EXCL: one wins).
std::string RankRecorder::merge_if_complete() {
  std::vector<int> ranks;
  for (int q = 0; q < world_size_; ++q) {
    if (!fs::exists(trace_.path(q))) return "";
    ranks.push_back(q);
  }
  const std::string mark = (fs::path(trace_.folder) / kMergeMark).string();
  const int fd = ::open(mark.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0)
    return errno == EEXIST
               ? ""
               : "cannot merge the ranks' traces: " + mark + ": " + std::strerror(errno);
  ::close(fd);
  return merge_rank_traces(trace_.folder, ranks, trace_.merged_path(), false).message;
}

}  // namespace ringlab::backends
