#include "transport/nccl/store_rendezvous.hpp"

#include <stdexcept>

#include "transport/nccl/cuda_check.hpp"

namespace ringlab::nccl {

ncclUniqueId exchange_unique_id(store::Store& store, int rank, const std::string& key,
                                Duration timeout) {
  if (rank == 0) {
    const ncclUniqueId id = make_unique_id();
    store.set(key, encode_unique_id(id));
    return id;
  }
  return decode_unique_id(store.get(key, timeout));
}

void require_gpu(const ProcessRank& me) {
  std::string why;
  const int gpus = visible_gpu_count(&why);
  if (me.local_rank < 0 || me.local_rank >= gpus)
    throw std::invalid_argument(
        "rank " + std::to_string(me.rank) + ": the nccl backend runs one rank per GPU; " +
        "LOCAL_RANK=" + std::to_string(me.local_rank) + " needs GPU " +
        std::to_string(me.local_rank) + " but this machine shows " +
        (gpus < 0 ? "no GPU (" + why + ")" : std::to_string(gpus) + " GPUs") +
        ": start at most as many ranks per machine as it has GPUs");
}

std::shared_ptr<NcclCommunicator> join_through_store(store::Store& store, const std::string& key,
                                                     const ProcessRank& me) {
  const ncclUniqueId id = exchange_unique_id(store, me.rank, key, me.timeout);
  check_cuda(cudaSetDevice(me.local_rank), me.rank, "cudaSetDevice");
  return std::make_shared<NcclCommunicator>(id, me.rank, me.world_size, me.local_rank,
                                            me.timeout);
}

}  // namespace ringlab::nccl
