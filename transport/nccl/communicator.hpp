// One rank's NCCL communicator: the ncclComm_t, its GPU, its stream, and the
// waits that never hang. The communicator is non-blocking (ncclConfig_t
// blocking = 0), so no NCCL call can block the host: every call returns at
// once and is then polled (ncclCommGetAsyncError) with a timeout. On timeout
// or error the communicator is aborted (ncclCommAbort), which is NCCL's only
// way to get a stuck GPU kernel off the device, and every later use throws.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <atomic>
#include <mutex>
#include <string>

#include "transport/transport.hpp"

namespace ringlab::nccl {

// The bytes of an ncclUniqueId, for sending through a store.
std::string encode_unique_id(const ncclUniqueId& id);
// Throws std::invalid_argument if `bytes` is not an encoded id (wrong length).
ncclUniqueId decode_unique_id(const std::string& bytes);
// ncclGetUniqueId, with errors as CommError. Rank 0 calls it once per world.
ncclUniqueId make_unique_id();

class NcclCommunicator {
 public:
  // Joins the world of `size` ranks identified by `id` as `rank`, on GPU
  // `device`. Every rank calls this with the same id (NCCL waits for all of
  // them, up to `timeout`). Throws std::invalid_argument for bad ranks/devices
  // and CommError/TimeoutError if NCCL fails or the others do not show up.
  NcclCommunicator(const ncclUniqueId& id, int rank, int size, int device,
                   Duration timeout = kDefaultTimeout);
  // Finalizes (waiting at most timeout()) and destroys; aborts instead if the
  // communicator failed or finalizing runs out of time.
  ~NcclCommunicator();
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int device() const { return device_; }
  ncclComm_t get() const { return comm_; }
  // This rank's NCCL calls, kernels and device-to-device copies run on this
  // one stream, in issue order (non-blocking: it neither waits for nor holds
  // back the legacy default stream). device_memory.hpp states the rule.
  cudaStream_t stream() const { return stream_; }
  // Copies between host and staging memory (staged_transport.hpp) run on
  // this second non-blocking stream, so that they never wait behind a group
  // of stream() that waits for a peer; stream() waits for them by event.
  cudaStream_t copy_stream() const { return copy_stream_; }
  Duration timeout() const { return timeout_; }
  void set_timeout(Duration timeout) { timeout_ = timeout; }

  // NCCL calls on one communicator must not interleave between threads (a
  // ProcessGroup's async worker and its caller may both issue): hold this
  // while issuing. Recursive, because a failing wait aborts under it.
  std::recursive_mutex& issue_mutex() { return issue_mutex_; }

  // Throws CommError if the communicator was aborted (names why).
  void check_usable() const;
  // After an NCCL call returned ncclInProgress: polls until it is done.
  void wait_issued(const std::string& what);
  // Polls until everything enqueued on stream() so far has finished.
  void wait_stream(const std::string& what);
  // Polls until `event` (recorded on stream()) has happened, at most `timeout`.
  void wait_event(cudaEvent_t event, const std::string& what, Duration timeout);
  // One non-blocking look: throws (and aborts) if NCCL reported an error or an
  // abort was requested. `what` names the operation in the message.
  void check_progress(const std::string& what);

  // Another thread (a runner whose other rank failed) asks this rank to stop:
  // its next poll aborts the communicator and throws PeerError(failed_rank).
  void request_abort(int failed_rank, const std::string& why);
  // Aborts now (idempotent). Later calls throw CommError naming `why`.
  void abort(const std::string& why);

 private:
  template <typename Query>
  void poll(Query&& query, const std::string& what, Duration timeout);
  std::string prefix() const { return "rank " + std::to_string(rank_) + ": "; }

  int rank_;
  int size_;
  int device_;
  Duration timeout_;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cudaStream_t copy_stream_ = nullptr;
  std::recursive_mutex issue_mutex_;
  std::atomic<bool> aborted_{false};
  std::string abort_reason_;
  std::atomic<bool> abort_requested_{false};
  int failed_rank_ = -1;
  std::string failed_why_;
  std::mutex request_mutex_;
};

}  // namespace ringlab::nccl
