// The progress engine of the TCP transport (see engine.hpp for the design).
//
// Reading one connection: bytes land either in the connection's staging
// buffer (64 KiB; headers and small payloads, so one recv() can bring several
// small messages) or, for the rest of a large payload whose destination is
// known, straight into that destination. A frame's destination is decided when
// its header is complete:
//   - the oldest posted receive for (source, tag), if its size matches: the
//     payload goes straight into the user's buffer (zero copy);
//   - a posted receive of another size: that receive fails (size mismatch,
//     naming both ranks) and the payload is read and dropped;
//   - no posted receive, and the payload is small (< kParkBytes): a Queued
//     message of the frame's length, which a later irecv copies from (or, if
//     it is still arriving, takes over: the bytes so far are copied and the
//     rest goes straight into the receive's buffer).
//   - no posted receive, and the payload is large: the connection is parked.
//     Its payload stays in the socket (the kernel buffers it, and the sender's
//     isend completes as it would otherwise while it fits) and the connection
//     is not read until the receive is posted; then the payload goes straight
//     into the user's buffer. In a ring the left neighbour is usually a step
//     ahead, so without parking most large messages would be copied twice.
//     Parking must not make a program wait for ever that works when
//     everything is buffered (two ranks that both send() before they
//     recv()). A parked payload is read into a Queued message as above
//     when a receive is posted for a later message from the same peer, when
//     the connection reports an error, and, checked whenever the engine is
//     driven (wait or test), once it has been parked kParkPatience with no
//     event at all on any socket meanwhile, or kParkLimit whatever happened.
//     A payload is not parked at all if a receive from its sender for
//     another tag is already posted.
//   - A frame that claims more than max_unexpected_ (kMaxUnexpectedBytes,
//     framing.hpp) is never copied into a Queued message: parked, it waits
//     for its own receive however long that takes (the timers above leave it
//     alone), and when it has to make way for a later message (a receive
//     from its sender for another tag), the connection fails naming the
//     sender. So a header alone never makes a rank reserve memory; a posted
//     receive of the frame's size still takes it straight into place.
//
// Failure. Ranks finish at different times, so a connection that closes is
// not by itself a failure: a rank that shuts its transport down normally
// first delivers everything it queued, then sends a goodbye frame on every
// connection (framing.hpp), then closes. The rule:
//   - goodbye from p: p's messages already here stay receivable; nothing more
//     comes from p. Only if p is still needed (a receive from p or a send to p
//     pending, or posted later) does it become a failure, named after p.
//   - end of stream or reset without a goodbye, or a write that fails: p died
//     (or its process exited without shutting down): a failure named after p.
//   - a failure fails EVERY pending and future operation of this engine with
//     PeerError(p), not just those on p's connection (a rank waiting on a
//     survivor would otherwise time out, naming the survivor), and sends an
//     abort frame naming p to every other peer, so one that waits on this
//     rank learns the root cause (p) at once rather than when this rank
//     exits; a rank receiving an abort naming p fails the same way (naming p).
//   - while shutting down, a connection that ends is only closed: this rank
//     needs nothing more, and must not abort ranks that may still finish.
// As in InprocWorld::fail, the first failure wins; later ones change nothing.
//
// Waiting. A wait for a message of at most kSpinBytes spins before it
// blocks: for up to kSpin it looks at the sockets without blocking and
// yields the processor between looks; only then does it block in poll(). A
// rank blocked in poll() has to be woken and scheduled again when its message
// comes, which on this project's 2-core test machine costs about as much as a
// small message's whole trip (docs/benchmarks.md, "Small messages on
// oversubscribed ranks"). Spinning keeps the rank on its processor, and the
// yield lets the other ranks that share it run (the sender may be one of them
// when there are more ranks than processors). Open MPI's ranks do the same
// when oversubscribed (mpi_yield_when_idle), for the whole wait; here a wait
// that lasts (a slow peer) soon stops taking processor time that other
// programs could use, and a wait for a large message, whose transfer takes far
// longer than a wake-up, does not spin at all. And when other programs keep
// the processors busy, a yield can hand one of them a whole time slice, while
// a rank blocked in poll() would have been let back in as soon as its message
// came: so after a yield that took kSlowYield or more, waits do not spin for
// kSpinPause.
//
// Blame. A rank frozen (SIGSTOP) or hung keeps its connections open, so only
// timeouts find it, and the first to time out may be a rank waiting on a
// survivor that waits on it. So a wait that runs out of time (in a world of
// more than two) first asks every peer whom it waits for (a waiting frame,
// framing.hpp), and keeps driving its sockets for up to kAnswerPatience.
// Every rank that is driving answers at once with the peer of its oldest
// wait; the asker follows the answers from the rank it waited on to one that
// did not answer (stopped, hung, or busy outside ringlab), or that waits for
// nobody, or round a circle (the ranks wait for each other), and its
// TimeoutError names that rank first ("rank 1: rank 2 did not answer: rank 1
// timed out ... from rank 3 ...; rank 3 waits for rank 2, which did not
// answer ..."). An asker's question stays on record at every peer (it has
// stopped waiting for good, perhaps without leaving), so a later asker
// follows it even if the asker answers nothing more. A rank that shuts down
// after such a timeout, with no wait succeeding since, fails with it first
// (fail_all): its abort frames name the blamed rank, and every peer's error
// then names it too ("rank 0: rank 2 failed or stopped answering (rank 3 gave
// up because of it: ...)"). The transport itself survives a timeout: a
// program that goes on (and whose next wait succeeds) leaves with a goodbye.
#include "transport/tcp/engine.hpp"

#include <sched.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "transport/tcp/rendezvous_watch.hpp"

