// Host scratch memory kept for reuse between collectives.
//
// Why: a collective asks its transport for scratch on every call (a ring
// all-reduce of N bytes wants N/P of it). A block of a few MiB comes straight
// from mmap, and the kernel zeroes each of its pages on first touch, so fresh
// scratch on every call costs about as much as moving the same bytes over
// loopback TCP: a 2-rank 4 MiB all-reduce took twice as long with it
// (docs/benchmarks.md, "Measurements behind the code").
//
// The pool keeps the blocks its Buffers give back and hands out the smallest
// kept block that is large enough. Blocks of kSmallestPooled bytes and more
// are pooled, their capacity rounded up to a power of two so that a sweep of
// slightly different sizes reuses them; smaller requests are plain
// allocations (the heap serves them without faults). At most kMaxKept blocks
// and kMaxKeptBytes stay kept; beyond that the smallest are freed.
// Thread-safe: a Buffer may die on another thread than the one that took it,
// and after the pool itself (it then frees its block).
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "transport/transport.hpp"

namespace ringlab {

class ScratchPool : public std::enable_shared_from_this<ScratchPool> {
 public:
  static constexpr std::size_t kSmallestPooled = 64 * 1024;
  static constexpr std::size_t kMaxKept = 8;
  static constexpr std::size_t kMaxKeptBytes = std::size_t{512} << 20;

  static std::shared_ptr<ScratchPool> create() {
    return std::shared_ptr<ScratchPool>(new ScratchPool());
  }

  // bytes of uninitialized host memory.
  Buffer take(std::size_t bytes);

  // For tests: blocks kept now, and blocks allocated since creation.
  std::size_t kept_blocks() const;
  std::size_t allocated_blocks() const;

 private:
  struct Block {
    std::unique_ptr<std::byte[]> memory;
    std::size_t capacity = 0;
  };
  ScratchPool() = default;
  void give_back(Block block);

  mutable std::mutex mutex_;
  std::vector<Block> kept_;  // sorted by capacity, smallest first
  std::size_t kept_bytes_ = 0;
  std::size_t allocated_ = 0;
};

}  // namespace ringlab
