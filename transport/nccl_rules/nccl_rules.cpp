#include "transport/nccl_rules/nccl_rules.hpp"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "transport/nccl_rules/rules_state.hpp"

namespace ringlab {

namespace {

using rules::Op;
using rules::OpPtr;
using Clock = std::chrono::steady_clock;

// Every rank waiting is a deadlock only if it stays so this long: a rank
// with a second thread (a ProcessGroup's async work) may still post.
constexpr auto kDeadlockGrace = std::chrono::milliseconds(100);

// Blocks (the world's lock held) until done() or an error: another rank
// failed (PeerError), the world is deadlocked (CommError with the report), or
// `timeout` passed (TimeoutError from timed_out()).
template <typename Done, typename TimedOut>
void block(NcclRulesWorld::State& s, rules::Lock& lock, int rank,
           Duration timeout, Done&& done, TimedOut&& timed_out, int peer, Tag tag) {
  rules::RankState& me = s.rank(rank);
  s.enter_wait(rank);
  struct Leave {
    NcclRulesWorld::State& s;
    int rank;
    ~Leave() { s.leave_wait(rank); }
  } leave{s, rank};
  const auto deadline = Clock::now() + timeout;
  bool suspect = false;
  int yields = 0;
  std::uint64_t seen = 0;
  auto suspect_until = deadline;
  for (;;) {
    s.looked(rank);
    if (done()) return;
    // The deadlock first: its first reporter fails its rank, and the others
    // should report the deadlock, not that rank.
    if (!s.deadlock.empty()) throw CommError(s.deadlock);
    if (s.failed_rank >= 0)
      throw PeerError(s.failed_rank, peer_failed_message(rank, peer, tag, s.failed_rank));
    const auto now = Clock::now();
    if (!s.stuck()) {
      suspect = false;
    } else if (!suspect || s.generation != seen) {
      suspect = true;
      seen = s.generation;
      suspect_until = now + kDeadlockGrace;
    } else if (now >= suspect_until) {
      s.deadlock = s.describe_deadlock();
      s.wake_all();
      throw CommError(s.deadlock);
    }
    if (now >= deadline) throw TimeoutError(timed_out());
    if (yields++ < s.yields) {
      lock.unlock();
      std::this_thread::yield();
      lock.lock();
      continue;
    }
    // Woken when this rank's group finishes, or by wake_all. The rank whose
    // wait made every rank wait (or the ones woken when a departure did)
    // watches for the deadlock; the others need not look.
    me.changed.wait_until(lock, suspect ? std::min(deadline, suspect_until) : deadline);
  }
}

// Waits (the lock held) until op's group has finished, launching its
// rank's queue first if op is still in it; throws as a wait does.
void await(NcclRulesWorld::State& s, rules::Lock& lock, Op& op,
           Duration timeout) {
  if (op.group == 0) {
    s.launch(op.rank);
    s.wake_finished(lock);
  }
  block(
      s, lock, op.rank, timeout, [&] { return s.finished(op); },
      [&] {
        return timeout_message(op.rank, op.is_send ? "send to" : "receive from", op.peer, op.tag,
                               timeout) +
               " (under NCCL's rules the operation stays launched)";
      },
      op.peer, op.tag);
  if (!op.error.empty()) throw CommError(op.error);
}

// Nobody will wait for op any more (the lock held): never launched, it is as
// if never posted (NcclTransport drops it too); launched, it still takes its
// place, but its memory is not touched.
void drop(NcclRulesWorld::State& s, const OpPtr& op) {
  if (op->done) return;
  if (op->group == 0) {
    auto& queued = s.rank(op->rank).queued;
    queued.erase(std::remove(queued.begin(), queued.end(), op), queued.end());
    return;
  }
  op->abandoned = true;
}

class RulesRequest final : public Request {
 public:
  RulesRequest(std::shared_ptr<NcclRulesWorld::State> state, OpPtr op)
      : state_(std::move(state)), op_(std::move(op)) {}
  ~RulesRequest() override;
  void wait(Duration timeout) override;
  bool test() override;

 private:
  std::shared_ptr<NcclRulesWorld::State> state_;
  OpPtr op_;
};

class RulesTransport final : public Transport {
 public:
  RulesTransport(std::shared_ptr<NcclRulesWorld::State> state, int rank)
      : state_(std::move(state)), rank_(rank) {}
  ~RulesTransport() override {
    std::unique_lock lock(state_->mutex);
    state_->leave(rank_);
    state_->wake_finished(lock);
  }

  int rank() const override { return rank_; }
  int size() const override { return state_->size(); }
  std::string_view name() const override { return "nccl_rules"; }