namespace ringlab::tcp {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kStageBytes = 64 * 1024;
// A payload remainder at least this large is read straight into its destination.
constexpr std::size_t kDirectReadBytes = 16 * 1024;
// iovecs per sendmsg (header + payload per queued send).
constexpr std::size_t kMaxIovecs = 64;
// A payload at least this large with no posted receive parks its connection.
constexpr std::size_t kParkBytes = 32 * 1024;
// A payload parked this long with no event on any socket meanwhile, or this
// long in any case, is read into the queue.
constexpr auto kParkPatience = std::chrono::milliseconds(5);
constexpr auto kParkLimit = std::chrono::milliseconds(100);
// How long a wait spins before it blocks, and when it does not (see
// "Waiting" above).
constexpr auto kSpin = std::chrono::microseconds(200);
constexpr std::size_t kSpinBytes = 64 * 1024;
constexpr auto kSlowYield = std::chrono::microseconds(1000);
constexpr auto kSpinPause = std::chrono::milliseconds(100);
// A spinning receive looks at its own peer's socket alone (one recv() that
// may find nothing, where poll() and then recv() are two system calls), and
// at every socket (poll(): other peers, writes, the wake-up) on every
// kFullLookEvery-th look. Where ranks outnumber processors each system call
// is processor time the others wait for.
constexpr unsigned kFullLookEvery = 8;
// How long a wait that ran out of time waits for the answers to "whom do you
// wait for?": far more than a driving rank needs (a parked payload ahead of
// the question moves within kParkLimit), far less than a timeout.
constexpr Duration kAnswerPatience{500};

std::string errno_text(int error) { return std::strerror(error); }

}  // namespace

struct Engine::SendOp : Engine::Op {
  FrameHeaderBytes header{};
  const std::byte* data = nullptr;
  std::size_t size = 0;
  std::vector<std::byte> owned;  // the unsent payload, once the request is dropped
  std::size_t written = 0;       // of header + payload
  std::size_t total() const { return kFrameHeaderBytes + size; }
};

struct Engine::RecvOp : Engine::Op {
  MutBytes buffer;
};

// A message that arrived before its receive was posted.
struct Engine::Queued {
  Buffer data;  // from the engine's scratch pool
  std::size_t size = 0;
  bool complete = false;
};

struct Engine::Connection {
  Connection(int peer_rank, boost::asio::ip::tcp::socket s)
      : peer(peer_rank),
        socket(std::move(s)),
        fd(socket.native_handle()),
        stage(std::make_unique<std::byte[]>(kStageBytes)) {}
  int peer;
  boost::asio::ip::tcp::socket socket;
  int fd;
  std::string failure;             // set once the connection is closed (not polled any more)
  std::string send_failure;        // set once writing failed
  bool departed = false;           // the peer said goodbye
  std::vector<std::byte> control;  // an abort frame's payload, while it arrives
  std::deque<std::shared_ptr<SendOp>> sends;
  // Read state.
  std::unique_ptr<std::byte[]> stage;
  std::size_t stage_begin = 0, stage_end = 0;
  bool in_payload = false;
  bool parked = false;  // in_payload, waiting for a receive to be posted (not read meanwhile)
  std::chrono::steady_clock::time_point parked_since;
  FrameHeader frame;
  std::size_t payload_got = 0;
  std::shared_ptr<RecvOp> target;  // the posted receive being filled, or
  std::shared_ptr<Queued> queued;  // the queued message being filled (neither: dropped)
};

namespace {

class SendRequest final : public Request {
 public:
  SendRequest(std::shared_ptr<Engine> engine, std::shared_ptr<Engine::SendOp> op)
      : engine_(std::move(engine)), op_(std::move(op)) {}
  ~SendRequest() override { engine_->abandon_send(op_); }
  void wait(Duration timeout) override { engine_->wait(op_, true, timeout); }
  bool test() override { return engine_->test(op_); }

 private:
  std::shared_ptr<Engine> engine_;
  std::shared_ptr<Engine::SendOp> op_;
};

class RecvRequest final : public Request {
 public:
  RecvRequest(std::shared_ptr<Engine> engine, std::shared_ptr<Engine::RecvOp> op)
      : engine_(std::move(engine)), op_(std::move(op)) {}
  ~RecvRequest() override { engine_->abandon_recv(op_); }
  void wait(Duration timeout) override { engine_->wait(op_, false, timeout); }
  bool test() override { return engine_->test(op_); }

 private:
  std::shared_ptr<Engine> engine_;
  std::shared_ptr<Engine::RecvOp> op_;
};

}  // namespace

Engine::Engine(int rank, int size, std::unique_ptr<boost::asio::io_context> io,
               std::vector<boost::asio::ip::tcp::socket> sockets, std::uint64_t max_unexpected)
    : rank_(rank),
      size_(size),
      max_unexpected_(max_unexpected),
      io_(std::move(io)),
      pool_(ScratchPool::create()),
      said_(static_cast<std::size_t>(size), kUnheard),
      gave_up_(static_cast<std::size_t>(size), false),
      spin_{kSpin, kSpinBytes, kSlowYield, kSpinPause},
      connections_(static_cast<std::size_t>(size)) {
  waits_.reserve(4);  // no allocation per wait
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0)
    throw CommError("rank " + std::to_string(rank) + ": eventfd failed: " + errno_text(errno));
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank) continue;
    auto& socket = sockets[static_cast<std::size_t>(peer)];
    socket.non_blocking(true);
    connections_[static_cast<std::size_t>(peer)] =
        std::make_unique<Connection>(peer, std::move(socket));
  }
}

Engine::~Engine() {
  shutdown(Duration(0));
  ::close(wake_fd_);
}

void Engine::complete(Op& op, std::string error, int failed_peer) {
  if (op.done) return;  // failed already (fail_all), and now finished writing
  op.done = true;
  op.error = std::move(error);
  op.failed_peer = failed_peer;
  if (followers_ > 0) progressed_.notify_all();
}

void Engine::wake_driver() {
  const std::uint64_t one = 1;
  [[maybe_unused]] auto ignored = ::write(wake_fd_, &one, sizeof one);
}

