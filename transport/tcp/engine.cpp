// The progress engine of the TCP transport (see engine.hpp for the design):
// making it, and posting sends and receives.
#include "transport/tcp/engine.hpp"

#include <algorithm>
#include <cstring>

#include "transport/tcp/io_timers.hpp"

namespace ringlab::tcp {

namespace {

class SendRequest final : public Request {
 public:
  SendRequest(std::shared_ptr<Engine> engine, std::shared_ptr<SendOp> op)
      : engine_(std::move(engine)), op_(std::move(op)) {}
  ~SendRequest() override { engine_->abandon_send(op_); }
  void wait(Duration timeout) override { engine_->wait(op_, true, timeout); }
  bool test() override { return engine_->test(op_); }

 private:
  std::shared_ptr<Engine> engine_;
  std::shared_ptr<SendOp> op_;
};

class RecvRequest final : public Request {
 public:
  RecvRequest(std::shared_ptr<Engine> engine, std::shared_ptr<RecvOp> op)
      : engine_(std::move(engine)), op_(std::move(op)) {}
  ~RecvRequest() override { engine_->abandon_recv(op_); }
  void wait(Duration timeout) override { engine_->wait(op_, false, timeout); }
  bool test() override { return engine_->test(op_); }
  // Set under the engine's lock before wait() or test() saw it done.
  int source() const override { return op_->done && op_->error.empty() ? op_->peer : -1; }

