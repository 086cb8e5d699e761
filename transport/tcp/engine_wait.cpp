// The TCP engine's waits: a thread that waits drives the sockets (or follows
// the thread that does, driver.hpp), spinning first where the spin policy
// says so (spin_policy.hpp), until its operation is done or its deadline.
#include "transport/tcp/engine.hpp"

namespace ringlab::tcp {

void Engine::wait(const std::shared_ptr<Op>& op, bool is_send, Duration timeout) {
  std::unique_lock lock(mutex_);
  Driver& driver = poller_.driver();
  if (!op->done) {
    const auto started = Clock::now();
    const auto deadline = started + timeout;
    const std::size_t bytes = is_send ? static_cast<const SendOp&>(*op).size
                                      : static_cast<const RecvOp&>(*op).buffer.size();
    // On record while it waits (answers to "whom do you wait for?").
    const BlameBook::OnRecord on_record(blame_, op.get());
    bool polled = false;  // even a zero timeout gets one look at the sockets
    unsigned looks = 0;   // while spinning (see kFullLookEvery)
    while (!op->done) {
      if (polled && Clock::now() >= deadline) {
        time_out(lock, op, is_send, timeout);  // returns only if op finished meanwhile
        break;
      }
      polled = true;
      if (driver.busy()) {
        driver.follow(lock, deadline);
        continue;
      }
      const bool spin = poller_.spins(bytes, started);
      {
        const Driver::Turn turn(driver);
        if (spin && !is_send && ++looks % SpinPolicy::kFullLookEvery != 0 &&
            connections_.can_look_alone(op->peer))
          connections_[op->peer].read(*this);
        else
          drive(lock, spin ? Clock::now() : deadline);  // spinning: a look that does not block
      }
      if (spin && !op->done) poller_.yield(lock);
    }
  }
  if (op->error.empty()) {
    blame_.recovered();  // a timeout before it is not why this rank stops
    return;
  }
  if (op->failed_peer >= 0) throw PeerError(op->failed_peer, op->error);
  throw CommError(op->error);
}

void Engine::time_out(std::unique_lock<std::mutex>& lock, const std::shared_ptr<Op>& op,
                      bool is_send, Duration timeout) {
  const std::string timed_out =
      timeout_message(rank_, is_send ? "send to" : "receive from", op->peer, op->tag, timeout);
  if (!is_send) withdraw_locked(std::static_pointer_cast<RecvOp>(op));
  if (failure_.failed()) throw TimeoutError(timed_out);  // withdrawing it broke the stream
  // A receive from any source that met no message waited for nobody in
  // particular: there is no one to ask about, and no one to blame.
  if (op->peer == kAnySource) throw TimeoutError(timed_out);
  TimeoutVerdict verdict = find_blame(lock, *op, timed_out, timeout);
  if (op->done) return;  // a send that finished meanwhile
  // Another rank's abort came meanwhile: it names the cause.
  if (failure_.failed()) failure_.raise();
  const std::string message = verdict.message;
  blame_.stalled(std::move(verdict));
  throw TimeoutError(message);
}

bool Engine::test(const std::shared_ptr<Op>& op) {
  std::unique_lock lock(mutex_);
  if (!op->done && !poller_.driver().busy()) {
    const Driver::Turn turn(poller_.driver());
    drive(lock, Clock::now());  // one round that does not block
  }
  return op->done;
}

void Engine::drive(std::unique_lock<std::mutex>& lock, Clock::time_point deadline) {
  const Poller::Round round = poller_.poll(lock, connections_, deadline, inbox_.max_unexpected());
  // A parked payload may be what everyone waits for.
  if (round.any_parked) unpark_overdue(round.at);
  for (const Poller::Event& event : round.events) {
    Connection& c = *event.connection;
    if (!c.open()) continue;  // closed by an event before it
    // An error or hang-up is found by reading, so whatever is parked moves.
    if (c.parked && (event.revents & (POLLHUP | POLLERR)))
      unpark(c, inbox_.may_keep(c.frame.length));
    if (event.revents & (POLLIN | POLLHUP | POLLERR)) c.read(*this);
    if ((event.revents & (POLLOUT | POLLERR)) && c.writable()) c.write(*this);
  }
}

}  // namespace ringlab::tcp
