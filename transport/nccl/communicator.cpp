#include "transport/nccl/communicator.hpp"

#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "transport/nccl/cuda_check.hpp"

namespace ringlab::nccl {

std::string encode_unique_id(const ncclUniqueId& id) {
  return std::string(reinterpret_cast<const char*>(&id), sizeof(id));
}

ncclUniqueId decode_unique_id(const std::string& bytes) {
  ncclUniqueId id{};
  if (bytes.size() != sizeof(id))
    throw std::invalid_argument("an ncclUniqueId is " + std::to_string(sizeof(id)) +
                                " bytes, but the store held " + std::to_string(bytes.size()) +
                                ": did another job write the same key?");
  std::memcpy(&id, bytes.data(), sizeof(id));
  return id;
}

ncclUniqueId make_unique_id() {
  ncclUniqueId id{};
  check_nccl(ncclGetUniqueId(&id), 0, "ncclGetUniqueId");
  return id;
}

namespace {
// Scratch and staging memory comes from the device's default memory pool
// (cudaMallocAsync) and goes back to it stream-ordered (cudaFreeAsync). By
// default the pool hands freed memory back to the driver at every
// synchronization, so the next collective would allocate it again: keep it.
void keep_freed_memory(int device) {
  cudaMemPool_t pool = nullptr;
  if (cudaDeviceGetDefaultMemPool(&pool, device) != cudaSuccess) {
    cudaGetLastError();
    return;  // no pool support: allocations still work, only slower
  }
  std::uint64_t keep = UINT64_MAX;
  if (cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep) != cudaSuccess)
    cudaGetLastError();
}
}  // namespace

NcclCommunicator::NcclCommunicator(const ncclUniqueId& id, int rank, int size, int device,
                                   Duration timeout)
    : rank_(rank), size_(size), device_(device), timeout_(timeout) {
  if (size < 1 || rank < 0 || rank >= size)
    throw std::invalid_argument("NcclCommunicator: rank " + std::to_string(rank) +
                                " is not in a world of " + std::to_string(size) + " ranks");
  int devices = 0;
  check_cuda(cudaGetDeviceCount(&devices), rank, "cudaGetDeviceCount");
  if (device < 0 || device >= devices)
    throw std::invalid_argument(prefix() + "GPU " + std::to_string(device) +
                                " does not exist; this process sees " + std::to_string(devices) +
                                " GPUs");
  DeviceGuard on_device(device, rank);
  check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), rank,
             "cudaStreamCreateWithFlags");
  if (const cudaError_t made = cudaStreamCreateWithFlags(&copy_stream_, cudaStreamNonBlocking);
      made != cudaSuccess) {
    cudaStreamDestroy(stream_);
    check_cuda(made, rank, "cudaStreamCreateWithFlags (copy stream)");
  }
  keep_freed_memory(device);

  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // every call returns at once; we poll with a timeout
  const ncclResult_t started = ncclCommInitRankConfig(&comm_, size, id, rank, &config);
  if (started != ncclSuccess && started != ncclInProgress) {
    cudaStreamDestroy(stream_);
    cudaStreamDestroy(copy_stream_);
    check_nccl(started, rank, "ncclCommInitRankConfig (world of " + std::to_string(size) +
                                  ", GPU " + std::to_string(device) + ")");
  }
  try {
    wait_issued("joining the NCCL world of " + std::to_string(size) +
                " ranks (ncclCommInitRankConfig); did every rank start, with the same id?");
  } catch (...) {
    cudaStreamDestroy(stream_);
    cudaStreamDestroy(copy_stream_);
    throw;
  }
}

NcclCommunicator::~NcclCommunicator() {
  int previous = -1;
  cudaGetDevice(&previous);
  cudaSetDevice(device_);
  if (comm_ && !aborted_) {
    // Finalizing flushes outstanding work and can need the peers, so it is
    // polled like everything else; a stuck or failed one is aborted instead.
    try {
      check_nccl(ncclCommFinalize(comm_), rank_, "ncclCommFinalize");
      wait_issued("ncclCommFinalize (flushing this rank's NCCL work)");
      ncclCommDestroy(comm_);
    } catch (const std::exception& error) {
      abort(std::string("finalizing failed: ") + error.what());  // frees it too
    }
  }
  if (stream_) cudaStreamDestroy(stream_);
  if (copy_stream_) cudaStreamDestroy(copy_stream_);
  if (previous >= 0) cudaSetDevice(previous);
}

void NcclCommunicator::check_usable() const {
  if (aborted_)
    throw CommError(prefix() + "the NCCL communicator was aborted (" + abort_reason_ +
                    "); it cannot be used again: start a new world");
}

void NcclCommunicator::abort(const std::string& why) {
  std::lock_guard lock(issue_mutex_);
  if (aborted_.exchange(true)) return;
  abort_reason_ = why;
  if (comm_) ncclCommAbort(comm_);
}

void NcclCommunicator::request_abort(int failed_rank, const std::string& why) {
  std::lock_guard lock(request_mutex_);
  failed_rank_ = failed_rank;
  failed_why_ = why;
  abort_requested_ = true;
}

void NcclCommunicator::check_progress(const std::string& what) {
  check_usable();
  if (abort_requested_) {
    std::string why;
    int failed = -1;
    {
      std::lock_guard lock(request_mutex_);
      why = failed_why_;
      failed = failed_rank_;
    }
    abort("rank " + std::to_string(failed) + " failed");
    throw PeerError(failed, prefix() + what + " stopped: rank " + std::to_string(failed) +
                                " failed: " + why);
  }
  ncclResult_t async = ncclSuccess;
  check_nccl(ncclCommGetAsyncError(comm_, &async), rank_, "ncclCommGetAsyncError");
  if (async == ncclSuccess || async == ncclInProgress) return;
  const std::string error = ncclGetErrorString(async);
  abort(what + ": " + error);
  check_nccl(async, rank_, what + " (the communicator is now aborted)");
}

void NcclCommunicator::wait_issued(const std::string& what) {
  poll(
      [this] {
        ncclResult_t async = ncclSuccess;
        ncclCommGetAsyncError(comm_, &async);
        // Success: done; InProgress: not yet; anything else: check_progress reports it.
        return async == ncclInProgress ? cudaErrorNotReady : cudaSuccess;
      },
      what, timeout_);
  check_progress(what);
}

void NcclCommunicator::wait_stream(const std::string& what) {
  poll([this] { return cudaStreamQuery(stream_); }, what, timeout_);
}

void NcclCommunicator::wait_event(cudaEvent_t event, const std::string& what,
                                  Duration timeout) {
  poll([event] { return cudaEventQuery(event); }, what, timeout);
}

template <typename Query>
void NcclCommunicator::poll(Query&& query, const std::string& what, Duration timeout) {
  check_usable();
  DeviceGuard on_device(device_, rank_);
  try {
    poll_until_done(query, rank_, timeout, what, [&] { check_progress(what); });
  } catch (const TimeoutError& expired) {
    // A kernel waiting for a peer that never comes would hold the GPU forever.
    abort(std::string("timed out: ") + expired.what());
    throw;
  }
}

}  // namespace ringlab::nccl
