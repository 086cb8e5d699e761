#include "store/memory_budget.hpp"

#include <utility>

namespace ringlab::store {

bool MemoryBudget::take(std::size_t bytes) {
  if (!fits(bytes)) return false;
  receiving_ += bytes;
  return true;
}

void MemoryBudget::add_key(std::size_t key_bytes, std::size_t value_bytes) {
  ++keys_;
  payload_ += key_bytes + value_bytes;
}

void MemoryBudget::remove_key(std::size_t key_bytes, std::size_t value_bytes) {
  --keys_;
  payload_ -= key_bytes + value_bytes;
}

void MemoryBudget::replace_value(std::size_t old_bytes, std::size_t new_bytes) {
  payload_ = payload_ - old_bytes + new_bytes;
}

std::string MemoryBudget::full_message(std::string_view what, std::size_t bytes,
                                       std::size_t releasing) const {
  const std::string keys = std::to_string(keys_) + (keys_ == 1 ? " key" : " keys");
  std::string others;
  if (receiving_ > releasing)
    others = ", the requests being received (" + std::to_string(receiving_ - releasing) + " bytes)";
  return "the store is full: its " + keys + " (" + std::to_string(payload_) +
         " bytes of names and values, " + std::to_string(keys_ * kKeyOverheadBytes) +
         " of bookkeeping at " + std::to_string(kKeyOverheadBytes) + " a key)" + others + " and " +
         std::string(what) + " (" + std::to_string(bytes) + " bytes) would pass its limit of " +
         std::to_string(limit_) + " bytes";
}

BudgetShare::BudgetShare(BudgetShare&& other) noexcept
    : budget_(other.budget_), bytes_(std::exchange(other.bytes_, 0)) {}

bool BudgetShare::grow(std::size_t bytes) {
  if (!budget_->take(bytes)) return false;
  bytes_ += bytes;
  return true;
}

void BudgetShare::release() { budget_->give_back(std::exchange(bytes_, 0)); }

}  // namespace ringlab::store
