// What one collective call sees: its rank, the world size, a private tag space
// (so messages of consecutive collectives never mix), and the transport's
// memory operations. Algorithms in primitives/ are written only against this.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
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
  std::unique_ptr<Request> isend(int dst, Elems data, unsigned step = 0);
  std::unique_ptr<Request> irecv(int src, Elems data, unsigned step = 0);
  void wait(Request& request);

  // Scratch space in transport memory, freed with the returned Buffer.
  struct Scratch {
    Buffer buffer;
    Elems elems;
  };
  Scratch scratch(std::size_t count, DType dtype);

  void copy(Elems dst, Elems src);                   // dst.count elements
  void reduce(ReduceOp op, Elems acc, Elems in);     // acc = acc op in

 private:
  Transport& transport_;
  int rank_;
  int size_;
  Tag base_;
};

}  // namespace ringlab
