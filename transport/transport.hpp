// The point-to-point interface every collective is written against.
//
// A Transport connects one rank to the others of its world: tagged send/recv
// of byte ranges, non-blocking isend/irecv whose Request is waited on with a
// timeout, and a combined sendrecv that progresses both directions at once (so
// a ring where everyone sends first never deadlocks). It also owns the memory
// the algorithms work in (host memory here; GPU memory on the NCCL path), so
// the algorithms copy and reduce only through it and run unchanged on every
// backend. Implementations: transport/inproc (threads), transport/tcp
// (processes over TCP), simulator/ (fibers, recording), transport/nccl.
//
// The contract, checked for every transport by one conformance suite
// (tests/test_transport_conformance.cpp):
//  - a message goes to the oldest receive posted for its (source, tag); the
//    messages of one (source, tag) arrive in the order they were sent; the
//    receive may be posted before or after the message arrives, and tags may
//    be received in another order than they were sent;
//  - zero-length messages are messages like any other;
//  - the receive buffer's size is the expected size: a message of another
//    size fails that receive with a CommError naming both ranks and both
//    sizes (size_mismatch_message), and the next message still arrives;
//  - a wait that runs out of time throws TimeoutError (timeout_message) and
//    withdraws its receive, so a later message goes to a later receive;
//  - a receive from any source (irecv's src = kAnySource, where
//    receives_from_any_source()) takes the oldest message of its tag from
//    whichever rank, in turn with the receives posted for that rank: a
//    message goes to the oldest receive it matches. Request::source() then
//    says who sent it;
//  - when a rank fails, every wait of every other rank (including waits on
//    ranks that are still alive) fails with a PeerError naming it, long
//    before the timeout.
// transport/matcher.hpp matches messages to receives this way for every
// transport that keeps the contract. NCCL cannot do all of that (it has no
// tags, cannot see a size mismatch and cannot receive from any source); transport/nccl/nccl_transport.hpp says what it does instead,
// and its binding of the suite declares exactly those exceptions. A new
// transport is done when it passes the suite: add a binding
// (tests/conformance_<name>.cpp, one function that starts a world of its
// ranks) and a line in tests/transport.cmake.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "ops/comm_error.hpp"  // Duration, kDefaultTimeout, CommError, TimeoutError
#include "ops/dtype.hpp"
#include "ops/reduce_op.hpp"

namespace ringlab {

using Tag = std::uint64_t;
// Reserved for the transport's own setup messages (the TCP ranks' agreement,
// transport/tcp/crowding.hpp): a collective sequence number no Comm reaches.
inline constexpr Tag kSetupTag = ~Tag{0};
// irecv's src for a receive from whichever rank sends first (MPI's
// MPI_ANY_SOURCE; torch.distributed's recv without src). Only where the
// transport's receives_from_any_source(); Request::source() tells the sender.
inline constexpr int kAnySource = -1;
using MutBytes = std::span<std::byte>;
using ConstBytes = std::span<const std::byte>;

// A peer is gone (its process died, its connection closed, its thread failed).
class PeerError : public CommError {
 public:
  PeerError(int peer, const std::string& what) : CommError(what), peer_(peer) {}
  int peer() const { return peer_; }

 private:
  int peer_;
};

// "tag 7" for user tags, "collective #12 step 3" for tags made by Comm.
std::string describe_tag(Tag tag);
// "rank 3", or "any rank" for kAnySource.
std::string describe_source(int src);
// The standard timeout message: names both ranks, the direction and the tag.
std::string timeout_message(int rank, const char* verb, int peer, Tag tag, Duration timeout);
// The standard size-mismatch message: rank expected `expected` bytes from src
// but the message has `got`.
std::string size_mismatch_message(int rank, int src, Tag tag, std::size_t expected,
                                  std::size_t got);
// The standard dtype-mismatch message: rank expected `expected` elements
// from src but the message holds `got`.
std::string dtype_mismatch_message(int rank, int src, Tag tag, DType expected, DType got);
// Why rank stopped waiting for peer (tag): failed_rank failed.
std::string peer_failed_message(int rank, int peer, Tag tag, int failed_rank);

// A pending isend/irecv.
class Request {
 public:
  virtual ~Request() = default;
  // Blocks until done; throws TimeoutError (naming both ranks and the tag) or
  // another CommError.
  virtual void wait(Duration timeout) = 0;
  // True once wait() would return immediately.
  virtual bool test() = 0;
  // A receive's sender, once wait() returned or test() said true: the rank
  // its message came from (for a receive from kAnySource, whichever it was).
  // -1 for a send, a receive not complete, or a transport that cannot
  // receive from any source.
  virtual int source() const { return -1; }
};

// A request that is already complete (an eager send, say, or a receive whose
// message was there: `source` is its sender).
class CompletedRequest final : public Request {
 public:
  explicit CompletedRequest(int source = -1) : source_(source) {}
  void wait(Duration) override {}
  bool test() override { return true; }
  int source() const override { return source_; }

