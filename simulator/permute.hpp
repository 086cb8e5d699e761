// Putting a big array in a new order in place. Internal to simulator/ (the
// record builder and the message-level path sort millions of messages by
// step without a second copy of them).
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace ringlab::sim::detail {

// Moves items[i] to position to[i] (a permutation of 0..n-1), in place.
// Following the permutation's cycles directly jumps all over hundreds of
// megabytes (a ring's messages are made rank by rank, kept step by step), so
// first an in-place radix pass on the top bits of the destination moves
// every item into its bucket (1024 buckets, each filled as a sequential
// stream), and then the cycles are followed inside each bucket, which fits
// in cache.
template <typename T>
void permute_in_place(std::vector<T>& items, std::vector<std::uint32_t>& to) {
  const std::size_t n = items.size();
  constexpr std::size_t kBuckets = 1024;
  int shift = 0;
  while ((kBuckets << shift) < n) ++shift;
  if (shift > 0) {
    std::vector<std::size_t> head(kBuckets + 1), end(kBuckets);
    for (std::size_t b = 0; b <= kBuckets; ++b) head[b] = std::min(n, b << shift);
    for (std::size_t b = 0; b < kBuckets; ++b) end[b] = head[b + 1];
    for (std::size_t b = 0; b < kBuckets; ++b) {
      while (head[b] < end[b]) {
        const std::size_t i = head[b];
        const std::size_t target = to[i] >> shift;
        if (target == b) {
          ++head[b];
          continue;
        }
        const std::size_t j = head[target]++;
        std::swap(items[i], items[j]);
        std::swap(to[i], to[j]);
      }
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    while (to[i] != i) {
      const std::uint32_t j = to[i];
      std::swap(items[i], items[j]);
      std::swap(to[i], to[j]);
    }
  }
}

}  // namespace ringlab::sim::detail