// ---- posting -----------------------------------------------------------------

std::unique_ptr<Request> Engine::isend(int dst, Tag tag, ConstBytes data) {
  std::unique_lock lock(mutex_);
  Connection& c = *connections_[static_cast<std::size_t>(dst)];
  if (broken_.empty() && c.departed)
    fail_all(dst, departed_message(dst, "to send to it (" + describe_tag(tag) + ")"));
  if (!broken_.empty()) return std::make_unique<FailedRequest>(broken_, broken_peer_);
  const FrameHeaderBytes header =
      encode_frame_header({FrameKind::Data, rank_, tag, static_cast<std::uint64_t>(data.size())});
  std::size_t written = 0;
  if (c.sends.empty()) {
    // The common case: nothing queued ahead, so try to hand header + payload
    // to the kernel right now, from the caller's buffer.
    iovec iov[2] = {{const_cast<std::byte*>(header.data()), header.size()},
                    {const_cast<std::byte*>(data.data()), data.size()}};
    msghdr message{};
    message.msg_iov = iov;
    message.msg_iovlen = data.empty() ? 1 : 2;
    ssize_t n;
    do n = ::sendmsg(c.fd, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
      fail_sends(c, errno);
      return std::make_unique<FailedRequest>(broken_, broken_peer_);
    }
    if (n > 0) written = static_cast<std::size_t>(n);
    if (written == header.size() + data.size()) return std::make_unique<CompletedRequest>();
  }
  auto op = std::make_shared<SendOp>();
  op->peer = dst;
  op->tag = tag;
  op->header = header;
  op->data = data.data();
  op->size = data.size();
  op->written = written;
  c.sends.push_back(op);
  // A driver blocked in poll() does not watch this socket for writability yet.
  if (driving_ && c.sends.size() == 1) wake_driver();
  return std::make_unique<SendRequest>(shared_from_this(), std::move(op));
}

std::unique_ptr<Request> Engine::irecv(int src, Tag tag, MutBytes data) {
  std::unique_lock lock(mutex_);
  const Key key{src, tag};
  Connection& c = *connections_[static_cast<std::size_t>(src)];
  if (!broken_.empty()) return std::make_unique<FailedRequest>(broken_, broken_peer_);
  // A parked message of another tag is ahead of this one in src's stream:
  // move it (and whatever is staged behind it) to the queue first. Each pass
  // consumes at least that frame; afterwards a parked frame has this tag.
  while (c.parked && c.frame.tag != tag) unpark(c, true);
  if (!broken_.empty()) return std::make_unique<FailedRequest>(broken_, broken_peer_);
  if (auto it = queued_.find(key); it != queued_.end()) {
    std::shared_ptr<Queued> message = std::move(it->second.front());
    it->second.pop_front();
    if (it->second.empty()) queued_.erase(it);
    if (message->size != data.size())
      // The message is consumed either way (as in the in-process transport);
      // one still arriving finishes into its own buffer and is dropped.
      return std::make_unique<FailedRequest>(
          size_mismatch_message(rank_, src, tag, data.size(), message->size), -1);
    if (message->complete) {
      if (!data.empty()) std::memcpy(data.data(), message->data.storage.get(), data.size());
      return std::make_unique<CompletedRequest>();
    }
    // Still arriving: copy what is here and let the rest land in place.
    auto op = std::make_shared<RecvOp>();
    op->peer = src;
    op->tag = tag;
    op->buffer = data;
    std::memcpy(data.data(), message->data.storage.get(), c.payload_got);
    c.queued = nullptr;
    c.target = op;
    return std::make_unique<RecvRequest>(shared_from_this(), std::move(op));
  }
  if (c.parked) {  // this receive's message (see above)
    auto op = std::make_shared<RecvOp>();
    op->peer = src;
    op->tag = tag;
    op->buffer = data;
    if (data.size() != c.frame.length) {
      // The receive fails (as when it is posted first); the payload is dropped.
      unpark(c, false);
      return std::make_unique<FailedRequest>(
          size_mismatch_message(rank_, src, tag, data.size(), c.frame.length), -1);
    }
    c.target = op;
    unpark(c, false);
    return std::make_unique<RecvRequest>(shared_from_this(), std::move(op));
  }
  if (c.departed) {  // nothing more will come from src
    fail_all(src, departed_message(src, "to receive from it (" + describe_tag(tag) + ")"));
    return std::make_unique<FailedRequest>(broken_, broken_peer_);
  }
  auto op = std::make_shared<RecvOp>();
  op->peer = src;
  op->tag = tag;
  op->buffer = data;
  posted_[key].push_back(op);
  return std::make_unique<RecvRequest>(shared_from_this(), std::move(op));
}

// ---- waiting -----------------------------------------------------------------

