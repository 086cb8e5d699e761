// The `nccl` backend: every ProcessGroup runs ringlab's hand-written
// algorithms on host tensors with each message carried by ncclSend/ncclRecv
// through GPU memory (transport/nccl/staged_transport.hpp says why). Three
// ways a world comes to be:
//  - `--backend nccl -n N` of `ringlab lesson`, `tour` and `bench` in a
//    process that is not a rank, with N GPUs or more: ranks as threads, one
//    GPU each;
//  - the same with fewer GPUs (one is enough): ranks as processes forked at
//    the call (rank_processes.hpp), which share the GPUs as launched ranks do;
//  - a process a launcher started as a rank (`ringlab run --nproc-per-node 2
//    -- ringlab lesson all_reduce --backend nccl -n 2`), and
//    init_process_group("nccl"): this process is one rank (join_nccl_job,
//    nccl_join.hpp); ranks on a host with fewer GPUs than ranks share them
//    round-robin, and the host's lowest rank prints one line saying so.
// The GPUs are counted without starting CUDA in this process (a child
// counts them), because CUDA does not survive the fork of the second way.
// Which way, and the launched rank's one connection (kept for every world,
// released at exit before CUDA's own teardown), are rank_world.hpp's.
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "backends/nccl_join.hpp"
#include "backends/rank_world.hpp"
#include "backends/rows.hpp"
#include "transport/nccl/cuda_check.hpp"
#include "transport/nccl/nccl_world.hpp"
#include "transport/nccl/staged_transport.hpp"

namespace ringlab::backends {

NcclRank join_nccl_job(const tcp::WorldSpec& world) {
  const nccl::ProcessRank me{world.rank, world.world_size, world.local_rank, world.timeout};
  nccl::require_gpu(me);
  NcclRank joined;
  joined.met = tcp::connect(world);
  const std::string prefix = "ringlab/nccl/" + std::to_string(joined.met->job_id()) + "/";
  joined.placement = nccl::place_through_store(joined.met->store(), prefix, me);
  joined.note = nccl::sharing_note(joined.placement, nccl::visible_gpu_count());
  joined.communicator = nccl::join_through_store(joined.met->store(), prefix + "unique_id", me,
                                                 joined.placement.device);
  return joined;
}

namespace {

// This process's rank of a job, with the staged transport its groups use.
struct JoinedRank final : RankConnection {
  explicit JoinedRank(const tcp::WorldSpec& world)
      : rank(join_nccl_job(world)), transport(rank.communicator) {
    if (!rank.note.empty() && rank.placement.first_on_host)
      std::fprintf(stderr, "ringlab: %s\n", rank.note.c_str());
  }
  NcclRank rank;
  nccl::HostStagedNcclTransport transport;
};

// Fewer GPUs than ranks (but one at least), and no launcher: the ranks are
// forks that share them, as launched ranks do.
bool wants_threads(int world) {
  std::string why;
  const int gpus = nccl::gpu_count_without_starting_cuda(&why);
  return !(gpus > 0 && gpus < world);
}

// Ranks as threads, one GPU each (run_nccl_world says why not where CUDA
// shows no GPU, or too few).
void run_threads(int world, const RankBody& body, const ProcessGroupOptions& group) {
  nccl::run_nccl_world(
      world,
      [&](std::shared_ptr<nccl::NcclCommunicator> communicator) {
        ProcessGroup pg(std::make_shared<nccl::HostStagedNcclTransport>(std::move(communicator)),
                        group);
        body(pg);
      },
      group.timeout);
}

// CUDA does not survive a fork: a process that has used the GPU (an earlier
// world ran its ranks as threads) cannot fork ranks that use it.
void refuse_fork_after_cuda(int world) {
  if (!nccl::cuda_started_here()) return;
  throw std::invalid_argument(
      "--backend nccl: " + std::to_string(world) + " ranks on fewer GPUs run as processes "
      "forked from this one, but this process has used the GPU already (an earlier world ran "
      "its ranks as threads) and CUDA does not survive a fork: run this world in a program of "
      "its own");
}

}  // namespace

void run_nccl_ranks(int world, const RankBody& body, const ProcessGroupOptions& group) {
  ProcessWorld w;
  w.name = "nccl backend";
  w.world = world;
  w.timeout = group.timeout;
  // A launched process keeps its JoinedRank for every world (rank_world.hpp);
  // a forked rank's ends with the rank.
  w.connect = [](const RankSpec& me, const EnvironmentLookup&) {
    return std::make_unique<JoinedRank>(me.world);
  };
  w.run = [&](RankConnection& connection, const RankSpec& me) {
    auto& joined = static_cast<JoinedRank&>(connection);
    ProcessGroupOptions options = group;
    options.timeout = me.group_timeout(group.timeout);
    ProcessGroup pg(std::shared_ptr<Transport>(&joined.transport, [](Transport*) {}), options);
    body(pg);
    return std::string();
  };
  w.wants_threads = [world] { return wants_threads(world); };
  w.run_threads = [&] { run_threads(world, body, group); };
  w.forks.name = "ringlab (nccl backend)";
  w.forks.answers = false;
  w.before_fork = [world] { refuse_fork_after_cuda(world); };
  run_process_world(w);
}

std::string nccl_cannot_run(int world) {
  std::string why;
  const int gpus = nccl::gpu_count_without_starting_cuda(&why);
  if (gpus >= world) return "";
  if (gpus <= 0) return "needs a GPU; CUDA shows none here: " + why;
  // Fewer GPUs than ranks: launched ranks share them, and so do ranks this
  // process forks, unless it has started CUDA itself.
  if (is_launched_rank() || !nccl::cuda_started_here()) return "";
  return "needs " + std::to_string(world) + " GPUs for ranks as threads, and this process has "
         "used the GPU already, so it cannot fork ranks that share " + std::to_string(gpus);
}

std::unique_ptr<ProcessGroup> init_nccl_process_group(ProcessGroupOptions options) {
  const RankSpec me = rank_spec(process_environment(), options.timeout);
  options.timeout = me.group_timeout(options.timeout);
  auto held = std::make_shared<JoinedRank>(me.world);
  return std::make_unique<ProcessGroup>(std::shared_ptr<Transport>(held, &held->transport),
                                        std::move(options));
}

}  // namespace ringlab::backends
