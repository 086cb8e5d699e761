#include "backends/traced_launch.hpp"

#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "simulator/recording_transport.hpp"

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

}  // namespace

launch::LaunchResult launch_traced(const launch::LaunchOptions& options,
                                   const TracedLaunchOptions& trace, TraceResult& traced) {
  launch::validate(options);  // before making a folder for nothing
  TraceFolder folder;
  launch::LaunchOptions with_trace = options;
  const std::size_t ranks =
      static_cast<std::size_t>(options.nnodes) * static_cast<std::size_t>(options.nproc_per_node);
  auto& variables = with_trace.extra_environment;
  variables.emplace_back(kTraceDirVariable, folder.path());
  variables.emplace_back(kTraceMaxEventsVariable,
                         std::to_string(std::max<std::size_t>(1, trace.max_events / ranks)));
  const std::int64_t origin =
      trace.time_origin_ns != 0 ? trace.time_origin_ns : sim::steady_clock_ns();
  variables.emplace_back(kTraceOriginVariable, std::to_string(origin));
  if (trace.flow_series != 0)
    variables.emplace_back(kTraceSeriesVariable, std::to_string(trace.flow_series));
  launch::LaunchResult result = launch::launch(with_trace);
  // This node's ranks.
  std::vector<int> node_ranks;
  for (int local = 0; local < options.nproc_per_node; ++local)
    node_ranks.push_back(options.node_rank * options.nproc_per_node + local);
  traced = merge_rank_traces(folder.path(), node_ranks, trace.output, trace.append);
  return result;
}

namespace {

// One rank thread of a traced world: its own process group on a recorder
// of the transport the world gave it; its file written however it ends.
void run_traced_rank(ProcessGroup& given, const RankTrace& trace, const std::string& process,
                     const RankBody& body, const ProcessGroupOptions& group) {
  RankRecorder recorder(given.transport(), given.rank(), given.size(), trace, process);
  std::exception_ptr failure;
  try {
    ProcessGroup traced(recorder.transport(), group);
    body(traced);
  } catch (...) {
    failure = std::current_exception();
  }
  if (const std::string line = recorder.write(); !line.empty())
    std::fprintf(stderr, "%s: %s\n", process.c_str(), line.c_str());
  if (failure) std::rethrow_exception(failure);
}

}  // namespace

void run_traced_thread_world(void (*run_world)(int, const RankBody&, const ProcessGroupOptions&),
                             std::string_view backend, int world, const RankBody& body,
                             const ProcessGroupOptions& group, TraceSession& session) {
  const TracedLaunchOptions options = next_traced_world(session);
  TraceFolder folder;
  RankTrace trace;
  trace.variable = "--trace";
  trace.folder = folder.path();
  trace.max_events = std::max<std::size_t>(1, options.max_events / static_cast<std::size_t>(world));
  trace.time_origin_ns = options.time_origin_ns;
  trace.flow_series = options.flow_series;
  const std::string process = "ringlab (" + std::string(backend) + ")";
  std::exception_ptr failure;
  try {
    run_world(
        world, [&](ProcessGroup& pg) { run_traced_rank(pg, trace, process, body, group); },
        group);
  } catch (...) {
    failure = std::current_exception();
  }
  std::vector<int> ranks(static_cast<std::size_t>(world));
  for (int r = 0; r < world; ++r) ranks[static_cast<std::size_t>(r)] = r;
  const TraceResult traced =
      merge_rank_traces(folder.path(), ranks, options.output, options.append);
  end_traced_world(session, traced, std::string(backend) + " backend", !failure);
  if (failure) std::rethrow_exception(failure);
}

TracedLaunchOptions next_traced_world(TraceSession& session) {
  if (session.time_origin_ns == 0) session.time_origin_ns = sim::steady_clock_ns();
  TracedLaunchOptions options;
  options.output = session.output;
  options.append = session.written;
  options.time_origin_ns = session.time_origin_ns;
  // Each world's ranks count their messages from 0: a series per world.
  options.flow_series = ++session.worlds;
  return options;
}

void end_traced_world(TraceSession& session, const TraceResult& traced,
                      const std::string& launcher_name, bool ranks_ok) {
  session.written = session.written || !traced.traced_ranks.empty();
  std::fflush(stdout);
  std::fprintf(stderr, "%s: %s\n", launcher_name.c_str(), traced.message.c_str());
  if (traced.failed && ranks_ok)
    throw std::runtime_error("--trace " + session.output + " was not written (see above)");
}

}  // namespace ringlab::backends
