// The store's memory budget (StoreLimits::max_total_bytes): what the keys it
// holds cost, each at its real cost (its name and value, and
// kKeyOverheadBytes of bookkeeping), plus the request bodies being received.
// Memory is taken as bytes arrive (BudgetShare), never as a header claims.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "store/store.hpp"

namespace ringlab::store {

// What one key costs the store.
constexpr std::size_t key_cost(std::size_t key_bytes, std::size_t value_bytes) {
  return key_bytes + value_bytes + kKeyOverheadBytes;
}

class MemoryBudget {
 public:
  explicit MemoryBudget(std::size_t limit) : limit_(limit) {}

  std::size_t limit() const { return limit_; }
  std::size_t keys() const { return keys_; }
  // The keys held, at their cost (key_cost).
  std::size_t stored() const { return payload_ + keys_ * kKeyOverheadBytes; }
  // The request bodies being received.
  std::size_t receiving() const { return receiving_; }

  // Whether `more` bytes fit besides what is counted now, less `releasing`
  // bytes of what is being received (the request about to be answered).
  bool fits(std::size_t more, std::size_t releasing = 0) const {
    return stored() + receiving_ - releasing + more <= limit_;
  }
  // Takes bytes for a body being received: false, and nothing taken, if they
  // do not fit.
  bool take(std::size_t bytes);
  void give_back(std::size_t bytes) { receiving_ -= bytes; }

  void add_key(std::size_t key_bytes, std::size_t value_bytes);
  void remove_key(std::size_t key_bytes, std::size_t value_bytes);
  void replace_value(std::size_t old_bytes, std::size_t new_bytes);

  // Why `bytes` more do not fit: "the store is full: its 3 keys (921603
  // bytes of names and values, 480 of bookkeeping at 160 a key) and this
  // request (307209 bytes) would pass its limit of 1048576 bytes", `what`
  // naming what the bytes are for. `releasing`: bytes of what is being
  // received that are not counted (those of the request the bytes are for).
  std::string full_message(std::string_view what, std::size_t bytes,
                           std::size_t releasing = 0) const;

 private:
  std::size_t limit_;
  std::size_t keys_ = 0;
  std::size_t payload_ = 0;  // bytes of the keys' names and values
  std::size_t receiving_ = 0;
};

// The budget taken by one request body; given back when it goes.
class BudgetShare {
 public:
  explicit BudgetShare(MemoryBudget& budget) : budget_(&budget) {}
  BudgetShare(BudgetShare&& other) noexcept;
  BudgetShare& operator=(BudgetShare&&) = delete;
  BudgetShare(const BudgetShare&) = delete;
  ~BudgetShare() { release(); }

  // Takes `bytes` more: false, and nothing taken, if they do not fit.
  bool grow(std::size_t bytes);
  // Gives back all it took.
  void release();
  std::size_t bytes() const { return bytes_; }

 private:
  MemoryBudget* budget_;
  std::size_t bytes_ = 0;
};

}  // namespace ringlab::store
