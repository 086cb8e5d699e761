#include "transport/nccl_rules/nccl_rules.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
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
void block(NcclRulesWorld::State& s, std::unique_lock<std::mutex>& lock, int rank,
           Duration timeout, Done&& done, TimedOut&& timed_out, int peer, Tag tag) {
  rules::RankState& me = s.rank(rank);
  ++me.waiting;
  struct Leave {
    rules::RankState& me;
    ~Leave() { --me.waiting; }
  } leave{me};
  const auto deadline = Clock::now() + timeout;
  bool suspect = false;
  std::uint64_t seen = 0;
  auto suspect_until = deadline;
  for (;;) {
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
      s.changed.notify_all();
      throw CommError(s.deadlock);
    }
    if (now >= deadline) throw TimeoutError(timed_out());
    s.changed.wait_until(lock, suspect ? std::min(deadline, suspect_until) : deadline);
  }
}

class RulesTransport;

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
    std::lock_guard lock(state_->mutex);
    state_->leave(rank_);
  }

  int rank() const override { return rank_; }
  int size() const override { return state_->size(); }
  std::string_view name() const override { return "nccl_rules"; }

  std::unique_ptr<Request> isend(int dst, Tag tag, ConstBytes data) override {
    check_peer(dst, "isend: dst");
    return post(true, dst, tag, const_cast<std::byte*>(data.data()), data.size());
  }
  std::unique_ptr<Request> irecv(int src, Tag tag, MutBytes data) override {
    check_peer(src, "irecv: src");
    return post(false, src, tag, data.data(), data.size());
  }

  void synchronize() {
    NcclRulesWorld::State& s = *state_;
    std::unique_lock lock(s.mutex);
    s.launch(rank_);
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
  std::unique_ptr<Request> post(bool is_send, int peer, Tag tag, std::byte* data,
                                std::size_t bytes) {
    auto op = std::make_shared<Op>();
    op->rank = rank_;
    op->is_send = is_send;
    op->peer = peer;
    op->tag = tag;
    op->data = data;
    op->bytes = bytes;
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
  if (op_->done) return;
  auto& queued = state_->rank(op_->rank).queued;
  if (op_->group == 0) {
    // Never launched: as if never posted (NcclTransport drops it too).
    queued.erase(std::remove(queued.begin(), queued.end(), op_), queued.end());
    return;
  }
  op_->abandoned = true;  // launched: it still takes its place, but its memory is not touched
}

void RulesRequest::wait(Duration timeout) {
  NcclRulesWorld::State& s = *state_;
  std::unique_lock lock(s.mutex);
  Op& op = *op_;
  if (op.group == 0) s.launch(op.rank);
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

bool RulesRequest::test() {
  std::lock_guard lock(state_->mutex);
  if (op_->group == 0) state_->launch(op_->rank);
  return state_->finished(*op_);
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
  state_->changed_state();
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
  NcclRulesWorld world(size);
  std::mutex error_mutex;
  std::exception_ptr first_error;
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(size));
  for (int rank = 0; rank < size; ++rank) {
    threads.emplace_back([&, rank] {
      // Made outside the try: a failing rank is marked failed before its
      // transport goes, so the others hear of the failure, not of a departure.
      std::unique_ptr<Transport> transport;
      try {
        transport = world.connect(rank);
        transport->set_timeout(timeout);
        body(*transport);
      } catch (const std::exception& error) {
        {
          std::lock_guard lock(error_mutex);
          if (!first_error) first_error = std::current_exception();
        }
        world.fail(rank, error.what());
      }
    });
  }
  for (auto& thread : threads) thread.join();
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace ringlab