 private:
  std::shared_ptr<Engine> engine_;
  std::shared_ptr<RecvOp> op_;
};

template <typename OpType>
std::shared_ptr<OpType> new_op(int peer, Tag tag) {
  auto op = std::make_shared<OpType>();
  op->peer = peer;
  op->tag = tag;
  return op;
}

}  // namespace

Engine::Engine(int rank, int size, std::vector<int> descriptors, std::uint64_t max_unexpected)
    : rank_(rank),
      size_(size),
      connections_(rank, descriptors),
      inbox_(rank, max_unexpected),
      poller_(rank),
      blame_(rank, size),
      writers_(mutex_, size,
               [this](Connection& c, const std::shared_ptr<SendOp>& op, long n, int error) {
                 wrote(c, op, n, error);
               }) {
  timers::started();
}

Engine::~Engine() { shutdown(Duration(0)); }

void Engine::complete(Op& op, std::string error, int failed_peer) {
  if (op.done) return;  // failed already (fail_all), and now finished writing
  op.done = true;
  op.error = std::move(error);
  op.failed_peer = failed_peer;
  poller_.driver().progressed();
}

std::unique_ptr<Request> Engine::isend(int dst, Tag tag, ConstBytes data, std::uint32_t element) {
  std::unique_lock lock(mutex_);
  Connection& c = connections_[dst];
  if (!failure_.failed() && c.departed)
    fail_all(dst, departed_message(rank_, dst, "to send to it (" + describe_tag(tag) + ")"));
  if (failure_.failed()) return failure_.request();
  const FrameHeaderBytes header = encode_frame_header(
      {FrameKind::Data, rank_, tag, static_cast<std::uint64_t>(data.size()), element});
  std::size_t written = 0;
  const bool via_writer = writers_.wanted_for(data.size());
  if (c.sends.empty() && !via_writer) {
    // The common case: nothing queued ahead, so try to hand header + payload
    // to the kernel right now, from the caller's buffer.
    const long n = c.send_at_once(header, data);
    if (n < 0) {
      sends_failed(c, static_cast<int>(-n));
      return failure_.request();
    }
    written = static_cast<std::size_t>(n);
    if (written == header.size() + data.size()) return std::make_unique<CompletedRequest>();
  }
  auto op = new_op<SendOp>(dst, tag);
  op->header = header;
  op->data = data.data();
  op->size = data.size();
  op->written = written;
  c.sends.push_back(op);
  if (via_writer) writers_.start(c);
  if (c.has_writer)
    writers_.notify(c);
  else if (c.sends.size() == 1)  // a driver blocked in poll() does not watch it for writing yet
    poller_.driver().wake();
  return std::make_unique<SendRequest>(shared_from_this(), std::move(op));
}

std::unique_ptr<Request> Engine::irecv(int src, Tag tag, MutBytes data, std::uint32_t element) {
  std::unique_lock lock(mutex_);
  if (src == kAnySource) return receive_from_any(tag, data, element);
  Connection& c = connections_[src];
  if (failure_.failed()) return failure_.request();
  // A parked message of another tag is ahead of this one in src's stream:
  // move it (and whatever is staged behind it) to the queue first. Each pass
  // consumes at least that frame; afterwards a parked frame has this tag.
  while (c.parked && c.frame.tag != tag) unpark(c, true);
  if (failure_.failed()) return failure_.request();
  if (auto kept = inbox_.take_kept(src, tag))
    return receive_queued(c, std::move(kept->message), tag, data, element);
  if (c.parked) return receive_parked(c, tag, data, element);  // this receive's message (see above)
  if (c.departed) {                                            // nothing more will come from src
    fail_all(src, departed_message(rank_, src, "to receive from it (" + describe_tag(tag) + ")"));
    return failure_.request();
  }
  auto op = new_op<RecvOp>(src, tag);
  op->buffer = data;
  op->element = element;
  inbox_.post(op);
  return std::make_unique<RecvRequest>(shared_from_this(), std::move(op));
}

std::unique_ptr<Request> Engine::receive_from_any(Tag tag, MutBytes data, std::uint32_t element) {
  if (failure_.failed()) return failure_.request();
  // As irecv does for its source, for every source: a parked message of
  // another tag may be ahead of this one. One too large to queue stays
  // parked (parking.hpp): its sender's later messages wait behind it.
  for (Connection* c : connections_)
    while (c->parked && c->frame.tag != tag && inbox_.may_keep(c->frame.length)) unpark(*c, true);
  if (failure_.failed()) return failure_.request();
  if (auto kept = inbox_.take_kept(kAnySource, tag))
    return receive_queued(connections_[kept->source], std::move(kept->message), tag, data, element);
  for (Connection* c : connections_)
    if (c->parked && c->frame.tag == tag) return receive_parked(*c, tag, data, element);
  if (connections_.everyone_departed()) {  // nothing more will come from anyone
    const int first = rank_ == 0 ? 1 : 0;
    fail_all(first, departed_message(rank_, first,
                                     "to receive from any rank (" + describe_tag(tag) + ")"));
    return failure_.request();
  }
  auto op = new_op<RecvOp>(kAnySource, tag);
  op->any_source = true;
  op->buffer = data;
  op->element = element;
  inbox_.post(op);
  return std::make_unique<RecvRequest>(shared_from_this(), std::move(op));
}

std::unique_ptr<Request> Engine::receive_queued(Connection& c, std::shared_ptr<Queued> message,
                                                Tag tag, MutBytes data, std::uint32_t element) {
  // On a mismatch the message is consumed either way (as in the in-process
  // transport); one still arriving finishes into its own buffer and is dropped.
  if (std::string wrong =
          inbox_.mismatch(c.peer, tag, data.size(), element, message->size, message->element);
      !wrong.empty())
    return std::make_unique<FailedRequest>(std::move(wrong), -1);
  if (message->complete) {
    if (!data.empty()) std::memcpy(data.data(), message->data.storage.get(), data.size());
    return std::make_unique<CompletedRequest>(c.peer);
  }
  // Still arriving: copy what is here and let the rest land in place.
  auto op = new_op<RecvOp>(c.peer, tag);
  op->buffer = data;
  op->element = element;
  std::memcpy(data.data(), message->data.storage.get(), c.payload_got);
  c.queued = nullptr;
  c.target = op;
  return std::make_unique<RecvRequest>(shared_from_this(), std::move(op));
}

std::unique_ptr<Request> Engine::receive_parked(Connection& c, Tag tag, MutBytes data,
                                                std::uint32_t element) {
  std::string wrong =
      inbox_.mismatch(c.peer, tag, data.size(), element, c.frame.length, c.frame.element);
  if (!wrong.empty()) {
    // The receive fails (as when it is posted first); the payload is dropped.
    unpark(c, false);
    return std::make_unique<FailedRequest>(std::move(wrong), -1);
  }
  auto op = new_op<RecvOp>(c.peer, tag);
  op->buffer = data;
  op->element = element;
  c.target = op;
  unpark(c, false);
  return std::make_unique<RecvRequest>(shared_from_this(), std::move(op));
}

}  // namespace ringlab::tcp