void Engine::wait(const std::shared_ptr<Op>& op, bool is_send, Duration timeout) {
  std::unique_lock lock(mutex_);
  if (!op->done) {
    const auto started = Clock::now();
    const auto deadline = started + timeout;
    const std::size_t bytes = is_send ? static_cast<const SendOp&>(*op).size
                                      : static_cast<const RecvOp&>(*op).buffer.size();
    // On record while it waits (answers to "whom do you wait for?").
    waits_.push_back(op.get());
    struct Unlist {
      std::vector<const Op*>& waits;
      const Op* op;
      ~Unlist() { waits.erase(std::find(waits.begin(), waits.end(), op)); }
    } unlist{waits_, op.get()};
    bool polled = false;  // even a zero timeout gets one look at the sockets
    unsigned looks = 0;   // while spinning (see kFullLookEvery)
    while (!op->done) {
      if (polled && Clock::now() >= deadline) {
        const std::string timed_out = timeout_message(rank_, is_send ? "send to" : "receive from",
                                                      op->peer, op->tag, timeout);
        if (!is_send) withdraw_locked(std::static_pointer_cast<RecvOp>(op));
        if (!broken_.empty()) throw TimeoutError(timed_out);  // withdrawing it broke the stream
        const Blame blame = find_blame(lock, *op, timed_out, timeout);
        if (op->done) break;     // a send that finished meanwhile
        if (!broken_.empty()) {  // another rank's abort came meanwhile: it names the cause
          if (broken_peer_ >= 0) throw PeerError(broken_peer_, broken_);
          throw CommError(broken_);
        }
        stalled_ = blame.rank;
        stalled_message_ = blame.message;
        throw TimeoutError(blame.message);
      }
      if (driving_) {
        ++followers_;
        progressed_.wait_until(lock, deadline);
        --followers_;
        polled = true;
        continue;
      }
      driving_ = true;
      const bool spin = spin_.spins(bytes, started, Clock::now());
      try {
        if (spin && !is_send && ++looks % kFullLookEvery != 0 && can_look_alone(op->peer))
          read_ready(*connections_[static_cast<std::size_t>(op->peer)]);
        else
          drive(lock, spin ? Clock::now() : deadline);  // spinning: a look that does not block
      } catch (...) {
        driving_ = false;
        progressed_.notify_all();
        throw;
      }
      driving_ = false;
      polled = true;
      // A follower may take over driving now.
      if (followers_ > 0) progressed_.notify_all();
      if (spin && !op->done) {
        lock.unlock();
        const auto yielded = Clock::now();
        ::sched_yield();  // the rank this one waits for may share its processor
        const auto back = Clock::now();
        lock.lock();
        spin_.yielded(yielded, back);
      }
    }
  }
  if (op->error.empty()) {
    if (stalled_ >= 0) stalled_ = -1;  // it recovered from its timeout
    return;
  }
  if (op->failed_peer >= 0) throw PeerError(op->failed_peer, op->error);
  throw CommError(op->error);
}

bool Engine::test(const std::shared_ptr<Op>& op) {
  std::unique_lock lock(mutex_);
  if (!op->done && !driving_) {
    driving_ = true;
    try {
      drive(lock, Clock::now());  // one round that does not block
    } catch (...) {
      driving_ = false;
      throw;
    }
    driving_ = false;
    if (followers_ > 0) progressed_.notify_all();
  }
  return op->done;
}

void Engine::drive(std::unique_lock<std::mutex>& lock, Clock::time_point deadline) {
  poll_fds_.clear();
  poll_connections_.clear();
  poll_fds_.push_back({wake_fd_, POLLIN, 0});
  bool any_parked = false;
  for (auto& c : connections_) {
    if (!c || !c->failure.empty()) continue;
    any_parked = any_parked || (c->parked && c->frame.length <= max_unexpected_);
    const short events =
        static_cast<short>((c->parked ? 0 : POLLIN) | (writable(*c) ? POLLOUT : 0));
    poll_fds_.push_back({c->fd, events, 0});
    poll_connections_.push_back(c.get());
  }
  const auto poll_start = Clock::now();
  auto left = std::max(deadline - poll_start, Clock::duration::zero());
  // Wake up in time to check on parked payloads.
  if (any_parked) left = std::min<Clock::duration>(left, kParkPatience);
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(left);
  const timespec limit{static_cast<time_t>(seconds.count()),
                       static_cast<long>(std::chrono::nanoseconds(left - seconds).count())};
  lock.unlock();
  const int ready = ::ppoll(poll_fds_.data(), poll_fds_.size(), &limit, nullptr);
  const int poll_error = errno;
  lock.lock();
  if (ready < 0) {
    if (poll_error == EINTR) return;
    throw CommError("rank " + std::to_string(rank_) + ": poll() failed: " + errno_text(poll_error));
  }
  const auto polled = Clock::now();
  if (ready > 0) last_event_ = polled;
  // A parked payload may be what everyone waits for.
  if (any_parked) unpark_overdue(polled);
  if (ready == 0) return;
  if (poll_fds_[0].revents) {
    std::uint64_t count;
    [[maybe_unused]] auto ignored = ::read(wake_fd_, &count, sizeof count);
  }
  for (std::size_t i = 1; i < poll_fds_.size(); ++i) {
    const short revents = poll_fds_[i].revents;
    Connection& c = *poll_connections_[i - 1];
    if (!revents || !c.failure.empty()) continue;
    // An error or hang-up is found by reading, so whatever is parked moves.
    if (c.parked && (revents & (POLLHUP | POLLERR))) unpark(c, c.frame.length <= max_unexpected_);
    if (revents & (POLLIN | POLLHUP | POLLERR)) read_ready(c);
    if ((revents & (POLLOUT | POLLERR)) && writable(c)) write_ready(c);
  }
}

// ---- writing -----------------------------------------------------------------

void Engine::write_ready(Connection& c) {
  while (!c.sends.empty()) {
    iovec iov[kMaxIovecs];
    std::size_t count = 0;
    for (const auto& op : c.sends) {
      if (count + 2 > kMaxIovecs) break;
      if (op->written < kFrameHeaderBytes)
        iov[count++] = {op->header.data() + op->written, kFrameHeaderBytes - op->written};
      const std::size_t payload_done =
          op->written > kFrameHeaderBytes ? op->written - kFrameHeaderBytes : 0;
      if (op->size > payload_done)
        iov[count++] = {const_cast<std::byte*>(op->data) + payload_done, op->size - payload_done};
    }
    msghdr message{};
    message.msg_iov = iov;
    message.msg_iovlen = count;
    const ssize_t n = ::sendmsg(c.fd, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      return fail_sends(c, errno);
    }
    auto sent = static_cast<std::size_t>(n);
    while (!c.sends.empty()) {
      SendOp& op = *c.sends.front();
      const std::size_t take = std::min(sent, op.total() - op.written);
      op.written += take;
      sent -= take;
      if (op.written < op.total()) break;
      complete(op);
      c.sends.pop_front();
    }
  }
}

