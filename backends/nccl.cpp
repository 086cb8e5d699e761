// The `nccl` backend: one GPU per rank, and every ProcessGroup runs ringlab's
// hand-written algorithms on host tensors with each message carried by
// ncclSend/ncclRecv through GPU memory (transport/nccl/staged_transport.hpp
// says why). As threads for `--backend nccl` of `ringlab lesson`, `tour` and
// `bench`; as processes for init_process_group("nccl"), the ncclUniqueId
// passed through the store of the TCP backend's rendezvous.
#include <cstdlib>
#include <memory>
#include <string>

#include "backends/rows.hpp"
#include "transport/nccl/cuda_check.hpp"
#include "transport/nccl/nccl_world.hpp"
#include "transport/nccl/staged_transport.hpp"
#include "transport/nccl/store_rendezvous.hpp"
#include "transport/tcp/tcp.hpp"

namespace ringlab::backends {

void run_nccl_ranks(int world, const RankBody& body, const ProcessGroupOptions& group) {
  nccl::run_nccl_world(
      world,
      [&](std::shared_ptr<nccl::NcclCommunicator> communicator) {
        ProcessGroup pg(std::make_shared<nccl::HostStagedNcclTransport>(std::move(communicator)),
                        group);
        body(pg);
      },
      group.timeout);
}

std::string nccl_cannot_run(int world) {
  std::string why;
  const int gpus = nccl::visible_gpu_count(&why);
  if (gpus >= world) return "";
  const std::string needed = std::to_string(world) + " GPU" + (world == 1 ? "" : "s");
  if (gpus <= 0) return "needs " + needed + " (one per rank); CUDA shows none here: " + why;
  return "needs " + needed + " (one per rank); CUDA shows " + std::to_string(gpus) + " here";
}

std::unique_ptr<ProcessGroup> init_nccl_process_group(ProcessGroupOptions options) {
  tcp::WorldSpec world = tcp::from_environment();
  if (std::getenv("RINGLAB_TIMEOUT_MS"))
    options.timeout = world.timeout;
  else
    world.timeout = options.timeout;
  const nccl::ProcessRank me{world.rank, world.world_size, world.local_rank, world.timeout};
  nccl::require_gpu(me);
  // The ranks meet as the tcp backend's do, and pass the id through that
  // rendezvous's store, under a key with the job id every rank agreed on. The
  // TCP connection lives as long as the transport: rank 0 hosts the store.
  struct Held {
    Held(std::shared_ptr<tcp::TcpTransport> met, std::shared_ptr<nccl::NcclCommunicator> comm)
        : tcp(std::move(met)), transport(std::move(comm)) {}
    std::shared_ptr<tcp::TcpTransport> tcp;
    nccl::HostStagedNcclTransport transport;
  };
  auto met = tcp::connect(world);
  const std::string key = "ringlab/nccl/" + std::to_string(met->job_id()) + "/unique_id";
  auto communicator = nccl::join_through_store(met->store(), key, me);
  auto held = std::make_shared<Held>(std::move(met), std::move(communicator));
  return std::make_unique<ProcessGroup>(std::shared_ptr<Transport>(held, &held->transport),
                                        std::move(options));
}

}  // namespace ringlab::backends
