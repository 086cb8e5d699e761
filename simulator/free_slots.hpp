// Reusing the slots of a vector whose entries come and go (the receives that
// wait for their message). Internal to simulator/: the record builder and the
// message-level path keep millions of short-lived receives in a few slots.
#pragma once

#include <cstdint>
#include <vector>

namespace ringlab::sim::detail {

// A slot of `items` for a new entry: one that was given back to `free` (its
// old value still there, for the caller to overwrite), else a new one at the end.
template <typename T>
std::uint32_t take_slot(std::vector<T>& items, std::vector<std::uint32_t>& free) {
  if (!free.empty()) {
    const std::uint32_t index = free.back();
    free.pop_back();
    return index;
  }
  items.emplace_back();
  return static_cast<std::uint32_t>(items.size() - 1);
}

}  // namespace ringlab::sim::detail
