#include "store/budgeted_body.hpp"

#include <algorithm>
#include <new>

#include "store/protocol.hpp"

namespace ringlab::store {

namespace {
// A refused body is read this much at a time into memory the store keeps.
constexpr std::size_t kSinkBytes = 16 << 10;

std::string out_of_memory(std::size_t length) {
  return "the store is out of memory: it could not take the " + std::to_string(length) +
         " bytes of this request";
}
}  // namespace

BudgetedBody::BudgetedBody(MemoryBudget& budget, std::size_t length, std::string refusal)
    : budget_(budget), length_(length), refused_(std::move(refusal)), share_(budget) {
  if (refused_.empty() && length_ > kUncounted && !budget_.fits(length_))
    refused_ = budget_.full_message("this request", length_);
}

std::span<std::byte> BudgetedBody::next() {
  const std::size_t want = std::min(kChunk, length_ - received_);
  if (refused_.empty()) make_room(want);
  if (!refused_.empty()) {
    sink_.resize(std::min(want, kSinkBytes));
    return sink_;
  }
  body_.resize(received_ + want);  // within the capacity make_room took
  return {body_.data() + received_, want};
}

void BudgetedBody::got(std::size_t n) {
  received_ += n;
  if (refused_.empty()) body_.resize(received_);
}

// Grows the body's capacity to hold `want` more bytes, taking the growth
// from the budget first; refuses the body if either says no.
void BudgetedBody::make_room(std::size_t want) {
  if (received_ + want <= body_.capacity()) return;
  const std::size_t capacity =
      length_ <= kUncounted ? length_
                            : std::min(length_, std::max(received_ + want, 2 * body_.capacity()));
  if (length_ > kUncounted && !share_.grow(capacity - body_.capacity()))
    return refuse(budget_.full_message("this request", length_, share_.bytes()));
  try {
    body_.reserve(capacity);
  } catch (const std::bad_alloc&) {
    refuse(out_of_memory(length_));
  }
}

void BudgetedBody::refuse(std::string why) {
  refused_ = std::move(why);
  body_ = {};
  share_.release();
}

std::optional<std::vector<std::string>> BudgetedBody::strings() {
  try {
    return decode_strings(body_);
  } catch (const std::bad_alloc&) {
    refuse(out_of_memory(length_));
    return std::vector<std::string>{};
  }
}

}  // namespace ringlab::store
