// Where the engine's sends go out: the driver writes a connection (in a poll()
// round, or at once from push), or its writer thread does (writers.hpp), and
// a writer's call, once back, is counted here: custody rule 4
// (send_custody.hpp).
#include <cerrno>

#include "transport/tcp/engine.hpp"

namespace ringlab::tcp {

void Engine::use_writers(std::size_t from_bytes) {
  std::lock_guard lock(mutex_);
  writers_.use_from(from_bytes);
}

void Engine::push(Connection& c) {
  if (c.has_writer)
    writers_.notify(c);
  else
    c.write(*this);
}

void Engine::wrote(Connection& c, const std::shared_ptr<SendOp>& op, long n, int error) {
  if (n > 0) op->written += static_cast<std::size_t>(n);
  if (op->written == op->total()) {
    complete(*op);
    if (!c.sends.empty() && c.sends.front() == op) c.sends.pop_front();
    poller_.driver().wake();  // a wait on it may be blocked in poll()
  }
  // The peer said goodbye during the call (rule 1 left this to the call):
  // anything still to send can no longer arrive.
  if (c.departed && !failure_.failed() && !c.sends.empty())
    fail_all(c.peer,
             departed_message(rank_, c.peer,
                              "to send to it (" + describe_tag(c.sends.front()->tag) + ")"));
  if (!op->done && failure_.failed()) {
    // The engine failed during the call (rule 2 left the send to the call).
    complete(*op, failure_.why(), failure_.culprit());
    poller_.driver().wake();
  }
  if (n < 0 && error != EAGAIN && error != EWOULDBLOCK && error != EINTR && c.open() &&
      c.send_failure.empty())
    sends_failed(c, error);
}

}  // namespace ringlab::tcp
