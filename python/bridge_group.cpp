#include "python/bridge_group.hpp"

#include <cstdio>

#include "backends/rank_trace.hpp"
#include "backends/rank_world.hpp"
#include "primitives/algorithms.hpp"
#include "simulator/recording_transport.hpp"
#include "transport/tcp/tcp.hpp"

namespace ringlab::python {

namespace {

// The time the ranks' traces show as 0 when no launcher gave one: rank 0's
// clock when the group is made, passed through the store (the ranks of one
// machine share the clock).
std::int64_t agree_on_origin(store::Store& store, int rank, Duration timeout) {
  const std::string key = "ringlab/trace/origin";
  if (rank == 0) store.set(key, std::to_string(sim::steady_clock_ns()));
  return std::stoll(store.get(key, timeout));
}

}  // namespace

BridgeGroup::BridgeGroup(std::shared_ptr<store::Store> store, GroupSpec spec)
    : spec_(std::move(spec)) {
  const backends::EnvironmentLookup environment = backends::process_environment();
  const backends::RankSpec me =
      backends::rank_spec(spec_.rank, spec_.size, environment, spec_.timeout);
  spec_.timeout = me.group_timeout(spec_.timeout);
  std::optional<backends::RankTrace> trace;
  if (spec_.trace) trace = backends::torch_group_trace(environment);
  // Refused here, before the ranks meet, rather than found out at the end.
  if (trace && trace->ranks_merge) backends::prepare_trace_folder(*trace, spec_.rank);
  transport_ = tcp::connect(me.world, store);
  std::shared_ptr<Transport> transport = transport_;
  if (trace) {
    if (trace->time_origin_ns == 0)
      trace->time_origin_ns = agree_on_origin(*store, spec_.rank, spec_.timeout);
    recorder_ = std::make_unique<backends::RankRecorder>(
        *transport_, spec_.rank, spec_.size, std::move(*trace), "ringlab (torch.distributed)");
    transport = recorder_->transport();
  }
  ProcessGroupOptions options;
  options.timeout = spec_.timeout;
  options.algorithms = spec_.algorithms;
  group_ = std::make_unique<ProcessGroup>(transport, options);
}

// A group destroyed before the program ends (dist.destroy_process_group())
// still leaves its trace: writing it waits for nobody.
BridgeGroup::~BridgeGroup() {
  const std::string line = finish();
  if (!line.empty()) std::fprintf(stderr, "%s\n", line.c_str());
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

void BridgeGroup::label_next_collective(std::string label) {
  if (recorder_) recorder_->label_next_collective(std::move(label));
}

std::string BridgeGroup::finish() {
  std::lock_guard lock(mutex_);
  if (finished_ || !recorder_) return "";
  finished_ = true;
  const std::string line = recorder_->write();
  return line.empty() ? "" : "ringlab: " + line;
}

}  // namespace ringlab::python