  std::unique_ptr<Request> isend(int dst, Tag tag, ConstBytes data) override {
    check_peer(dst, "isend: dst");
    return post(true, dst, tag, const_cast<std::byte*>(data.data()), data.size());
  }
  std::unique_ptr<Request> irecv(int src, Tag tag, MutBytes data) override {
    check_source(src, "irecv: src");
    return post(false, src, tag, data.data(), data.size());
  }

  // What the default does (both posted, one group launched, the send waited
  // for, then the receive), under one lock instead of six: a world of 1024
  // rank threads queues on that lock.
  void sendrecv(int dst, Tag send_tag, ConstBytes send_data, int src, Tag recv_tag,
                MutBytes recv_data) override {
    check_source(src, "irecv: src");  // as the default's irecv and isend say
    check_peer(dst, "isend: dst");
    const OpPtr recv = make_op(false, src, recv_tag, recv_data.data(), recv_data.size());
    const OpPtr send =
        make_op(true, dst, send_tag, const_cast<std::byte*>(send_data.data()), send_data.size());
    NcclRulesWorld::State& s = *state_;
    std::unique_lock lock(s.mutex);
    s.rank(rank_).queued.push_back(recv);
    s.rank(rank_).queued.push_back(send);
    try {
      await(s, lock, *send, timeout());
      await(s, lock, *recv, timeout());
    } catch (...) {
      drop(s, recv);
      drop(s, send);
      throw;
    }
  }

  void synchronize() {
    NcclRulesWorld::State& s = *state_;
    std::unique_lock lock(s.mutex);
    s.launch(rank_);
    s.wake_finished(lock);
    rules::RankState& me = s.rank(rank_);
    block(
        s, lock, rank_, timeout(), [&] { return me.groups.empty(); },
        [&] {
          return "rank " + std::to_string(rank_) + " timed out after " +
                 std::to_string(timeout().count()) + " ms synchronizing: " +
                 std::to_string(me.groups.size()) + " launched groups have not finished";
        },
        -1, 0);
  }

 private:
  OpPtr make_op(bool is_send, int peer, Tag tag, std::byte* data, std::size_t bytes) const {
    auto op = std::make_shared<Op>();
    op->rank = rank_;
    op->is_send = is_send;
    op->peer = peer;
    op->tag = tag;
    op->data = data;
    op->bytes = bytes;
    return op;
  }

  std::unique_ptr<Request> post(bool is_send, int peer, Tag tag, std::byte* data,
                                std::size_t bytes) {
    OpPtr op = make_op(is_send, peer, tag, data, bytes);
    {
      std::lock_guard lock(state_->mutex);
      state_->rank(rank_).queued.push_back(op);
    }
    return std::make_unique<RulesRequest>(state_, std::move(op));
  }

  std::shared_ptr<NcclRulesWorld::State> state_;
  int rank_;
};

RulesRequest::~RulesRequest() {
  std::lock_guard lock(state_->mutex);
  drop(*state_, op_);
}

void RulesRequest::wait(Duration timeout) {
  std::unique_lock lock(state_->mutex);
  await(*state_, lock, *op_, timeout);
}

bool RulesRequest::test() {
  std::unique_lock lock(state_->mutex);
  if (op_->group == 0) state_->launch(op_->rank);
  // The answer as of the launch: wake_finished lets the others run.
  const bool done = state_->finished(*op_);
  state_->wake_finished(lock);
  return done;
}

}  // namespace

NcclRulesWorld::NcclRulesWorld(int size) {
  check_world_size(size);
  state_ = std::make_shared<State>(size);
}
NcclRulesWorld::~NcclRulesWorld() = default;

int NcclRulesWorld::size() const { return state_->size(); }

std::unique_ptr<Transport> NcclRulesWorld::connect(int rank) {
  check_rank_in_world(rank, size());
  return std::make_unique<RulesTransport>(state_, rank);
}

void NcclRulesWorld::fail(int rank, const std::string& why) {
  std::lock_guard lock(state_->mutex);
  if (state_->failed_rank >= 0) return;
  state_->failed_rank = rank;
  state_->failure = why;
  state_->wake_all();
}

void synchronize_nccl_rules(Transport& transport) {
  auto* rules = dynamic_cast<RulesTransport*>(&transport);
  if (!rules)
    throw std::invalid_argument("synchronize_nccl_rules: rank " + std::to_string(transport.rank()) +
                                "'s transport is " + std::string(transport.name()) +
                                ", not nccl_rules");
  rules->synchronize();
}

void run_nccl_rules_world(int size, const std::function<void(Transport&)>& body,
                          Duration timeout) {
  NcclRulesWorld(size).run(body, timeout);
}

}  // namespace ringlab
