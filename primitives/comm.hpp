// What one collective call sees: its rank, the world size, a private tag space
// (so messages of consecutive collectives never mix), and the transport's
// memory operations. Algorithms in primitives/ are written only against this.
//
// The rule every algorithm keeps, so that it runs on every transport, NCCL's
// included (NCCL's point-to-point rules; transport/nccl_rules/ follows them on
// CPU threads, and the conformance suite runs every algorithm there):
//  1. Between two ranks, messages meet in the order they are posted: rank a's
//     k-th send to b goes to b's k-th receive from a, whatever their tags.
//     Tags only name messages in errors. So the two sides post the messages
//     between them in the same order, with the same sizes.
//  2. Nothing moves before its rank waits: isend/irecv only queue, and a wait
//     (or a test) launches everything the rank has queued as one group, whose
//     sends and receives progress together. A send may not finish before its
//     receive runs: count on no buffering.
//  3. A rank's groups run one after another. A group that holds a receive
//     finishes only when the peer sends, so everything launched after it
//     waits for that too: post all of a step's sends and receives, then wait
//     (sendrecv does), and never wait on a send whose receiver first waits
//     for something this rank posts later.
//  4. Every isend/irecv is waited (Comm::wait) before the algorithm returns.
//     A collective checks it (Comm::check_finished) and throws a
//     std::logic_error naming itself otherwise.
//  5. A buffer being sent is not written, and a buffer being received is not
//     read, until its request has been waited for.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "ops/dtype.hpp"
#include "ops/reduce_op.hpp"
#include "transport/transport.hpp"

namespace ringlab {

// A typed range of elements in transport memory (host or device). Algorithms
// index in elements; bytes() is what travels.
struct Elems {
  std::byte* ptr = nullptr;
  std::size_t count = 0;
  DType dtype = DType::Float32;

  Elems slice(std::size_t offset, std::size_t n) const {
    return {ptr + offset * element_size(dtype), n, dtype};
  }
  MutBytes bytes() const { return {ptr, count * element_size(dtype)}; }
  std::size_t nbytes() const { return count * element_size(dtype); }
};

// A block of a buffer: elements [offset, offset + count).
struct Chunk {
  std::size_t offset = 0;
  std::size_t count = 0;
  std::size_t end() const { return offset + count; }
  bool operator==(const Chunk&) const = default;
};

// Splits count elements into parts near-equal consecutive chunks; the first
// count % parts chunks get one element more. Some may be empty.
std::vector<Chunk> split_even(std::size_t count, int parts);
// parts chunks of block elements each (scatter/gather/all_gather layouts).
std::vector<Chunk> equal_blocks(std::size_t block, int parts);
// The chunk that covers chunks [first, last) (they must be consecutive).
Chunk span_of(std::span<const Chunk> chunks, int first, int last);

// Largest power of two <= n (n >= 1).
int floor_pow2(int n);

namespace detail {
struct RequestLedger;
}

class Comm {
 public:
  // sequence numbers the collective; every rank must call collectives in the
  // same order so the sequence numbers agree.
  Comm(Transport& transport, std::uint64_t sequence);

  int rank() const { return rank_; }
  int size() const { return size_; }
  Transport& transport() { return transport_; }

  // Tag of this collective's step-th message exchange (step < 2^20).
  Tag tag(unsigned step = 0) const;

  void send(int dst, Elems data, unsigned step = 0);
  void recv(int src, Elems data, unsigned step = 0);
  void sendrecv(int dst, Elems send_data, int src, Elems recv_data, unsigned step = 0);
  // The requests are tracked: each must be waited (or test() true) before
  // the collective ends (rule 4 above).
  std::unique_ptr<Request> isend(int dst, Elems data, unsigned step = 0);
  std::unique_ptr<Request> irecv(int src, Elems data, unsigned step = 0);
  void wait(Request& request);

  // Throws std::logic_error ("rank 2: all_gather (ring) returned with ...")
  // if a request made by isend/irecv was not waited for, or was dropped
  // unfinished. `collective` and `algorithm` name the call in the message.
  void check_finished(std::string_view collective, std::string_view algorithm = {}) const;

  // Scratch space in transport memory, freed with the returned Buffer.
  struct Scratch {
    Buffer buffer;
    Elems elems;
  };
  Scratch scratch(std::size_t count, DType dtype);

  void copy(Elems dst, Elems src);                   // dst.count elements
  void reduce(ReduceOp op, Elems acc, Elems in);     // acc = acc op in

 private:
  std::unique_ptr<Request> tracked(std::unique_ptr<Request> request, bool is_send, int peer,
                                   unsigned step);

  Transport& transport_;
  int rank_;
  int size_;
  Tag base_;
  std::shared_ptr<detail::RequestLedger> ledger_;  // the requests not yet finished
};

}  // namespace ringlab
