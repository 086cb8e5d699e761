#include "transport/nccl/cuda_check.hpp"

#include <stdexcept>

namespace ringlab::nccl {

namespace {
std::string who(int rank) { return rank >= 0 ? "rank " + std::to_string(rank) + ": " : ""; }
}  // namespace

void check_cuda(cudaError_t status, int rank, const std::string& what) {
  if (status == cudaSuccess) return;
  // Clear the sticky "last error" so a later, unrelated call does not report it.
  cudaGetLastError();
  throw CommError(who(rank) + what + ": " + cudaGetErrorString(status) + " (" + cudaGetErrorName(status) + ")");
}

void check_nccl(ncclResult_t status, int rank, const std::string& what) {
  if (status == ncclSuccess || status == ncclInProgress) return;
  std::string message = who(rank) + what + ": " + ncclGetErrorString(status);
  // ncclGetLastError(NULL) is the thread's last error in NCCL's own words.
  if (const char* detail = ncclGetLastError(nullptr); detail && *detail)
    message += std::string(" (") + detail + ")";
  throw CommError(message);
}

int visible_gpu_count(std::string* why) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    if (why) *why = std::string(cudaGetErrorString(status)) + " (" + cudaGetErrorName(status) + ")";
    return -1;
  }
  if (count == 0 && why) *why = "CUDA reports no device";
  return count;
}

void require_gpus_for_ranks(int ranks) {
  if (ranks <= 0) return;  // nothing to place
  std::string why;
  const int gpus = visible_gpu_count(&why);
  if (gpus >= ranks) return;
  std::string message = "the nccl backend runs one rank per GPU (NCCL refuses two ranks on one "
                        "device), and " + std::to_string(ranks) + " ranks were asked for, but ";
  if (gpus <= 0)
    message += "this machine shows no GPU: " + why +
               ". Use --backend inproc (or tcp) here, or run on a machine with a GPU";
  else
    message += "this machine shows only " + std::to_string(gpus) + " GPU" +
               (gpus == 1 ? "" : "s") + " (CUDA_VISIBLE_DEVICES limits them): ask for at most " +
               std::to_string(gpus) + " ranks, or use --backend inproc for more";
  throw std::invalid_argument(message);
}

DeviceGuard::DeviceGuard(int device, int rank) {
  check_cuda(cudaGetDevice(&previous_), rank, "cudaGetDevice");
  if (previous_ != device)
    check_cuda(cudaSetDevice(device), rank, "cudaSetDevice(" + std::to_string(device) + ")");
}

DeviceGuard::~DeviceGuard() {
  int current = -1;
  if (cudaGetDevice(&current) == cudaSuccess && current != previous_) cudaSetDevice(previous_);
}

}  // namespace ringlab::nccl
