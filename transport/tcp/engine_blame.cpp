// Asking the peers whom they wait for, and answering them (blame.hpp).
#include <algorithm>

#include "transport/tcp/engine.hpp"

namespace ringlab::tcp {

TimeoutVerdict Engine::find_blame(std::unique_lock<std::mutex>& lock, const Op& op,
                                  const std::string& timed_out, Duration timeout) {
  // With one peer there is nobody else to blame.
  if (size_ <= 2 || failure_.failed()) return {op.peer, timed_out};

  blame_.start_asking(op.peer);
  const std::vector<std::byte> question = encode_waiting({op.peer, true});
  Driver& driver = poller_.driver();
  for (Connection* c : connections_) {
    if (!c->open() || !c->send_failure.empty()) continue;
    c->queue_control(FrameKind::Waiting, question);
    push(*c);
  }
  driver.wake();  // a driver in poll() now has sends to watch

  // Drive (or let another thread drive) until the chain of answers from
  // op.peer ends, or patience runs out.
  const Duration patience = std::min(timeout, kAnswerPatience);
  const auto until = Clock::now() + patience;
  while (!blame_.answered(op.peer) && !failure_.failed() && !op.done && Clock::now() < until) {
    if (driver.busy()) {
      driver.follow(lock, until);
    } else {
      const Driver::Turn turn(driver);
      drive(lock, until);
    }
  }
  return blame_.verdict(op.peer, timed_out, patience);
}

void Engine::waiting_received(Connection& c) {
  const std::optional<Waiting> waiting = decode_waiting(c.control);
  c.control.clear();
  if (!waiting || failure_.failed() || failure_.shut_down) return;
  if (blame_.heard(c.peer, *waiting)) {
    c.queue_control(FrameKind::Waiting, encode_waiting({blame_.waiting_for_now(), false}));
    push(c);
  }
  poller_.driver().progressed();  // an asker may be one of the followers
}

}  // namespace ringlab::tcp
