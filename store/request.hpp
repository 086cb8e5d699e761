// What the server's parts pass each other: a request as a session read it,
// and the reply it gets.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "store/memory_budget.hpp"
#include "store/protocol.hpp"

namespace ringlab::store {

// A value held in the store, shared with the replies that carry it, so a get
// copies nothing.
using Value = std::shared_ptr<const std::string>;
inline Value text(std::string s) { return std::make_shared<const std::string>(std::move(s)); }

// An answer: status, number, strings.
struct Reply {
  StoreStatus status = StoreStatus::Ok;
  std::int64_t number = 0;
  std::vector<Value> strings;
};
inline Reply error_reply(const std::string& why) { return {StoreStatus::Error, 0, {text(why)}}; }

// A request as read. `refused` is not empty when it broke a limit: its body
// was read and thrown away, and that is the error to answer.
struct StoreRequest {
  StoreOp op{};
  std::int64_t number = 0;
  std::vector<std::string> args;
  BudgetShare held;  // the memory its body took, given back when it goes
  std::string refused;
};

}  // namespace ringlab::store
