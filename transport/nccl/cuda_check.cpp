#include "transport/nccl/cuda_check.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
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

namespace {
std::atomic<bool> cuda_started{false};
}  // namespace

bool cuda_started_here() { return cuda_started; }

int visible_gpu_count(std::string* why) {
  cuda_started = true;
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

int gpu_count_without_starting_cuda(std::string* why) {
  if (cuda_started) return visible_gpu_count(why);
  int channel[2];
  if (::pipe2(channel, O_CLOEXEC) != 0) return visible_gpu_count(why);
  std::fflush(nullptr);  // nothing buffered is written twice
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(channel[0]);
    ::close(channel[1]);
    return visible_gpu_count(why);
  }
  if (child == 0) {
    ::close(channel[0]);
    std::string reason;
    const int count = visible_gpu_count(&reason);
    const std::string answer = std::to_string(count) + "\n" + reason;
    [[maybe_unused]] const ssize_t written = ::write(channel[1], answer.data(), answer.size());
    ::_exit(0);
  }
  ::close(channel[1]);
  std::string answer;
  char chunk[512];
  pollfd readable{channel[0], POLLIN, 0};
  // A driver that does not answer within 30 s counts as no GPU.
  while (::poll(&readable, 1, 30000) > 0) {
    const ssize_t n = ::read(channel[0], chunk, sizeof chunk);
    if (n <= 0) break;
    answer.append(chunk, static_cast<std::size_t>(n));
  }
  ::close(channel[0]);
  ::kill(child, SIGKILL);  // gone already, unless it hung
  ::waitpid(child, nullptr, 0);
  const std::size_t newline = answer.find('\n');
  if (newline == std::string::npos) {
    if (why) *why = "counting the GPUs in a child process gave no answer";
    return -1;
  }
  if (why) *why = answer.substr(newline + 1);
  return std::atoi(answer.substr(0, newline).c_str());
}

void require_gpus_for_ranks(int ranks) {
  if (ranks <= 0) return;  // nothing to place
  std::string why;
  const int gpus = visible_gpu_count(&why);
  if (gpus >= ranks) return;
  std::string message;
  if (gpus <= 0)
    message = "the nccl backend needs a GPU, and " + std::to_string(ranks) +
              " ranks were asked for, but this machine shows no GPU: " + why +
              ". Use --backend inproc or tcp here (nccl_rules for NCCL's rules without a GPU), "
              "or run on a machine with a GPU";
  else
    message = "ranks as threads take one GPU each (NCCL refuses two ranks of one host on one "
              "device), and " + std::to_string(ranks) + " ranks were asked for, but this machine "
              "shows only " + std::to_string(gpus) + " GPU" + (gpus == 1 ? "" : "s") +
              " (CUDA_VISIBLE_DEVICES limits them): ask for at most " + std::to_string(gpus) +
              " ranks, or run them as processes (--backend nccl does, by itself)";
  throw std::invalid_argument(message);
}

DeviceGuard::DeviceGuard(int device, int rank) {
  cuda_started = true;
  check_cuda(cudaGetDevice(&previous_), rank, "cudaGetDevice");
  if (previous_ != device)
    check_cuda(cudaSetDevice(device), rank, "cudaSetDevice(" + std::to_string(device) + ")");
}

DeviceGuard::~DeviceGuard() {
  int current = -1;
  if (cudaGetDevice(&current) == cudaSuccess && current != previous_) cudaSetDevice(previous_);
}

}  // namespace ringlab::nccl
