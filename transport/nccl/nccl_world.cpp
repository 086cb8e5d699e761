#include "transport/nccl/nccl_world.hpp"

#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "transport/nccl/cuda_check.hpp"

namespace ringlab::nccl {

void run_nccl_world(int size, const std::function<void(std::shared_ptr<NcclCommunicator>)>& body,
                    Duration timeout) {
  if (size < 1)
    throw std::invalid_argument("the nccl backend needs at least 1 rank, got " +
                                std::to_string(size));
  require_gpus_for_ranks(size);
  const ncclUniqueId id = make_unique_id();

  std::mutex mutex;
  std::exception_ptr first_error;
  std::vector<std::weak_ptr<NcclCommunicator>> communicators(static_cast<std::size_t>(size));
  auto fail = [&](int rank, const std::string& why) {
    std::lock_guard lock(mutex);
    if (!first_error) first_error = std::current_exception();
    for (int other = 0; other < size; ++other)
      if (auto comm = communicators[static_cast<std::size_t>(other)].lock(); comm && other != rank)
        comm->request_abort(rank, why);
  };

  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(size));
  for (int rank = 0; rank < size; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        check_cuda(cudaSetDevice(rank), rank, "cudaSetDevice(" + std::to_string(rank) + ")");
        auto comm = std::make_shared<NcclCommunicator>(id, rank, size, rank, timeout);
        {
          std::lock_guard lock(mutex);
          communicators[static_cast<std::size_t>(rank)] = comm;
        }
        body(comm);
      } catch (const std::exception& error) {
        fail(rank, error.what());
      }
    });
  }
  for (auto& thread : threads) thread.join();
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace ringlab::nccl
