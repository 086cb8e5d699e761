// The handlers of key_table.hpp: one per request type.
#include "store/key_table.hpp"

#include <algorithm>
#include <charconv>
#include <new>

#include "store/session.hpp"

namespace ringlab::store {

namespace {

Reply fail(StoreOp op, const std::string& why) {
  return error_reply(store_op_name(op) + ": " + why);
}

// The error reply when the request does not carry n arguments.
std::optional<Reply> wrong_arity(const StoreRequest& request, std::size_t n) {
  if (request.args.size() == n) return std::nullopt;
  return fail(request.op, "expected " + std::to_string(n) + " arguments, got " +
                              std::to_string(request.args.size()));
}

// How many of the arguments are keys: all of wait's and check's, the first
// of the others'.
std::size_t keys_in(const StoreRequest& request) {
  switch (request.op) {
    case StoreOp::Wait:
    case StoreOp::Check: return request.args.size();
    case StoreOp::NumKeys:
    case StoreOp::Hello:
    case StoreOp::Auth: return 0;
    default: return std::min<std::size_t>(request.args.size(), 1);
  }
}

std::optional<std::int64_t> parse_counter(const std::string& value) {
  std::int64_t number = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
  if (error != std::errc() || end != value.data() + value.size()) return std::nullopt;
  return number;
}

}  // namespace

KeyTable::KeyTable(asio::io_context& io, const StoreLimits& limits, MemoryBudget& budget)
    : io_(io), limits_(limits), budget_(budget) {}

std::optional<Reply> KeyTable::handle(const std::shared_ptr<Session>& session,
                                      StoreRequest& request) {
  try {
    return dispatch(session, request);
  } catch (const std::bad_alloc&) {
    return fail(request.op, "the store is out of memory (it holds " +
                                std::to_string(budget_.stored()) + " bytes of keys and values)");
  } catch (const std::exception& e) {
    return fail(request.op, std::string("failed inside the store: ") + e.what());
  }
}

std::optional<Reply> KeyTable::dispatch(const std::shared_ptr<Session>& session,
                                        StoreRequest& request) {
  for (std::size_t i = 0; i < keys_in(request); ++i)
    if (request.args[i].size() > limits_.max_key_bytes)
      return fail(request.op, "a key of " + std::to_string(request.args[i].size()) +
                                  " bytes is longer than the store takes (" +
                                  std::to_string(limits_.max_key_bytes) + " bytes)");
  switch (request.op) {
    case StoreOp::Hello:
    case StoreOp::Auth: return fail(request.op, "the connection has said hello already");
    case StoreOp::Set: return set(request);
    case StoreOp::Add: return add(request);
    case StoreOp::CompareSet: return compare_set(request);
    case StoreOp::Get:
    case StoreOp::Wait: return get_or_wait(session, request);
    case StoreOp::Check: return check(request);
    case StoreOp::Delete: return delete_key(request);
    case StoreOp::NumKeys: return num_keys();
  }
  return fail(request.op, "unknown operation");
}

// ---- the handlers --------------------------------------------------------------

Reply KeyTable::set(StoreRequest& request) {
  if (auto wrong = wrong_arity(request, 2)) return *wrong;
  auto& args = request.args;
  if (auto refused = put(args[0], text(std::move(args[1])), request.held.bytes()))
    return fail(request.op, *refused);
  wake_waiters();
  return {};
}

Reply KeyTable::add(StoreRequest& request) {
  if (auto wrong = wrong_arity(request, 1)) return *wrong;
  const std::string& key = request.args[0];
  std::int64_t value = 0;
  if (auto it = data_.find(key); it != data_.end()) {
    const auto counter = parse_counter(*it->second);
    if (!counter) return fail(request.op, "the value of key '" + key + "' is not an integer");
    value = *counter;
  }
  std::int64_t sum = 0;
  if (__builtin_add_overflow(value, request.number, &sum))
    return fail(request.op, "key '" + key + "' holds " + std::to_string(value) + ", and adding " +
                                std::to_string(request.number) +
                                " would overflow a signed 64-bit integer (-9223372036854775808 "
                                "to 9223372036854775807): the value is unchanged");
  if (auto refused = put(key, text(std::to_string(sum)), request.held.bytes()))
    return fail(request.op, *refused);
  wake_waiters();
  return {StoreStatus::Ok, sum, {}};
}

Reply KeyTable::compare_set(StoreRequest& request) {
  if (auto wrong = wrong_arity(request, 3)) return *wrong;
  auto& args = request.args;
  auto it = data_.find(args[0]);
  if (it == data_.end() && !args[1].empty())  // TCPStore answers the expected value
    return {StoreStatus::Ok, 0, {text(std::move(args[1]))}};
  if (it == data_.end() || *it->second == args[1]) {
    const bool created = it == data_.end();
    if (auto refused = put(args[0], text(std::move(args[2])), request.held.bytes()))
      return fail(request.op, *refused);
    if (created) wake_waiters();
  }
  return {StoreStatus::Ok, 0, {data_.find(args[0])->second}};
}

std::optional<Reply> KeyTable::get_or_wait(const std::shared_ptr<Session>& session,
                                           StoreRequest& request) {
  if (request.op == StoreOp::Get)
    if (auto wrong = wrong_arity(request, 1)) return *wrong;
  if (all_present(request.args)) return ready_answer(request.op, request.args);
  park(session, request);
  return std::nullopt;
}

Reply KeyTable::check(const StoreRequest& request) const {
  return {StoreStatus::Ok, all_present(request.args) ? 1 : 0, {}};
}

Reply KeyTable::delete_key(StoreRequest& request) {
  if (auto wrong = wrong_arity(request, 1)) return *wrong;
  auto it = data_.find(request.args[0]);
  if (it == data_.end()) return {StoreStatus::Ok, 0, {}};
  budget_.remove_key(it->first.size(), it->second->size());
  data_.erase(it);
  return {StoreStatus::Ok, 1, {}};
}

Reply KeyTable::num_keys() const {
  return {StoreStatus::Ok, static_cast<std::int64_t>(data_.size()), {}};
}

// ---- keys and their cost -----------------------------------------------------------

std::optional<std::string> KeyTable::put(const std::string& key, Value value,
                                         std::size_t releasing) {
  auto it = data_.find(key);
  if (it == data_.end()) {
    if (data_.size() >= limits_.max_keys)
      return "the store holds " + std::to_string(data_.size()) +
             " keys, as many as it takes (StoreLimits::max_keys): it takes no new key until "
             "one is deleted";
    const std::size_t cost = key_cost(key.size(), value->size());
    if (!budget_.fits(cost, releasing))
      return budget_.full_message("this new key with its bookkeeping", cost, releasing);
    const std::size_t value_bytes = value->size();
    data_.emplace(key, std::move(value));
    budget_.add_key(key.size(), value_bytes);
    return std::nullopt;
  }
  const std::size_t old_bytes = it->second->size();
  if (value->size() > old_bytes && !budget_.fits(value->size() - old_bytes, releasing))
    return budget_.full_message("this value's growth", value->size() - old_bytes, releasing);
  budget_.replace_value(old_bytes, value->size());
  it->second = std::move(value);
  return std::nullopt;
}

// ---- parked gets and waits ---------------------------------------------------------

void KeyTable::park(const std::shared_ptr<Session>& session, StoreRequest& request) {
  auto& waiter = waiters_.emplace_back(Waiter{session, request.op, std::move(request.args), {}});
  const auto deadline = deadline_after(Duration(std::max<std::int64_t>(request.number, 0)));
  if (deadline == Clock::time_point::max()) return;  // as long as its client stays
  waiter.timer = std::make_unique<asio::steady_timer>(io_, deadline);
  waiter.timer->async_wait([this, session](ErrorCode error) {
    if (!error) time_out(session);  // else answered (cancelled) before the time ran out
  });
}

void KeyTable::time_out(const std::shared_ptr<Session>& session) {
  auto it = std::find_if(waiters_.begin(), waiters_.end(),
                         [&](const Waiter& w) { return w.session == session; });
  if (it == waiters_.end()) return;
  Reply timeout{StoreStatus::Timeout, 0, {}};
  for (const auto& key : it->keys)
    if (!data_.contains(key)) timeout.strings.push_back(text(key));
  waiters_.erase(it);
  session->answer(std::move(timeout));
}

void KeyTable::wake_waiters() {
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    if (all_present(it->keys)) {
      if (it->timer) it->timer->cancel();
      it->session->answer(ready_answer(it->op, it->keys));
      it = waiters_.erase(it);
    } else {
      ++it;
    }
  }
}

void KeyTable::forget(const std::shared_ptr<Session>& session) {
  waiters_.remove_if([&](Waiter& waiter) {
    if (waiter.session != session) return false;
    if (waiter.timer) waiter.timer->cancel();
    return true;
  });
}

void KeyTable::stop_timers() {
  for (auto& waiter : waiters_)
    if (waiter.timer) waiter.timer->cancel();
}

bool KeyTable::all_present(const std::vector<std::string>& keys) const {
  return std::all_of(keys.begin(), keys.end(),
                     [&](const std::string& key) { return data_.contains(key); });
}

Reply KeyTable::ready_answer(StoreOp op, const std::vector<std::string>& keys) const {
  if (op == StoreOp::Get) return {StoreStatus::Ok, 0, {data_.find(keys.front())->second}};
  return {};
}

}  // namespace ringlab::store
