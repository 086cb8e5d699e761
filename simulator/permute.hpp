// Putting a big array in a new order in place. Internal to simulator/ (the
// record builder and the message-level path sort millions of messages by
// step without a second copy of them).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
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

// A stable counting sort by step (items have a `step` from 0 to last):
// returns each item's position in step order, send order kept within a step,
// and sets begin[s] to the first position of step s (last + 2 entries, the
// final one the item count).
template <typename T, typename Step>
std::vector<std::uint32_t> places_by_step(const std::vector<T>& items, Step last,
                                          std::vector<std::size_t>& begin) {
  begin.assign(static_cast<std::size_t>(last) + 2, 0);
  for (const T& item : items) ++begin[item.step + 1];
  std::partial_sum(begin.begin(), begin.end(), begin.begin());
  std::vector<std::uint32_t> place(items.size());
  std::vector<std::size_t> next(begin.begin(), begin.end() - 1);
  for (std::size_t i = 0; i < items.size(); ++i)
    place[i] = static_cast<std::uint32_t>(next[items[i].step]++);
  return place;
}

}  // namespace ringlab::sim::detail
