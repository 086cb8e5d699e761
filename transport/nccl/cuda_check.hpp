// Turning CUDA and NCCL status codes into ringlab errors. Every message names
// the rank, what was being done and CUDA's/NCCL's own words for the failure,
// so "rank 1: cudaMalloc of 4096 bytes on GPU 1: out of memory" is enough to act on.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>

#include "transport/transport.hpp"

namespace ringlab::nccl {

// Throws CommError("rank R: WHAT: <cudaGetErrorString>") unless status is
// cudaSuccess. rank < 0 (code that does not know its rank) leaves "rank R: " out.
void check_cuda(cudaError_t status, int rank, const std::string& what);
// Throws CommError("rank R: WHAT: <ncclGetErrorString> (<ncclGetLastError>)")
// unless status is ncclSuccess or ncclInProgress (a non-blocking communicator's
// "started"; the caller waits for it with NcclCommunicator::wait_ready).
void check_nccl(ncclResult_t status, int rank, const std::string& what);

// The number of GPUs CUDA shows this process, or -1 with `why` set to CUDA's
// reason (no driver, no device). Never throws. It starts CUDA in this process.
int visible_gpu_count(std::string* why = nullptr);

// The same count, made by a short-lived child process, so that this process
// does not start CUDA: CUDA does not survive a fork, and a process that
// forks its ranks must not have started it. Where this process has started
// CUDA already, it counts here instead. -1 with `why` on failure.
int gpu_count_without_starting_cuda(std::string* why = nullptr);
// Whether this process has started CUDA through ringlab (a count, a
// communicator, device memory): its forks cannot use the GPU.
bool cuda_started_here();

// Throws std::invalid_argument unless at least `ranks` GPUs are visible: ranks
// that are threads of one process need one GPU each (NCCL refuses two ranks of
// one host on one device), so this is checked before NCCL is called. The
// message says how many GPUs there are (or why there are none) and what to do.
void require_gpus_for_ranks(int ranks);

// Makes `device` current for the calling thread while alive (CUDA's current
// device is per thread, and ProcessGroup runs async work on its own thread).
class DeviceGuard {
 public:
  DeviceGuard(int device, int rank);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

// Polls `query` (cudaEventQuery / cudaStreamQuery of something) until it says
// cudaSuccess, instead of blocking in cudaStreamSynchronize, so that the wait
// can give up: TimeoutError naming the rank and `what` after `timeout`.
// `also_check` runs on every poll (the NCCL communicator's async-error check)
// and may throw.
template <typename Query, typename Check>
void poll_until_done(Query&& query, int rank, Duration timeout, const std::string& what,
                     Check&& also_check);
// Everything enqueued on `stream` so far, with poll_until_done.
void wait_for_stream(cudaStream_t stream, int rank, Duration timeout, const std::string& what);

}  // namespace ringlab::nccl

#include "transport/nccl/cuda_check_impl.hpp"