// ---- reading -----------------------------------------------------------------

std::byte* Engine::payload_destination(Connection& c) const {
  if (c.frame.kind == FrameKind::Abort || c.frame.kind == FrameKind::Waiting)
    return c.control.data() + c.payload_got;
  if (c.target) return c.target->buffer.data() + c.payload_got;
  if (c.queued) return c.queued->data.storage.get() + c.payload_got;
  return nullptr;  // dropped
}

void Engine::consume_staged(Connection& c) {
  // Complete headers, then payload bytes, until the stage is empty, a header
  // is cut short, or a frame parks the connection.
  while (c.stage_begin < c.stage_end && c.failure.empty() && !c.parked) {
    const std::size_t staged = c.stage_end - c.stage_begin;
    if (!c.in_payload) {
      if (staged < kFrameHeaderBytes) break;
      const std::span<const std::byte, kFrameHeaderBytes> bytes(c.stage.get() + c.stage_begin,
                                                                kFrameHeaderBytes);
      c.stage_begin += kFrameHeaderBytes;
      const FrameDecode decoded = decode_frame_header(bytes);
      if (!decoded.header) {
        return connection_lost(c, "rank " + std::to_string(rank_) + ": rank " +
                                      std::to_string(c.peer) + " sent a corrupt frame (" +
                                      decoded.error + "); closed the connection: is rank " +
                                      std::to_string(c.peer) + " running the same ringlab build?");
      }
      if (!start_frame(c, *decoded.header)) return;
    } else {
      const std::size_t take = std::min<std::size_t>(staged, c.frame.length - c.payload_got);
      if (std::byte* destination = payload_destination(c))
        std::memcpy(destination, c.stage.get() + c.stage_begin, take);
      c.stage_begin += take;
      c.payload_got += take;
      if (c.payload_got == c.frame.length) finish_frame(c);
    }
  }
}

void Engine::read_ready(Connection& c) {
  bool drained = false;  // the last recv() was short: the socket is empty for now
  for (;;) {
    consume_staged(c);
    // After a short read, poll() says when there is more; that saves a recv()
    // that would only say EAGAIN. A parked connection is not read.
    if (!c.failure.empty() || c.parked || drained) return;

    // Read more: a large payload remainder straight to its destination,
    // everything else into the staging buffer.
    std::byte* into;
    std::size_t want;
    std::byte* destination = c.in_payload ? payload_destination(c) : nullptr;
    const bool direct = destination && c.frame.length - c.payload_got >= kDirectReadBytes;
    if (direct) {
      into = destination;
      want = c.frame.length - c.payload_got;
    } else {
      if (c.stage_begin == c.stage_end) {
        c.stage_begin = c.stage_end = 0;
      } else if (c.stage_begin > 0) {  // a partial header: move it to the front
        std::memmove(c.stage.get(), c.stage.get() + c.stage_begin, c.stage_end - c.stage_begin);
        c.stage_end -= c.stage_begin;
        c.stage_begin = 0;
      }
      into = c.stage.get() + c.stage_end;
      want = kStageBytes - c.stage_end;
    }
    const ssize_t n = ::recv(c.fd, into, want, MSG_DONTWAIT);
    if (n > 0) {
      const auto got = static_cast<std::size_t>(n);
      if (direct) {
        c.payload_got += got;
        if (c.payload_got == c.frame.length) finish_frame(c);
      } else {
        c.stage_end += got;
      }
      drained = got < want;
      continue;
    }
    if (n == 0)
      return connection_lost(c, "rank " + std::to_string(rank_) + ": connection to rank " +
                                    std::to_string(c.peer) + " closed (end of stream): rank " +
                                    std::to_string(c.peer) + " probably exited or crashed");
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return;
    return connection_lost(c, "rank " + std::to_string(rank_) + ": connection to rank " +
                                  std::to_string(c.peer) + " closed (" + errno_text(errno) +
                                  "): rank " + std::to_string(c.peer) +
                                  " probably exited or crashed");
  }
}

bool Engine::start_frame(Connection& c, const FrameHeader& header) {
  if (header.kind == FrameKind::Hello || header.kind == FrameKind::HelloAck) {
    connection_lost(c, "rank " + std::to_string(rank_) + ": rank " + std::to_string(c.peer) +
                           " sent a handshake frame after the handshake; closed the connection");
    return false;
  }
  if (header.source != c.peer) {
    connection_lost(c, "rank " + std::to_string(rank_) + ": the connection to rank " +
                           std::to_string(c.peer) + " carried a frame claiming to come from rank " +
                           std::to_string(header.source) + "; closed the connection");
    return false;
  }
  if (header.kind == FrameKind::Goodbye) {
    goodbye_received(c);
    return false;  // nothing more is read from this connection
  }
  c.frame = header;
  c.payload_got = 0;
  c.in_payload = true;
  c.target = nullptr;
  c.queued = nullptr;
  if (header.kind == FrameKind::Abort || header.kind == FrameKind::Waiting) {
    c.control.assign(header.length, std::byte{0});
    return true;  // finish_frame acts on it
  }
  if (!broken_.empty()) return true;  // nobody will receive it: read and drop
  const Key key{c.peer, header.tag};
  if (auto it = posted_.find(key); it != posted_.end()) {
    std::shared_ptr<RecvOp> op = std::move(it->second.front());
    it->second.pop_front();
    if (it->second.empty()) posted_.erase(it);
    if (op->buffer.size() == header.length)
      c.target = std::move(op);
    else  // fail the receive; the payload is read and dropped
      complete(*op,
               size_mismatch_message(rank_, c.peer, header.tag, op->buffer.size(), header.length));
  } else if (header.length >= kParkBytes && !receive_posted_from(c.peer)) {
    // Parked until its receive is posted (see the top of this file). Not
    // when a receive from the same peer is posted already: its message comes
    // after this one, so this one must move out of the way.
    c.parked = true;
    c.parked_since = Clock::now();
    return true;
  } else if (!queue_arriving(c)) {
    return false;  // it claims too much to be kept: the connection failed
  }
  if (header.length == 0) finish_frame(c);
  return true;
}

