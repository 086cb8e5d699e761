#include "transport/inproc.hpp"

#include <condition_variable>
#include <mutex>
#include <vector>

#include "transport/mailbox.hpp"

namespace ringlab {

namespace {

// One per rank: its mailbox, and the condition its waits sleep on.
struct RankBox {
  explicit RankBox(int rank) : mailbox(rank) {}
  std::mutex mutex;
  std::condition_variable arrived;
  Mailbox mailbox;  // guarded by mutex
};

}  // namespace

struct InprocWorld::State {
  explicit State(int n) {
    boxes.reserve(static_cast<std::size_t>(n));
    for (int rank = 0; rank < n; ++rank) boxes.push_back(std::make_unique<RankBox>(rank));
  }
  std::vector<std::unique_ptr<RankBox>> boxes;
  std::mutex failure_mutex;
  int failed_rank = -1;  // guarded by failure_mutex; also read under a box lock
  std::string failure;

  int size() const { return static_cast<int>(boxes.size()); }
  RankBox& box(int rank) { return *boxes[static_cast<std::size_t>(rank)]; }
  int failed() {
    std::lock_guard lock(failure_mutex);
    return failed_rank;
  }
};

namespace {

class InprocRecv final : public Request {
 public:
  InprocRecv(std::shared_ptr<InprocWorld::State> state, int rank,
             std::shared_ptr<PostedReceive> posted)
      : state_(std::move(state)), rank_(rank), posted_(std::move(posted)) {}
  ~InprocRecv() override { withdraw(); }

  bool test() override {
    RankBox& box = state_->box(rank_);
    std::lock_guard lock(box.mutex);
    return posted_->done;
  }
  // Written under the box's lock before wait() or test() saw it done.
  int source() const override { return posted_->done ? posted_->sender : -1; }

  void wait(Duration timeout) override {
    RankBox& box = state_->box(rank_);
    std::unique_lock lock(box.mutex);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    int failed = -1;
    box.arrived.wait_until(lock, deadline, [&] {
      failed = state_->failed();
      return posted_->done || failed >= 0;
    });
    if (posted_->done) {
      if (!posted_->error.empty()) throw CommError(posted_->error);
      return;
    }
    box.mailbox.withdraw(posted_);
    if (failed >= 0)
      throw PeerError(failed, peer_failed_message(rank_, posted_->source, posted_->tag, failed));
    throw TimeoutError(
        timeout_message(rank_, "receive from", posted_->source, posted_->tag, timeout));
  }

 private:
  // Takes the receive back so no sender writes into a buffer nobody waits on.
  void withdraw() {
    RankBox& box = state_->box(rank_);
    std::lock_guard lock(box.mutex);
    box.mailbox.withdraw(posted_);
  }

  std::shared_ptr<InprocWorld::State> state_;
  int rank_;
  std::shared_ptr<PostedReceive> posted_;
};

class InprocTransport final : public Transport {
 public:
  InprocTransport(std::shared_ptr<InprocWorld::State> state, int rank)
      : state_(std::move(state)), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return state_->size(); }
  std::string_view name() const override { return "inproc"; }
  bool receives_from_any_source() const override { return true; }

  std::unique_ptr<Request> isend(int dst, Tag tag, ConstBytes data) override {
    check_peer(dst, "destination rank");
    RankBox& box = state_->box(dst);
    std::lock_guard lock(box.mutex);
    if (box.mailbox.deliver(rank_, tag, data)) box.arrived.notify_all();
    return std::make_unique<CompletedRequest>();
  }

  std::unique_ptr<Request> irecv(int src, Tag tag, MutBytes data) override {
    check_source(src, "source rank");
    RankBox& box = state_->box(rank_);
    std::lock_guard lock(box.mutex);
    auto posted = box.mailbox.receive(src, tag, data);
    if (!posted->done) return std::make_unique<InprocRecv>(state_, rank_, std::move(posted));
    if (!posted->error.empty()) return std::make_unique<FailedRequest>(posted->error);
    return std::make_unique<CompletedRequest>(posted->sender);
  }

 private:
  std::shared_ptr<InprocWorld::State> state_;
  int rank_;
};

}  // namespace

InprocWorld::InprocWorld(int size) {
  check_world_size(size);
  state_ = std::make_shared<State>(size);
}
InprocWorld::~InprocWorld() = default;

int InprocWorld::size() const { return state_->size(); }

std::unique_ptr<Transport> InprocWorld::connect(int rank) {
  check_rank_in_world(rank, size());
  return std::make_unique<InprocTransport>(state_, rank);
}

void InprocWorld::fail(int rank, const std::string& why) {
  {
    std::lock_guard lock(state_->failure_mutex);
    if (state_->failed_rank >= 0) return;
    state_->failed_rank = rank;
    state_->failure = why;
  }
  for (auto& box : state_->boxes) {
    std::lock_guard lock(box->mutex);
    box->arrived.notify_all();
  }
}

void run_world(int size, const std::function<void(Transport&)>& body, Duration timeout) {
  InprocWorld(size).run(body, timeout);
}

}  // namespace ringlab
