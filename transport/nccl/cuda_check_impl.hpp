// poll_until_done's template body (included by cuda_check.hpp).
#pragma once

#include <chrono>
#include <thread>

namespace ringlab::nccl {

namespace detail {
// Yield first (most waits end within microseconds), then sleep up to 1 ms.
inline void backoff(int polls) {
  if (polls < 64) std::this_thread::yield();
  else std::this_thread::sleep_for(std::chrono::microseconds(polls < 1024 ? 20 : 1000));
}
}  // namespace detail

template <typename Query, typename Check>
void poll_until_done(Query&& query, int rank, Duration timeout, const std::string& what,
                     Check&& also_check) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (int polls = 0;; ++polls) {
    const cudaError_t status = query();
    if (status == cudaSuccess) return;
    if (status != cudaErrorNotReady) check_cuda(status, rank, what);
    also_check();
    if (std::chrono::steady_clock::now() >= deadline)
      throw TimeoutError((rank >= 0 ? "rank " + std::to_string(rank) + ": " : std::string()) + what + " did not finish within " +
                         std::to_string(timeout.count()) +
                         " ms; is every rank running the same operations in the same order?");
    detail::backoff(polls);
  }
}

inline void wait_for_stream(cudaStream_t stream, int rank, Duration timeout,
                            const std::string& what) {
  poll_until_done([stream] { return cudaStreamQuery(stream); }, rank, timeout, what, [] {});
}

}  // namespace ringlab::nccl
