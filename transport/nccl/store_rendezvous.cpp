#include "transport/nccl/store_rendezvous.hpp"

#include <unistd.h>

#include <cstdlib>
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
  if (visible_gpu_count(&why) > 0) return;
  throw std::invalid_argument("rank " + std::to_string(me.rank) +
                              ": the nccl backend needs a GPU, and this machine shows none (" +
                              why + "): use --backend tcp here");
}

namespace {

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

// What NCCL will take this process's host to be.
std::string nccl_host() {
  const char* id = std::getenv("NCCL_HOSTID");
  return id && *id ? std::string(id) : host_name();
}

}  // namespace

GpuPlacement place_ranks(const std::vector<std::string>& hosts, int rank, int gpus) {
  if (gpus < 1)
    throw std::invalid_argument("place_ranks: rank " + std::to_string(rank) +
                                " sees no GPU; the nccl backend needs one");
  const std::string& mine = hosts.at(static_cast<std::size_t>(rank));
  int here = 0, before = 0;
  bool one_host = true;
  for (std::size_t r = 0; r < hosts.size(); ++r) {
    one_host = one_host && hosts[r] == hosts.front();
    if (hosts[r] != mine) continue;
    ++here;
    if (static_cast<int>(r) < rank) ++before;
  }
  GpuPlacement placement;
  placement.device = before % gpus;
  placement.ranks_on_host = here;
  placement.first_on_host = before == 0;
  if (here <= gpus) return placement;
  placement.host_id = mine + "/rank" + std::to_string(rank);
  placement.loopback = one_host;
  return placement;
}

std::string sharing_note(const GpuPlacement& placement, int gpus) {
  if (placement.host_id.empty()) return "";
  return "nccl: " + std::to_string(placement.ranks_on_host) + " ranks share " +
         std::to_string(gpus) + " GPU" + (gpus == 1 ? "" : "s") +
         " on this host, round-robin: each rank is an NCCL host of its own (NCCL_HOSTID), so "
         "messages between them travel over NCCL's network transport" +
         (placement.loopback ? " on loopback" : "") + ": correct, but not GPU speed";
}

GpuPlacement place_through_store(store::Store& store, const std::string& prefix,
                                 const ProcessRank& me) {
  std::string why;
  const int gpus = visible_gpu_count(&why);
  store.set(prefix + "host/" + std::to_string(me.rank), nccl_host());
  std::vector<std::string> hosts;
  for (int r = 0; r < me.world_size; ++r)
    hosts.push_back(store.get(prefix + "host/" + std::to_string(r), me.timeout));
  const GpuPlacement placement = place_ranks(hosts, me.rank, gpus);
  if (!placement.host_id.empty()) {
    ::setenv("NCCL_HOSTID", placement.host_id.c_str(), 1);
    if (placement.loopback) ::setenv("NCCL_SOCKET_IFNAME", "lo", 0);
  }
  return placement;
}

std::shared_ptr<NcclCommunicator> join_through_store(store::Store& store, const std::string& key,
                                                     const ProcessRank& me, int device) {
  const ncclUniqueId id = exchange_unique_id(store, me.rank, key, me.timeout);
  check_cuda(cudaSetDevice(device), me.rank, "cudaSetDevice");
  return std::make_shared<NcclCommunicator>(id, me.rank, me.world_size, device, me.timeout);
}

}  // namespace ringlab::nccl