bool Engine::receive_posted_from(int peer) const {
  const auto it = posted_.lower_bound(Key{peer, 0});
  return it != posted_.end() && it->first.first == peer;
}

bool Engine::queue_arriving(Connection& c) {
  if (c.frame.length > max_unexpected_) {
    connection_lost(
        c, "rank " + std::to_string(rank_) + ": rank " + std::to_string(c.peer) +
               " sent a message of " + std::to_string(c.frame.length) + " bytes (" +
               describe_tag(c.frame.tag) +
               ") before its receive was posted, and a later message from rank " +
               std::to_string(c.peer) +
               " is wanted first; a message that comes before its "
               "receive is kept in memory only up to " +
               std::to_string(max_unexpected_) +
               " bytes (kMaxUnexpectedBytes, transport/tcp/framing.hpp): post the receive for a "
               "large message before receiving later ones from the same rank (or is rank " +
               std::to_string(c.peer) + " not a ringlab rank of this job?)");
    return false;
  }
  auto message = std::make_shared<Queued>();
  message->size = c.frame.length;
  message->data = pool_->take(c.frame.length);
  queued_[Key{c.peer, c.frame.tag}].push_back(message);
  c.queued = std::move(message);
  return true;
}

void Engine::unpark(Connection& c, bool into_queue) {
  c.parked = false;
  if (into_queue && broken_.empty() && !queue_arriving(c)) return;  // failed: too large
  // What is staged already goes where it belongs now; the rest is read when
  // poll() next reports the socket, so a driver blocked without watching it
  // must look again.
  consume_staged(c);
  if (driving_) wake_driver();
}

void Engine::unpark_overdue(Clock::time_point now) {
  for (auto& c : connections_) {
    if (!c || !c->parked) continue;
    if (c->frame.length > max_unexpected_) continue;  // waits for its receive
    const auto quiet_since = std::max(last_event_, c->parked_since);
    if (now - quiet_since >= kParkPatience || now - c->parked_since >= kParkLimit) unpark(*c, true);
  }
}

void Engine::finish_frame(Connection& c) {
  if (c.frame.kind == FrameKind::Abort || c.frame.kind == FrameKind::Waiting) {
    const FrameKind kind = c.frame.kind;
    c.in_payload = false;
    c.frame.kind = FrameKind::Data;
    return kind == FrameKind::Abort ? abort_received(c) : waiting_received(c);
  }
  if (c.target) complete(*c.target);
  if (c.queued) c.queued->complete = true;
  c.target = nullptr;
  c.queued = nullptr;
  c.in_payload = false;
  c.payload_got = 0;
}

// ---- failure and withdrawal --------------------------------------------------

void Engine::connection_lost(Connection& c, const std::string& why) {
  if (!c.failure.empty()) return;
  c.failure = why;
  boost::system::error_code ignored;
  // Stop the traffic both ways; the descriptor stays open (a driver may be
  // polling it) until the engine shuts down.
  c.socket.shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
  c.in_payload = false;
  c.parked = false;
  c.stage_begin = c.stage_end = 0;
  if (shutting_down_ && c.sends.empty()) return;  // nothing more needed from it
  fail_all(c.peer, why);
}

void Engine::fail_sends(Connection& c, int error) {
  c.send_failure = "rank " + std::to_string(rank_) + ": connection to rank " +
                   std::to_string(c.peer) + " failed while sending (" + errno_text(error) +
                   "): rank " + std::to_string(c.peer) + " probably exited or crashed";
  for (auto& op : c.sends) complete(*op, c.send_failure, c.peer);
  c.sends.clear();
  fail_all(c.peer, c.send_failure);
}

std::string Engine::departed_message(int peer, const std::string& what) const {
  return "rank " + std::to_string(rank_) + ": rank " + std::to_string(peer) +
         " shut down its transport (its program finished or stopped) while rank " +
         std::to_string(rank_) + " still needed it, " + what + ": rank " + std::to_string(peer) +
         " stopped early, or the ranks did not run the same collectives";
}

void Engine::goodbye_received(Connection& c) {
  c.departed = true;
  c.failure = "rank " + std::to_string(rank_) + ": rank " + std::to_string(c.peer) +
              " shut down its transport";
  c.in_payload = false;
  c.stage_begin = c.stage_end = 0;
  if (!broken_.empty()) return;
  // Still needed? A send not yet written, or a receive posted for it.
  if (!c.sends.empty())
    return fail_all(c.peer, departed_message(c.peer, "to send to it (" +
                                                         describe_tag(c.sends.front()->tag) + ")"));
  for (const auto& [key, ops] : posted_)
    if (key.first == c.peer)
      return fail_all(c.peer, departed_message(
                                  c.peer, "to receive from it (" + describe_tag(key.second) + ")"));
}

void Engine::abort_received(Connection& c) {
  const std::optional<Abort> abort = decode_abort(c.control);
  c.control.clear();
  // The sender closes next; what it failed on is the root cause.
  c.failure = "rank " + std::to_string(rank_) + ": rank " + std::to_string(c.peer) + " aborted";
  c.departed = true;
  c.stage_begin = c.stage_end = 0;
  if (!broken_.empty()) return;
  int culprit = c.peer;
  if (abort && abort->culprit >= 0 && abort->culprit < size_ && abort->culprit != rank_)
    culprit = abort->culprit;
  const std::string reason = abort ? abort->reason : "no reason given";
  // The culprit first: every rank's error names the same rank first. What is
  // passed on is the root cause.
  fail_all(culprit, abort_message(rank_, c.peer, culprit, reason), &reason);
}