 private:
  int source_;
};

// A request that already failed (a size mismatch found when it was posted, a
// world already broken): wait() throws its error, a PeerError naming
// failed_peer when that is >= 0, else a CommError.
class FailedRequest final : public Request {
 public:
  explicit FailedRequest(std::string error, int failed_peer = -1)
      : error_(std::move(error)), failed_peer_(failed_peer) {}
  void wait(Duration) override;
  bool test() override { return true; }

 private:
  std::string error_;
  int failed_peer_;
};

enum class MemoryKind { Host, Device };

class ScratchPool;

// Scratch memory owned by a transport. Host memory by default.
struct Buffer {
  std::shared_ptr<std::byte[]> storage;
  std::size_t size = 0;
  MutBytes span() const { return {storage.get(), size}; }
};

class Transport {
 public:
  Transport();
  virtual ~Transport();

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string_view name() const = 0;

  // The receive buffer's size is the expected message size: a message of
  // another size is a CommError naming both ranks (tensors that should match
  // across ranks but do not end up here).
  virtual std::unique_ptr<Request> isend(int dst, Tag tag, ConstBytes data) = 0;
  virtual std::unique_ptr<Request> irecv(int src, Tag tag, MutBytes data) = 0;

  // The same for a message of `dtype` elements (ProcessGroup's send and recv,
  // whose tensors have a dtype; the algorithms' messages are bytes). Where a
  // transport's messages say what they hold (tcp's frames), a receive of
  // another dtype fails as one of another size does, with
  // dtype_mismatch_message; the default ignores the dtype.
  virtual std::unique_ptr<Request> isend_typed(int dst, Tag tag, ConstBytes data, DType dtype);
  virtual std::unique_ptr<Request> irecv_typed(int src, Tag tag, MutBytes data, DType dtype);

  // Sends to dst while receiving from src. The default posts both and waits.
  virtual void sendrecv(int dst, Tag send_tag, ConstBytes send_data, int src, Tag recv_tag,
                        MutBytes recv_data);

  void send(int dst, Tag tag, ConstBytes data);
  void recv(int src, Tag tag, MutBytes data);

  // Memory. Host by default; the NCCL transport overrides these for GPU memory.
  // Host scratch comes from a pool that keeps blocks for the next collective
  // (transport/scratch_pool.hpp says why); see also the protected constructor.
  virtual MemoryKind memory() const { return MemoryKind::Host; }
  virtual Buffer allocate(std::size_t bytes);
  virtual void copy(MutBytes dst, ConstBytes src);
  // acc = acc op in, element-wise over acc.size() / element_size(dtype) elements.
  virtual void reduce(DType dtype, ReduceOp op, MutBytes acc, ConstBytes in);
  virtual void divide(DType dtype, MutBytes data, int world_size);

  // Whether algorithms should send fewer messages rather than take fewer
  // rounds. True where every message costs processor time that the ranks
  // compete for: TCP ranks on a host that runs more of them than it has
  // processors (each message is a sendmsg, a look at the socket and a read,
  // and four ranks on two cores queue for the cores). Every rank gets the same
  // answer (the TCP ranks agree on it when the transport is made), so
  // algorithms may choose by it. False by default: the in-process transport's
  // message is a copy, and its rounds (wake-ups) cost more than its messages.
  virtual bool prefers_fewer_messages() const { return false; }

  // Whether a rank's messages travel while it computes: where each rank has
  // a processor to spare (the TCP transport's writer threads), an algorithm
  // may post its next message before it reduces the last one
  // (sendrecv_reduce's pipelined segments). False by default: without a
  // processor to spare the pipeline only adds waits (2 TCP ranks on 2 cores
  // were about 5 % slower at 8 to 32 MiB; docs/benchmarks.md). Ranks need not
  // agree on it: both ways send the same messages in the same order.
  virtual bool overlaps_transfers() const { return false; }

  // Whether irecv takes src = kAnySource. False by default: a wrapping
  // transport, NCCL and nccl_rules cannot (NCCL posts every receive for one
  // sender); the transports whose matching is transport/matcher.hpp's can.
  virtual bool receives_from_any_source() const { return false; }

  Duration timeout() const { return timeout_; }
  void set_timeout(Duration timeout) { timeout_ = timeout; }

  // Throws std::invalid_argument if peer is not a rank of this world.
  void check_peer(int peer, const char* what) const;
  // A receive's src: as check_peer, and kAnySource where the transport
  // receives from any source (refused, saying so, where it does not).
  void check_source(int src, const char* what) const;

 protected:
  // A transport that keeps other host memory of its own (the TCP engine's
  // early messages) passes its pool here, so one bound covers both.
  explicit Transport(std::shared_ptr<ScratchPool> scratch_pool);

 private:
  Duration timeout_ = kDefaultTimeout;
  std::shared_ptr<ScratchPool> scratch_pool_;
};

// The arguments of a world of threads (InprocWorld, NcclRulesWorld, the
// simulator's FiberWorld): std::invalid_argument where they make no world.
inline void check_world_size(int size) {
  if (size < 1)
    throw std::invalid_argument("world size must be at least 1, got " + std::to_string(size));
}
inline void check_rank_in_world(int rank, int size) {
  if (rank < 0 || rank >= size)
    throw std::invalid_argument("rank " + std::to_string(rank) + " is not in 0.." +
                                std::to_string(size - 1));
}

}  // namespace ringlab
