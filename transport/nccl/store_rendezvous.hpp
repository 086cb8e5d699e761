// Ranks as processes: the ncclUniqueId travels through the TCP backend's
// rendezvous store (transport/tcp/tcp.hpp), as in torch.distributed's NCCL
// backend: rank 0 makes the id and sets it under a key; every other rank gets
// it (waiting, with the timeout) and all join the NCCL world.
//
//   RANK=1 WORLD_SIZE=2 LOCAL_RANK=1 MASTER_PORT=29500 ./my_program
//   auto process = ringlab::nccl::connect_from_environment();
//   ringlab::nccl::NcclGroup group(process.communicator);
#pragma once

#include <memory>
#include <string>

#include "transport/nccl/communicator.hpp"
#include "transport/tcp/tcp.hpp"

namespace ringlab::nccl {

// Rank 0: ncclGetUniqueId, then store.set(key, id). Others: store.get(key).
ncclUniqueId exchange_unique_id(tcp::Store& store, int rank, const std::string& key,
                                Duration timeout);

struct NcclProcess {
  // Kept alive: rank 0 hosts the store in it.
  std::shared_ptr<tcp::TcpTransport> tcp;
  std::shared_ptr<NcclCommunicator> communicator;
};

// tcp::connect(rendezvous), the id through its store (the key includes the
// job id, so a stale id from an earlier job is never read), then a
// communicator on GPU rendezvous.local_rank. Throws std::invalid_argument if
// that GPU does not exist (one rank per GPU).
NcclProcess connect(const tcp::Rendezvous& rendezvous);
// The same with tcp::from_environment().
NcclProcess connect_from_environment();

}  // namespace ringlab::nccl
