#include "python/bridge_group.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>
#include <vector>

#include "backends/traced_launch.hpp"
#include "ops/atomic_file.hpp"
#include "primitives/algorithms.hpp"
#include "simulator/recording_transport.hpp"
#include "simulator/trace.hpp"
#include "transport/tcp/tcp.hpp"

namespace ringlab::python {

namespace {

std::int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The time the ranks' traces show as 0: rank 0's clock when the group is
// made, passed through the store (the ranks of one machine share the clock).
std::int64_t agree_on_origin(store::KeyValueStore& store, int rank, Duration timeout) {
  const std::string key = "ringlab/trace/origin";
  if (rank == 0) store.set(key, std::to_string(steady_now_ns()));
  return std::stoll(store.get(key, timeout));
}

// How long rank 0 waits for the other ranks' trace files before it merges.
constexpr Duration kMergePatience = std::chrono::seconds(30);

}  // namespace

BridgeGroup::BridgeGroup(std::shared_ptr<store::KeyValueStore> store, GroupSpec spec)
    : spec_(std::move(spec)) {
  tcp::WorldSpec r;
  r.rank = spec_.rank;
  r.world_size = spec_.size;
  r.bind_addr = spec_.bind_addr;
  r.job_token = spec_.job_token;
  r.timeout = spec_.timeout;
  transport_ = tcp::connect(r, store);
  std::shared_ptr<Transport> transport = transport_;
  if (!spec_.trace_dir.empty() || !spec_.launcher_trace_dir.empty()) {
    if (spec_.trace_origin_ns == 0)
      spec_.trace_origin_ns = agree_on_origin(*store, spec_.rank, spec_.timeout);
    sim::RecordOptions options;
    options.wall_clock = true;
    recorder_ = std::make_shared<sim::RecordingTransport>(*transport_, options);
    transport = recorder_;
  }
  ProcessGroupOptions options;
  options.timeout = spec_.timeout;
  options.algorithms = spec_.algorithms;
  group_ = std::make_unique<ProcessGroup>(transport, options);
}

// A group destroyed before the program ends (dist.destroy_process_group())
// still leaves its trace.
BridgeGroup::~BridgeGroup() {
  try {
    const std::string line = finish();
    if (!line.empty()) std::fprintf(stderr, "%s\n", line.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ringlab: rank %d: no trace written: %s\n", spec_.rank, e.what());
  }
}

void BridgeGroup::announce(Collective c, std::size_t bytes) {
  if (spec_.rank != 0) return;
  const std::string name = group_->algorithm(c);
  std::string ran = name;
  const auto source = spec_.algorithm_sources.find(c);
  std::string why =
      source != spec_.algorithm_sources.end() ? source->second : "ringlab's default";
  if (c == Collective::AllReduce && name == "auto") {
    ran = std::string(all_reduce_auto_choice(bytes, spec_.size,
                                             transport_->prefers_fewer_messages()));
    why = "auto's choice for " + std::to_string(bytes) + " bytes on " +
          std::to_string(spec_.size) + " ranks";
  }
  std::lock_guard lock(mutex_);
  if (!announced_.insert({c, ran}).second) return;
  std::fprintf(stderr, "ringlab: %s runs %s (%s)\n", std::string(collective_name(c)).c_str(),
               ran.c_str(), why.c_str());
  std::fflush(stderr);
}

std::string BridgeGroup::finish() {
  std::lock_guard lock(mutex_);
  if (finished_ || !recorder_) return "";
  finished_ = true;
  const bool own = spec_.launcher_trace_dir.empty();
  const std::string line = write_rank_file(own ? spec_.trace_dir : spec_.launcher_trace_dir);
  if (own && spec_.rank == 0) return merge_rank_files();
  return line;
}

std::string BridgeGroup::write_rank_file(const std::string& folder) {
  const std::string path = backends::rank_trace_path(folder, spec_.rank);
  try {
    std::filesystem::create_directories(folder);
    sim::TraceOptions options;
    options.max_events = spec_.trace_max_events;
    options.process_name = "ringlab (torch.distributed)";
    options.time_origin_ns = spec_.trace_origin_ns;
    write_file_atomically(path, "trace file", [&](std::ostream& out) {
      sim::write_rank_trace(recorder_->log(), out, options);
    });
  } catch (const std::exception& e) {
    return "ringlab: rank " + std::to_string(spec_.rank) + ": no trace written: " + e.what();
  }
  return "";
}

// Rank 0, on its own trace: the other ranks write theirs as they finish,
// which is soon (their group goes when their program ends): kMergePatience.
std::string BridgeGroup::merge_rank_files() {
  const auto deadline = std::chrono::steady_clock::now() + std::min(spec_.timeout, kMergePatience);
  std::vector<std::string> inputs;
  std::vector<int> missing;
  for (int q = 0; q < spec_.size; ++q) {
    const std::string file = backends::rank_trace_path(spec_.trace_dir, q);
    while (!std::filesystem::exists(file) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (std::filesystem::exists(file)) inputs.push_back(file);
    else missing.push_back(q);
  }
  const std::string output = (std::filesystem::path(spec_.trace_dir) / "trace.json").string();
  std::size_t events = 0;
  try {
    events = sim::merge_traces(inputs, output);
  } catch (const std::exception& e) {
    return std::string("ringlab: cannot merge the ranks' traces: ") + e.what();
  }
  std::string line = "ringlab: trace of " + std::to_string(inputs.size()) + " rank(s) (" +
                     std::to_string(events) + " events) written to " + output +
                     "; open it in https://ui.perfetto.dev or chrome://tracing";
  if (!missing.empty()) {
    line += "; rank(s)";
    for (int q : missing) line += " " + std::to_string(q);
    line += " wrote none within the timeout";
  }
  return line;
}

}  // namespace ringlab::python