void Engine::waiting_received(Connection& c) {
  const std::optional<Waiting> waiting = decode_waiting(c.control);
  c.control.clear();
  if (!waiting || !broken_.empty() || shut_down_) return;
  const int said =
      waiting->waiting_for >= 0 && waiting->waiting_for < size_ ? waiting->waiting_for : -1;
  said_[static_cast<std::size_t>(c.peer)] = said;
  // A question stands until that rank answers one of this rank's.
  gave_up_[static_cast<std::size_t>(c.peer)] = waiting->asking;
  if (waiting->asking) {
    queue_control(c, FrameKind::Waiting, encode_waiting({waiting_for_now(), false}));
    write_ready(c);
  }
  if (followers_ > 0) progressed_.notify_all();  // an asker may be one of them
}

int Engine::waiting_for_now() const { return waits_.empty() ? -1 : waits_.front()->peer; }

Engine::ChainEnd Engine::follow_answers(int first, std::vector<int>& chain) const {
  chain.clear();
  for (int at = first;;) {
    chain.push_back(at);
    const int next = said_[static_cast<std::size_t>(at)];
    if (next == kUnheard) return ChainEnd::Unanswered;
    if (next < 0) return ChainEnd::WaitsForNobody;
    if (next == rank_ || std::find(chain.begin(), chain.end(), next) != chain.end()) {
      chain.push_back(next);
      return ChainEnd::Circle;
    }
    at = next;
  }
}

Engine::Blame Engine::find_blame(std::unique_lock<std::mutex>& lock, const Op& op,
                                 const std::string& timed_out, Duration timeout) {
  // With one peer there is nobody else to blame.
  if (size_ <= 2 || !broken_.empty()) return {op.peer, timed_out};

  // Ask every peer (answers from an earlier question are stale; a peer's own
  // question stands).
  for (std::size_t q = 0; q < said_.size(); ++q)
    if (!gave_up_[q]) said_[q] = kUnheard;
  said_[static_cast<std::size_t>(rank_)] = op.peer;
  const std::vector<std::byte> question = encode_waiting({op.peer, true});
  for (auto& c : connections_) {
    if (!c || !c->failure.empty() || !c->send_failure.empty()) continue;
    queue_control(*c, FrameKind::Waiting, question);
    write_ready(*c);
  }
  if (driving_) wake_driver();  // it now has sends to watch

  // Drive (or let another thread drive) until the chain of answers from
  // op.peer ends, or patience runs out.
  const auto until = Clock::now() + std::min(timeout, kAnswerPatience);
  std::vector<int> chain;
  ChainEnd end = follow_answers(op.peer, chain);
  while (end == ChainEnd::Unanswered && broken_.empty() && !op.done && Clock::now() < until) {
    if (driving_) {
      ++followers_;
      progressed_.wait_until(lock, until);
      --followers_;
    } else {
      driving_ = true;
      try {
        drive(lock, until);
      } catch (...) {
        driving_ = false;
        progressed_.notify_all();
        throw;
      }
      driving_ = false;
      if (followers_ > 0) progressed_.notify_all();
    }
    end = follow_answers(op.peer, chain);
  }

  // "Rank 3 waits for rank 0, and rank 0 waits for rank 2"
  auto waits_text = [&] {
    std::string text;
    for (std::size_t i = 0; i + 1 < chain.size(); ++i)
      text += std::string(i == 0                  ? "Rank "
                          : i + 2 == chain.size() ? ", and rank "
                                                  : ", rank ") +
              std::to_string(chain[i]) + " waits for rank " + std::to_string(chain[i + 1]);
    return text;
  };
  const std::string me = "rank " + std::to_string(rank_);
  const std::string patience = std::to_string(std::min(timeout, kAnswerPatience).count()) + " ms";
  const int last = chain.back();
  const std::string blamed = "rank " + std::to_string(last);
  switch (end) {
    case ChainEnd::Unanswered: {
      const std::string silent = " did not answer within " + patience +
                                 " when asked whom it waits for (stopped, hung, or busy outside "
                                 "ringlab?)";
      if (chain.size() == 1) return {last, timed_out + " Rank " + std::to_string(last) + silent};
      return {last, me + ": " + blamed + " did not answer: " + timed_out + " " + waits_text() +
                        ", which" + silent};
    }
    case ChainEnd::WaitsForNobody: {
      const std::string idle =
          " answered that it waits for no rank: it is not in this collective (did the ranks run "
          "the same collectives in the same order?)";
      if (chain.size() == 1) return {last, timed_out + " Rank " + std::to_string(last) + idle};
      return {last, me + ": " + blamed + " is not taking part: " + timed_out + " " + waits_text() +
                        ", which" + idle};
    }
    case ChainEnd::Circle:
      break;
  }
  return {op.peer, timed_out + " " + waits_text() +
                       ": the ranks wait for each other (did they run the same collectives in the "
                       "same order?)"};
}

void Engine::queue_control(Connection& c, FrameKind kind, std::vector<std::byte> payload) {
  auto op = std::make_shared<SendOp>();
  op->peer = c.peer;
  op->header = encode_frame_header({kind, rank_, 0, static_cast<std::uint64_t>(payload.size())});
  op->owned = std::move(payload);
  op->data = op->owned.data();
  op->size = op->owned.size();
  op->done = true;  // nobody waits on it
  c.sends.push_back(std::move(op));
}

bool Engine::writable(const Connection& c) const {
  return c.failure.empty() && c.send_failure.empty() && !c.sends.empty();
}

bool Engine::can_look_alone(int peer) const {
  const Connection* c = connections_[static_cast<std::size_t>(peer)].get();
  return c && c->failure.empty() && !c->parked && !sends_pending();
}

bool Engine::sends_pending() const {
  return std::any_of(connections_.begin(), connections_.end(),
                     [this](const auto& c) { return c && writable(*c); });
}

