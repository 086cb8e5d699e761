// What the store holds (its keys and their values, and the gets and waits
// parked on keys not there yet), and one handler per request type, as
// PyTorch's TCPStore has: each handler is the whole of what its request does.
//
// Every key is counted against the memory budget at its real cost
// (memory_budget.hpp), and no more than StoreLimits::max_keys are held: a
// request that would pass either is refused with an error reply saying which
// limit, and the store goes on.
#pragma once

#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "store/memory_budget.hpp"
#include "store/request.hpp"
#include "store/socket_util.hpp"

namespace ringlab::store {

class Session;

class KeyTable {
 public:
  // Parked waits time out on `io`'s timers.
  KeyTable(asio::io_context& io, const StoreLimits& limits, MemoryBudget& budget);

  // The answer to a request, or nullopt when a get/wait parked `session`
  // (Session::answer() comes later). Never throws: a failure, std::bad_alloc
  // included, is that request's error reply.
  std::optional<Reply> handle(const std::shared_ptr<Session>& session, StoreRequest& request);
  // Drops the session's parked wait, if any (its client left).
  void forget(const std::shared_ptr<Session>& session);
  // Stops every parked wait's timer (the server shuts down).
  void stop_timers();
  void clear_waiters() { waiters_.clear(); }

 private:
  // A get/wait that found missing keys, parked until they exist or time runs out.
  struct Waiter {
    std::shared_ptr<Session> session;
    StoreOp op;
    std::vector<std::string> keys;
    std::unique_ptr<asio::steady_timer> timer;  // none: it waits as long as its client stays
  };

  std::optional<Reply> dispatch(const std::shared_ptr<Session>& session, StoreRequest& request);
  // The handlers, one per request type.
  Reply set(StoreRequest& request);
  Reply add(StoreRequest& request);
  Reply compare_set(StoreRequest& request);
  std::optional<Reply> get_or_wait(const std::shared_ptr<Session>& session, StoreRequest& request);
  Reply check(const StoreRequest& request) const;
  Reply delete_key(StoreRequest& request);
  Reply num_keys() const;

  // Sets key to value, counting its cost; why not, if it would pass the key
  // cap or the budget (less `releasing`, the bytes of the request that
  // carries it, given back once it is answered).
  std::optional<std::string> put(const std::string& key, Value value, std::size_t releasing);
  void park(const std::shared_ptr<Session>& session, StoreRequest& request);
  void time_out(const std::shared_ptr<Session>& session);
  void wake_waiters();
  bool all_present(const std::vector<std::string>& keys) const;
  Reply ready_answer(StoreOp op, const std::vector<std::string>& keys) const;

  asio::io_context& io_;
  const StoreLimits& limits_;
  MemoryBudget& budget_;
  std::map<std::string, Value, std::less<>> data_;
  std::list<Waiter> waiters_;
};

}  // namespace ringlab::store
