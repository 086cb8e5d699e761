// The scratch pool behind Transport::allocate: blocks come back for reuse,
// the smallest that fits is chosen, small requests bypass it, the kept memory
// is bounded, and a Buffer may outlive its pool.
#include <doctest/doctest.h>

#include <cstring>
#include <thread>
#include <vector>

#include "transport/scratch_pool.hpp"

using namespace ringlab;

namespace {
constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = 1024 * 1024;
}  // namespace

TEST_CASE("a freed block serves the next request that fits, at the same address") {
  auto pool = ScratchPool::create();
  std::byte* first = nullptr;
  {
    Buffer a = pool->take(3 * kMiB);
    CHECK(a.size == 3 * kMiB);
    first = a.storage.get();
    std::memset(first, 1, a.size);  // all of it is usable
  }
  CHECK(pool->kept_blocks() == 1);
  Buffer b = pool->take(4 * kMiB);  // 3 MiB was rounded up to 4 MiB
  CHECK(b.storage.get() == first);
  CHECK(b.size == 4 * kMiB);
  CHECK(pool->kept_blocks() == 0);
  CHECK(pool->allocated_blocks() == 1);
  Buffer c = pool->take(4 * kMiB);  // the block is in use: a new one
  CHECK(c.storage.get() != first);
  CHECK(pool->allocated_blocks() == 2);
}

TEST_CASE("the smallest kept block that fits is chosen") {
  auto pool = ScratchPool::create();
  std::byte* small = nullptr;
  std::byte* large = nullptr;
  {
    Buffer a = pool->take(256 * kKiB);
    Buffer b = pool->take(16 * kMiB);
    small = a.storage.get();
    large = b.storage.get();
  }
  CHECK(pool->kept_blocks() == 2);
  Buffer c = pool->take(200 * kKiB);
  CHECK(c.storage.get() == small);
  Buffer d = pool->take(300 * kKiB);  // too big for the 256 KiB block
  CHECK(d.storage.get() == large);
  CHECK(pool->allocated_blocks() == 2);
}

TEST_CASE("requests below the pooled size are plain allocations") {
  auto pool = ScratchPool::create();
  { Buffer a = pool->take(ScratchPool::kSmallestPooled - 1); }
  { Buffer empty = pool->take(0); }
  CHECK(pool->kept_blocks() == 0);
  CHECK(pool->allocated_blocks() == 0);
}

TEST_CASE("at most kMaxKept blocks stay kept; the smallest go first") {
  auto pool = ScratchPool::create();
  // Requests of 128 KiB * (i + 1), i = 0 .. kMaxKept + 2, kept as powers of
  // two: 128K, 256K, 512K, 512K, 1M, ... Freed in order i = 0, 1, 2, ...
  std::vector<Buffer> buffers;
  for (std::size_t i = 0; i < ScratchPool::kMaxKept + 3; ++i)
    buffers.push_back(pool->take((i + 1) * 128 * kKiB));
  std::byte* fourth = buffers[3].storage.get();  // 512 KiB, the second of that size
  buffers.clear();
  CHECK(pool->kept_blocks() == ScratchPool::kMaxKept);
  // The three smallest (128 KiB, 256 KiB, the first 512 KiB) were freed, so
  // the smallest block left is the fourth request's.
  Buffer small = pool->take(100 * kKiB);
  CHECK(small.storage.get() == fourth);
  CHECK(pool->allocated_blocks() == ScratchPool::kMaxKept + 3);
}

TEST_CASE("kept memory stays under kMaxKeptBytes") {
  auto pool = ScratchPool::create();
  const std::size_t block = ScratchPool::kMaxKeptBytes / 2;
  {
    Buffer a = pool->take(block);
    Buffer b = pool->take(block);
    Buffer c = pool->take(block);
  }
  CHECK(pool->kept_blocks() == 2);
}

TEST_CASE("a buffer may outlive its pool, and die on another thread") {
  Buffer survivor;
  {
    auto pool = ScratchPool::create();
    survivor = pool->take(kMiB);
  }
  std::memset(survivor.storage.get(), 7, survivor.size);
  std::thread([b = std::move(survivor)]() mutable { b = Buffer{}; }).join();

  auto pool = ScratchPool::create();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        Buffer b = pool->take(kMiB);
        b.storage.get()[0] = std::byte{1};
      }
    });
  for (auto& t : threads) t.join();
  CHECK(pool->kept_blocks() >= 1);
  CHECK(pool->kept_blocks() <= 4);
  CHECK(pool->allocated_blocks() <= 4);
}