void Engine::fail_all(int culprit, const std::string& why, const std::string* relayed) {
  if (!broken_.empty()) return;
  broken_ = why;
  broken_peer_ = culprit;
  const std::vector<std::byte> abort = encode_abort({culprit, relayed ? *relayed : why});
  for (auto& c : connections_) {
    if (!c) continue;
    // A frame partly written must be finished before another can follow:
    // keep it (with a copy of its payload, as its request may be gone soon).
    std::shared_ptr<SendOp> partial;
    if (!c->sends.empty() && c->sends.front()->written > 0) partial = c->sends.front();
    for (auto& op : c->sends) complete(*op, why, culprit);
    c->sends.clear();
    if (c->target) complete(*c->target, why, culprit);
    c->target = nullptr;
    c->queued = nullptr;  // a message still arriving is read and dropped
    c->parked = false;    // so is a parked one
    if (c->peer == culprit || !c->failure.empty() || !c->send_failure.empty()) continue;
    if (partial) {
      if (partial->owned.empty() && partial->size > 0) {
        partial->owned.assign(partial->data, partial->data + partial->size);
        partial->data = partial->owned.data();
      }
      c->sends.push_back(std::move(partial));
    }
    queue_control(*c, FrameKind::Abort, abort);
    write_ready(*c);  // best effort now; shutdown() finishes it
  }
  for (auto& [key, ops] : posted_)
    for (auto& op : ops) complete(*op, why, culprit);
  posted_.clear();
  queued_.clear();
  if (driving_) wake_driver();  // a driver in poll() now has sends to watch
  progressed_.notify_all();
}

void Engine::withdraw_locked(const std::shared_ptr<RecvOp>& op) {
  if (op->done) return;
  const Key key{op->peer, op->tag};
  if (auto it = posted_.find(key); it != posted_.end()) {
    const auto before = it->second.size();
    std::erase(it->second, op);
    const bool found = it->second.size() != before;
    if (it->second.empty()) posted_.erase(it);
    if (found) return;
  }
  // Being filled right now: move what arrived into a queued message that
  // takes the rest, so nothing is written into a buffer nobody waits on.
  Connection& c = *connections_[static_cast<std::size_t>(op->peer)];
  if (c.target != op) return;
  if (c.frame.length > max_unexpected_) {
    // Too large to keep for a later receive: it is lost, so is the stream.
    connection_lost(c, "rank " + std::to_string(rank_) + ": the receive of " +
                           std::to_string(c.frame.length) + " bytes from rank " +
                           std::to_string(c.peer) + " (" + describe_tag(c.frame.tag) +
                           ") was given up while its message was arriving, and a message of more "
                           "than " +
                           std::to_string(max_unexpected_) +
                           " bytes (kMaxUnexpectedBytes) cannot be kept for a later receive");
    return;
  }
  auto message = std::make_shared<Queued>();
  message->size = c.frame.length;
  message->data = pool_->take(c.frame.length);
  std::memcpy(message->data.storage.get(), op->buffer.data(), c.payload_got);
  queued_[key].push_front(message);
  c.target = nullptr;
  c.queued = std::move(message);
}

void Engine::abandon_send(const std::shared_ptr<SendOp>& op) {
  std::lock_guard lock(mutex_);
  if (op->done || !op->owned.empty()) return;
  // The caller may free its buffer now: keep a copy of the payload.
  op->owned.assign(op->data, op->data + op->size);
  op->data = op->owned.data();
}

void Engine::abandon_recv(const std::shared_ptr<RecvOp>& op) {
  std::lock_guard lock(mutex_);
  withdraw_locked(op);
}

void Engine::shutdown(Duration timeout) {
  std::unique_lock lock(mutex_);
  if (shut_down_) return;
  // Leaving right after a wait ran out of time, it leaves because of that:
  // the peers learn whom it blamed (abort frames) rather than a goodbye.
  if (broken_.empty() && stalled_ >= 0) fail_all(stalled_, stalled_message_);
  shutting_down_ = true;
  // Finish queued sends (dropped requests' copies included) so the peers get
  // every message this rank sent, then say goodbye on every connection whose
  // last frame is complete (one with a frame cut short just closes: the peer
  // rightly sees that as a failure). A failed engine only flushes its abort
  // frames, and not for long: its peers may have stopped reading.
  constexpr Duration kAbortLinger{500};
  const auto deadline =
      Clock::now() + (broken_.empty() ? timeout : std::min(timeout, kAbortLinger));
  // Nothing will be received any more; a peer may still be sending.
  for (auto& c : connections_)
    if (c && c->parked) unpark(*c, c->frame.length <= max_unexpected_);
  auto flush = [&] {
    while (sends_pending() && Clock::now() < deadline && !driving_) {
      driving_ = true;
      try {
        drive(lock, deadline);
      } catch (...) {
        driving_ = false;
        break;
      }
      driving_ = false;
    }
  };
  flush();
  if (broken_.empty()) {
    for (auto& c : connections_) {
      if (!c || !c->failure.empty() || !c->send_failure.empty() || !c->sends.empty()) continue;
      queue_control(*c, FrameKind::Goodbye, {});
      write_ready(*c);
    }
    flush();
  }
  shut_down_ = true;
  const std::string closed = "rank " + std::to_string(rank_) + ": the transport was shut down";
  if (broken_.empty()) broken_ = closed;  // later operations fail (a CommError)
  for (auto& c : connections_) {
    if (!c) continue;
    for (auto& op : c->sends) complete(*op, closed, c->peer);
    c->sends.clear();
    if (c->target) complete(*c->target, closed, c->peer);
    c->target = nullptr;
    if (c->failure.empty()) c->failure = closed;
    boost::system::error_code ignored;
    c->socket.close(ignored);
  }
  for (auto& [key, ops] : posted_)
    for (auto& op : ops) complete(*op, broken_, broken_peer_);
  posted_.clear();
}

}  // namespace ringlab::tcp
