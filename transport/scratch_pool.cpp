#include "transport/scratch_pool.hpp"

#include <algorithm>
#include <bit>

namespace ringlab {

Buffer ScratchPool::take(std::size_t bytes) {
  if (bytes < kSmallestPooled)
    return Buffer{std::make_shared_for_overwrite<std::byte[]>(bytes), bytes};
  Block block;
  {
    std::lock_guard lock(mutex_);
    auto fits = std::find_if(kept_.begin(), kept_.end(),
                             [&](const Block& b) { return b.capacity >= bytes; });
    if (fits != kept_.end()) {
      block = std::move(*fits);
      kept_.erase(fits);
      kept_bytes_ -= block.capacity;
    } else {
      ++allocated_;
    }
  }
  if (!block.memory) {
    block.capacity = std::bit_ceil(bytes);
    block.memory = std::make_unique_for_overwrite<std::byte[]>(block.capacity);
  }
  std::byte* memory = block.memory.release();
  // The deleter hands the block back while the pool lives, else frees it.
  std::shared_ptr<std::byte[]> storage(
      memory, [pool = weak_from_this(), capacity = block.capacity](std::byte* p) {
        Block returned{std::unique_ptr<std::byte[]>(p), capacity};
        if (auto alive = pool.lock()) alive->give_back(std::move(returned));
      });
  return Buffer{std::move(storage), bytes};
}

void ScratchPool::give_back(Block block) {
  std::vector<Block> evicted;  // freed after the lock is released
  std::lock_guard lock(mutex_);
  kept_bytes_ += block.capacity;
  auto at = std::upper_bound(kept_.begin(), kept_.end(), block.capacity,
                             [](std::size_t c, const Block& b) { return c < b.capacity; });
  kept_.insert(at, std::move(block));
  while (kept_.size() > kMaxKept || kept_bytes_ > kMaxKeptBytes) {
    kept_bytes_ -= kept_.front().capacity;
    evicted.push_back(std::move(kept_.front()));
    kept_.erase(kept_.begin());
  }
}

std::size_t ScratchPool::kept_blocks() const {
  std::lock_guard lock(mutex_);
  return kept_.size();
}

std::size_t ScratchPool::allocated_blocks() const {
  std::lock_guard lock(mutex_);
  return allocated_;
}

}  // namespace ringlab
