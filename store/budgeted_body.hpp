// The body of one store request, read under the store's memory budget.
//
// Memory is taken as bytes arrive: the body grows a chunk at a time (at least
// kBodyChunk, doubling, never past the length the header claimed), each step
// taken from the budget first. So a header alone reserves nothing, and
// clients that claim large bodies and stall cost the store nothing. A body
// past a limit, or one the budget or the allocator cannot hold, is still read
// to its end, into a small sink, and thrown away: refused() says why, and the
// connection goes on with its next request.
//
// A body of at most kUncounted bytes (a hello, a get, a delete, a set of a
// small key) is read outside the budget: a connection sends one request at a
// time, so such bodies hold at most max_connections x kUncounted bytes (4 MiB
// at the default 1024), and a store whose keys fill its budget still takes
// new connections and serves gets and deletes. What a request stores is
// counted when it is stored (key_table.hpp).
//
//   BudgetedBody body(budget, length, refusal);
//   while (!body.done()) body.got(read_some(body.next()));
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "store/memory_budget.hpp"

namespace ringlab::store {

class BudgetedBody {
 public:
  // Bodies are read (and memory taken) this much at a time at least.
  static constexpr std::size_t kChunk = 64 << 10;
  // Bodies this small are not counted against the budget.
  static constexpr std::size_t kUncounted = 4 << 10;

  // `refusal`: a limit the header already broke (not empty: the body is read
  // and thrown away). A counted body that does not fit the budget now is
  // refused at once.
  BudgetedBody(MemoryBudget& budget, std::size_t length, std::string refusal = {});

  bool done() const { return received_ == length_; }
  std::size_t received() const { return received_; }
  // Where the next bytes go (not empty until done()).
  std::span<std::byte> next();
  // `n` bytes arrived at the start of the last next().
  void got(std::size_t n);

  // Once done(): why the body was thrown away ("" if it was kept).
  const std::string& refused() const { return refused_; }
  // Once done() and kept: the body's strings (protocol.hpp), or nullopt if
  // they do not fill it exactly. Running out of memory here refuses the body
  // instead (refused() says so; the result is an empty list).
  std::optional<std::vector<std::string>> strings();
  // The budget the body holds, for the request to keep until it is answered.
  BudgetShare take_share() { return std::move(share_); }

 private:
  void make_room(std::size_t want);
  void refuse(std::string why);

  MemoryBudget& budget_;
  std::size_t length_;
  std::size_t received_ = 0;
  std::string refused_;
  BudgetShare share_;
  std::vector<std::byte> body_;  // body_.size() == received_ while kept
  std::vector<std::byte> sink_;  // where a refused body goes
};

}  // namespace ringlab::store
