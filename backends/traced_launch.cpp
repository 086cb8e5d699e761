#include "backends/traced_launch.hpp"

#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>

#include "simulator/trace.hpp"

namespace ringlab::backends {

namespace {

std::string system_error(const std::string& what) { return what + ": " + std::strerror(errno); }

// A fresh folder under $TMPDIR (or /tmp) for the ranks' trace files, removed
// with everything in it when the launch is over, however it ends.
class TraceFolder {
 public:
  TraceFolder() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "ringlab-trace-XXXXXX").string();
    if (!::mkdtemp(pattern.data()))
      throw std::runtime_error(
          system_error("cannot create a folder for the ranks' traces (" + pattern + ")") +
          "; set TMPDIR to a writable folder, or drop --trace");
    path_ = pattern;
  }
  ~TraceFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TraceFolder(const TraceFolder&) = delete;
  TraceFolder& operator=(const TraceFolder&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string list_ranks(const std::vector<int>& ranks) {
  std::string text;
  for (std::size_t i = 0; i < ranks.size(); ++i) text += (i ? ", " : "") + std::to_string(ranks[i]);
  return text;
}

// Merges the files the ranks of this node left in `folder` into
// trace.output; says in result what it did.
void merge_rank_traces(const launch::LaunchOptions& o, const TraceOptions& trace,
                       const std::string& folder, TraceResult& result) {
  std::vector<std::string> inputs;
  if (trace.append && std::filesystem::exists(trace.output)) inputs.push_back(trace.output);
  std::vector<int> traced, missing;
  for (int local = 0; local < o.nproc_per_node; ++local) {
    const int rank = o.node_rank * o.nproc_per_node + local;
    const std::string file = rank_trace_path(folder, rank);
    if (std::filesystem::exists(file)) {
      inputs.push_back(file);
      traced.push_back(rank);
    } else {
      missing.push_back(rank);
    }
  }
  if (traced.empty()) {
    result.message =
        "no rank wrote a trace, so " + trace.output +
        " was not written: ranks record one when their process group comes from ringlab's tcp "
        "backend (ringlab lesson, tour, bench) and they get as far as it";
    return;
  }
  try {
    result.events = sim::merge_traces(inputs, trace.output);
  } catch (const std::exception& e) {
    result.message = std::string("cannot merge the ranks' traces: ") + e.what();
    result.failed = true;
    return;
  }
  result.traced_ranks = traced;
  result.message = "trace of " + std::to_string(traced.size()) + " rank(s) (" +
                   std::to_string(result.events) + " events) written to " + trace.output +
                   "; open it in https://ui.perfetto.dev or chrome://tracing";
  if (!missing.empty())
    result.message +=
        "; rank(s) " + list_ranks(missing) + " wrote none (stopped before they could)";
}

}  // namespace

std::string rank_trace_path(const std::string& folder, int rank) {
  return (std::filesystem::path(folder) / ("rank" + std::to_string(rank) + ".json")).string();
}

std::optional<RankTrace> rank_trace(int rank,
                                    const std::function<const char*(const char*)>& lookup) {
  const char* folder = lookup(kTraceDirVariable);
  if (!folder || !*folder) return std::nullopt;
  RankTrace trace;
  trace.path = rank_trace_path(folder, rank);
  if (const char* limit = lookup(kTraceMaxEventsVariable))
    trace.max_events = std::max<std::size_t>(1, std::strtoull(limit, nullptr, 10));
  if (const char* origin = lookup(kTraceOriginVariable))
    trace.time_origin_ns = std::strtoll(origin, nullptr, 10);
  return trace;
}

launch::LaunchResult launch_traced(const launch::LaunchOptions& options, const TraceOptions& trace,
                                   TraceResult& traced) {
  launch::validate(options);  // before making a folder for nothing
  TraceFolder folder;
  launch::LaunchOptions with_trace = options;
  const std::size_t ranks =
      static_cast<std::size_t>(options.nnodes) * static_cast<std::size_t>(options.nproc_per_node);
  with_trace.extra_environment.emplace_back(kTraceDirVariable, folder.path());
  with_trace.extra_environment.emplace_back(
      kTraceMaxEventsVariable, std::to_string(std::max<std::size_t>(1, trace.max_events / ranks)));
  const std::int64_t origin = trace.time_origin_ns != 0
                                  ? trace.time_origin_ns
                                  : std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count();
  with_trace.extra_environment.emplace_back(kTraceOriginVariable, std::to_string(origin));
  launch::LaunchResult result = launch::launch(with_trace);
  merge_rank_traces(options, trace, folder.path(), traced);
  return result;
}

}  // namespace ringlab::backends
