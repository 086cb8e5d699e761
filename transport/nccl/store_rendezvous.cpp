#include "transport/nccl/store_rendezvous.hpp"

#include <stdexcept>

#include "transport/nccl/cuda_check.hpp"

namespace ringlab::nccl {

ncclUniqueId exchange_unique_id(tcp::Store& store, int rank, const std::string& key,
                                Duration timeout) {
  if (rank == 0) {
    const ncclUniqueId id = make_unique_id();
    store.set(key, encode_unique_id(id));
    return id;
  }
  return decode_unique_id(store.get(key, timeout));
}

NcclProcess connect(const tcp::Rendezvous& rendezvous) {
  std::string why;
  const int gpus = visible_gpu_count(&why);
  if (rendezvous.local_rank < 0 || rendezvous.local_rank >= gpus)
    throw std::invalid_argument(
        "rank " + std::to_string(rendezvous.rank) + ": the nccl backend runs one rank per GPU; " +
        "LOCAL_RANK=" + std::to_string(rendezvous.local_rank) + " needs GPU " +
        std::to_string(rendezvous.local_rank) + " but this machine shows " +
        (gpus < 0 ? "no GPU (" + why + ")" : std::to_string(gpus) + " GPUs") +
        ": start at most as many ranks per machine as it has GPUs");
  NcclProcess process;
  process.tcp = tcp::connect(rendezvous);
  const std::string key = "ringlab/nccl/" + std::to_string(process.tcp->job_id()) + "/unique_id";
  const ncclUniqueId id =
      exchange_unique_id(process.tcp->store(), rendezvous.rank, key, rendezvous.timeout);
  check_cuda(cudaSetDevice(rendezvous.local_rank), rendezvous.rank, "cudaSetDevice");
  process.communicator = std::make_shared<NcclCommunicator>(
      id, rendezvous.rank, rendezvous.world_size, rendezvous.local_rank, rendezvous.timeout);
  return process;
}

NcclProcess connect_from_environment() { return nccl::connect(tcp::from_environment()); }

}  // namespace ringlab::nccl
