#include "transport/inproc.hpp"

#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

namespace ringlab {

namespace {

// A receive waiting for its message. The sender copies into `buffer` and sets
// done (or sets error when the sizes differ).
struct PostedRecv {
  MutBytes buffer;
  bool done = false;
  std::string error;
};

using Key = std::pair<int, Tag>;  // (source rank, tag)

// One per destination rank: messages that arrived before their receive, and
// receives posted before their message. FIFO per (source, tag).
struct Mailbox {
  std::mutex mutex;
  std::condition_variable arrived;
  std::map<Key, std::deque<std::vector<std::byte>>> queued;
  std::map<Key, std::deque<std::shared_ptr<PostedRecv>>> posted;
};

std::string size_mismatch(int rank, int src, Tag tag, std::size_t expected, std::size_t got) {
  std::ostringstream out;
  out << "rank " << rank << " expected " << expected << " bytes from rank " << src << " ("
      << describe_tag(tag) << ") but the message has " << got
      << " bytes: the ranks passed tensors of different sizes or dtypes";
  return out.str();
}

}  // namespace

struct InprocWorld::State {
  explicit State(int n) : boxes(static_cast<std::size_t>(n)) {
    for (auto& box : boxes) box = std::make_unique<Mailbox>();
  }
  std::vector<std::unique_ptr<Mailbox>> boxes;
  std::mutex failure_mutex;
  int failed_rank = -1;  // guarded by failure_mutex; also read under a box lock
  std::string failure;

  int size() const { return static_cast<int>(boxes.size()); }
  Mailbox& box(int rank) { return *boxes[static_cast<std::size_t>(rank)]; }
  int failed() {
    std::lock_guard lock(failure_mutex);
    return failed_rank;
  }
};

namespace {

class InprocRecv final : public Request {
 public:
  InprocRecv(std::shared_ptr<InprocWorld::State> state, int rank, Key key,
             std::shared_ptr<PostedRecv> posted)
      : state_(std::move(state)), rank_(rank), key_(key), posted_(std::move(posted)) {}
  ~InprocRecv() override {
    if (!finished_) withdraw();
  }

  bool test() override {
    Mailbox& box = state_->box(rank_);
    std::lock_guard lock(box.mutex);
    return posted_->done;
  }

  void wait(Duration timeout) override {
    Mailbox& box = state_->box(rank_);
    std::unique_lock lock(box.mutex);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    int failed = -1;
    box.arrived.wait_until(lock, deadline, [&] {
      failed = state_->failed();
      return posted_->done || failed >= 0;
    });
    if (posted_->done) {
      finished_ = true;
      if (!posted_->error.empty()) throw CommError(posted_->error);
      return;
    }
    lock.unlock();
    withdraw();
    if (failed >= 0) {
      std::ostringstream out;
      out << "rank " << rank_ << " stopped waiting for rank " << key_.first << " ("
          << describe_tag(key_.second) << ") because rank " << failed << " failed";
      throw PeerError(failed, out.str());
    }
    throw TimeoutError(timeout_message(rank_, "receive from", key_.first, key_.second, timeout));
  }

 private:
  // Removes the posted receive so no sender writes into a buffer nobody waits on.
  void withdraw() {
    Mailbox& box = state_->box(rank_);
    std::lock_guard lock(box.mutex);
    finished_ = true;
    auto it = box.posted.find(key_);
    if (it == box.posted.end()) return;
    std::erase(it->second, posted_);
    if (it->second.empty()) box.posted.erase(it);
  }

  std::shared_ptr<InprocWorld::State> state_;
  int rank_;
  Key key_;
  std::shared_ptr<PostedRecv> posted_;
  bool finished_ = false;
};

class FailedRequest final : public Request {
 public:
  explicit FailedRequest(std::string error) : error_(std::move(error)) {}
  void wait(Duration) override { throw CommError(error_); }
  bool test() override { return true; }

 private:
  std::string error_;
};

class InprocTransport final : public Transport {
 public:
  InprocTransport(std::shared_ptr<InprocWorld::State> state, int rank)
      : state_(std::move(state)), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return state_->size(); }
  std::string_view name() const override { return "inproc"; }

  std::unique_ptr<Request> isend(int dst, Tag tag, ConstBytes data) override {
    check_peer(dst, "destination rank");
    Mailbox& box = state_->box(dst);
    const Key key{rank_, tag};
    std::lock_guard lock(box.mutex);
    auto it = box.posted.find(key);
    if (it != box.posted.end()) {
      std::shared_ptr<PostedRecv> receiver = std::move(it->second.front());
      it->second.pop_front();
      if (it->second.empty()) box.posted.erase(it);
      if (receiver->buffer.size() == data.size()) {
        if (!data.empty()) std::memcpy(receiver->buffer.data(), data.data(), data.size());
      } else {
        receiver->error = size_mismatch(dst, rank_, tag, receiver->buffer.size(), data.size());
      }
      receiver->done = true;
      box.arrived.notify_all();
    } else {
      box.queued[key].emplace_back(data.begin(), data.end());
    }
    return std::make_unique<CompletedRequest>();
  }

  std::unique_ptr<Request> irecv(int src, Tag tag, MutBytes data) override {
    check_peer(src, "source rank");
    Mailbox& box = state_->box(rank_);
    const Key key{src, tag};
    std::lock_guard lock(box.mutex);
    auto it = box.queued.find(key);
    if (it != box.queued.end()) {
      std::vector<std::byte> message = std::move(it->second.front());
      it->second.pop_front();
      if (it->second.empty()) box.queued.erase(it);
      if (message.size() != data.size())
        return std::make_unique<FailedRequest>(
            size_mismatch(rank_, src, tag, data.size(), message.size()));
      if (!data.empty()) std::memcpy(data.data(), message.data(), data.size());
      return std::make_unique<CompletedRequest>();
    }
    auto posted = std::make_shared<PostedRecv>();
    posted->buffer = data;
    box.posted[key].push_back(posted);
    return std::make_unique<InprocRecv>(state_, rank_, key, std::move(posted));
  }

 private:
  std::shared_ptr<InprocWorld::State> state_;
  int rank_;
};

}  // namespace

InprocWorld::InprocWorld(int size) {
  if (size < 1)
    throw std::invalid_argument("world size must be at least 1, got " + std::to_string(size));
  state_ = std::make_shared<State>(size);
}
InprocWorld::~InprocWorld() = default;

int InprocWorld::size() const { return state_->size(); }

std::unique_ptr<Transport> InprocWorld::connect(int rank) {
  if (rank < 0 || rank >= size())
    throw std::invalid_argument("rank " + std::to_string(rank) + " is not in 0.." +
                                std::to_string(size() - 1));
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
  InprocWorld world(size);
  std::mutex error_mutex;
  std::exception_ptr first_error;
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(size));
  for (int rank = 0; rank < size; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        auto transport = world.connect(rank);
        transport->set_timeout(timeout);
        body(*transport);
      } catch (const std::exception& error) {
        {
          std::lock_guard lock(error_mutex);
          // Keep the root cause: ranks woken by fail() report a PeerError later.
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
