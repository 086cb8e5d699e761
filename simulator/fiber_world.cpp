#include "simulator/fiber_world.hpp"

#include <sys/mman.h>
#include <ucontext.h>

#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <sstream>
#include <vector>

namespace ringlab::sim {

namespace {

constexpr std::size_t kStackBytes = 256 * 1024;
constexpr std::size_t kGuardBytes = 4096;

// Memory that exists only as addresses (PROT_NONE, nothing committed).
std::shared_ptr<std::byte[]> reserve_address_space(std::size_t bytes) {
  if (bytes == 0) return {};
  void* p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    throw std::runtime_error("could not reserve " + std::to_string(bytes) +
                             " bytes of address space for a virtual buffer");
  return {static_cast<std::byte*>(p), [bytes](std::byte* q) { munmap(q, bytes); }};
}

struct PostedRecv {
  MutBytes buffer;
  bool done = false;
  std::string error;
};

struct Message {
  std::vector<std::byte> data;  // empty when the world moves no data
  std::size_t size = 0;
};

using Key = std::pair<int, Tag>;  // (source rank, tag)

struct Mailbox {
  std::map<Key, std::deque<Message>> queued;
  std::map<Key, std::deque<std::shared_ptr<PostedRecv>>> posted;
};

std::string size_mismatch(int rank, int src, Tag tag, std::size_t expected, std::size_t got) {
  std::ostringstream out;
  out << "rank " << rank << " expected " << expected << " bytes from rank " << src << " ("
      << describe_tag(tag) << ") but the message has " << got
      << " bytes: the ranks passed buffers of different sizes or dtypes";
  return out.str();
}

}  // namespace

struct FiberWorld::State {
  struct Fiber {
    ucontext_t context{};
    std::shared_ptr<std::byte[]> stack;
    bool finished = false;
    bool runnable = true;
    // What it waits for, to explain a deadlock.
    int waiting_for = -1;
    Tag waiting_tag = 0;
  };

  int size = 0;
  bool move_data = true;
  std::vector<Mailbox> boxes;
  std::vector<Fiber> fibers;
  ucontext_t scheduler{};
  int current = -1;
  int failed_rank = -1;
  std::string failure;
  std::exception_ptr first_error;
  const std::function<void(Transport&)>* body = nullptr;
  std::deque<int> ready;

  void make_runnable(int rank) {
    Fiber& f = fibers[static_cast<std::size_t>(rank)];
    if (!f.runnable && !f.finished) {
      f.runnable = true;
      ready.push_back(rank);
    }
  }
  // Called by a fiber that cannot go on: back to the scheduler.
  void block(int src, Tag tag) {
    Fiber& f = fibers[static_cast<std::size_t>(current)];
    f.runnable = false;
    f.waiting_for = src;
    f.waiting_tag = tag;
    swapcontext(&f.context, &scheduler);
    f.waiting_for = -1;
  }
  void fail(int rank, const std::string& why) {
    if (failed_rank >= 0) return;
    failed_rank = rank;
    failure = why;
    for (int r = 0; r < size; ++r) make_runnable(r);
  }
};

namespace {

class FiberRecv final : public Request {
 public:
  FiberRecv(FiberWorld::State& world, int rank, Key key, std::shared_ptr<PostedRecv> posted)
      : world_(world), rank_(rank), key_(key), posted_(std::move(posted)) {}
  ~FiberRecv() override {
    if (!posted_->done) withdraw();
  }
  bool test() override { return posted_->done; }
  void wait(Duration) override {
    while (!posted_->done && world_.failed_rank < 0) world_.block(key_.first, key_.second);
    if (posted_->done) {
      if (!posted_->error.empty()) throw CommError(posted_->error);
      return;
    }
    withdraw();
    std::ostringstream out;
    out << "rank " << rank_ << " stopped waiting for rank " << key_.first << " ("
        << describe_tag(key_.second) << ") because rank " << world_.failed_rank << " failed";
    throw PeerError(world_.failed_rank, out.str());
  }

 private:
  void withdraw() {
    auto& posted = world_.boxes[static_cast<std::size_t>(rank_)].posted;
    auto it = posted.find(key_);
    if (it == posted.end()) return;
    std::erase(it->second, posted_);
    if (it->second.empty()) posted.erase(it);
  }
  FiberWorld::State& world_;
  int rank_;
  Key key_;
  std::shared_ptr<PostedRecv> posted_;
};

class FailedRequest final : public Request {
 public:
  explicit FailedRequest(std::string error) : error_(std::move(error)) {}
  void wait(Duration) override { throw CommError(error_); }
  bool test() override { return true; }

 private:
  std::string error_;
};

class FiberTransport final : public Transport {
 public:
  FiberTransport(FiberWorld::State& world, int rank) : world_(world), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return world_.size; }
  std::string_view name() const override { return world_.move_data ? "fibers" : "fibers (no data)"; }

  std::unique_ptr<Request> isend(int dst, Tag tag, ConstBytes data) override {
    check_peer(dst, "destination rank");
    Mailbox& box = world_.boxes[static_cast<std::size_t>(dst)];
    const Key key{rank_, tag};
    auto it = box.posted.find(key);
    if (it != box.posted.end()) {
      std::shared_ptr<PostedRecv> receiver = std::move(it->second.front());
      it->second.pop_front();
      if (it->second.empty()) box.posted.erase(it);
      if (receiver->buffer.size() == data.size()) {
        if (world_.move_data && !data.empty())
          std::memcpy(receiver->buffer.data(), data.data(), data.size());
      } else {
        receiver->error = size_mismatch(dst, rank_, tag, receiver->buffer.size(), data.size());
      }
      receiver->done = true;
      world_.make_runnable(dst);
    } else {
      Message message;
      message.size = data.size();
      if (world_.move_data) message.data.assign(data.begin(), data.end());
      box.queued[key].push_back(std::move(message));
    }
    return std::make_unique<CompletedRequest>();
  }

  std::unique_ptr<Request> irecv(int src, Tag tag, MutBytes data) override {
    check_peer(src, "source rank");
    Mailbox& box = world_.boxes[static_cast<std::size_t>(rank_)];
    const Key key{src, tag};
    auto it = box.queued.find(key);
    if (it != box.queued.end()) {
      Message message = std::move(it->second.front());
      it->second.pop_front();
      if (it->second.empty()) box.queued.erase(it);
      if (message.size != data.size())
        return std::make_unique<FailedRequest>(
            size_mismatch(rank_, src, tag, data.size(), message.size));
      if (world_.move_data && !data.empty()) std::memcpy(data.data(), message.data.data(), data.size());
      return std::make_unique<CompletedRequest>();
    }
    auto posted = std::make_shared<PostedRecv>();
    posted->buffer = data;
    box.posted[key].push_back(posted);
    return std::make_unique<FiberRecv>(world_, rank_, key, std::move(posted));
  }

  Buffer allocate(std::size_t bytes) override {
    if (world_.move_data) return Transport::allocate(bytes);
    return Buffer{reserve_address_space(bytes), bytes};
  }
  void copy(MutBytes dst, ConstBytes src) override {
    if (world_.move_data) Transport::copy(dst, src);
  }
  void reduce(DType dtype, ReduceOp op, MutBytes acc, ConstBytes in) override {
    if (world_.move_data) Transport::reduce(dtype, op, acc, in);
  }
  void divide(DType dtype, MutBytes data, int world_size) override {
    if (world_.move_data) Transport::divide(dtype, data, world_size);
  }

 private:
  FiberWorld::State& world_;
  int rank_;
};

// makecontext passes int arguments only: the state pointer travels in two halves.
void fiber_main(unsigned high, unsigned low, int rank) {
  auto* state = reinterpret_cast<FiberWorld::State*>((static_cast<std::uintptr_t>(high) << 32) |
                                                     static_cast<std::uintptr_t>(low));
  try {
    FiberTransport transport(*state, rank);
    (*state->body)(transport);
  } catch (const std::exception& error) {
    if (!state->first_error) state->first_error = std::current_exception();
    state->fail(rank, error.what());
  }
  state->fibers[static_cast<std::size_t>(rank)].finished = true;
  // Returning resumes uc_link, the scheduler.
}

}  // namespace

FiberWorld::FiberWorld(int size, bool move_data) : state_(std::make_shared<State>()) {
  if (size < 1)
    throw std::invalid_argument("world size must be at least 1, got " + std::to_string(size));
  state_->size = size;
  state_->move_data = move_data;
  state_->boxes.resize(static_cast<std::size_t>(size));
}

FiberWorld::~FiberWorld() = default;

void FiberWorld::run(const std::function<void(Transport&)>& body) {
  State& s = *state_;
  s.body = &body;
  s.fibers.assign(static_cast<std::size_t>(s.size), {});
  s.ready.clear();
  const auto address = reinterpret_cast<std::uintptr_t>(&s);
  for (int rank = 0; rank < s.size; ++rank) {
    auto& fiber = s.fibers[static_cast<std::size_t>(rank)];
    void* stack = mmap(nullptr, kStackBytes + kGuardBytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED)
      throw std::runtime_error("could not map a fiber stack for rank " + std::to_string(rank));
    mprotect(stack, kGuardBytes, PROT_NONE);  // stack overflow faults instead of corrupting
    fiber.stack = {static_cast<std::byte*>(stack),
                   [](std::byte* p) { munmap(p, kStackBytes + kGuardBytes); }};
    getcontext(&fiber.context);
    fiber.context.uc_stack.ss_sp = fiber.stack.get() + kGuardBytes;
    fiber.context.uc_stack.ss_size = kStackBytes;
    fiber.context.uc_link = &s.scheduler;
    makecontext(&fiber.context, reinterpret_cast<void (*)()>(fiber_main), 3,
                static_cast<unsigned>(address >> 32), static_cast<unsigned>(address & 0xFFFFFFFFu),
                rank);
    s.ready.push_back(rank);
  }
  int unfinished = s.size;
  std::string deadlock;
  while (unfinished > 0) {
    if (s.ready.empty()) {
      // Nothing can change any more: explain, then wake everyone so their
      // waits throw and their stacks unwind.
      std::ostringstream out;
      out << "deadlock: no rank can go on;";
      int shown = 0, first_waiting = -1;
      for (int r = 0; r < s.size; ++r) {
        const auto& f = s.fibers[static_cast<std::size_t>(r)];
        if (f.finished) continue;
        if (first_waiting < 0) first_waiting = r;
        if (shown++ < 16)
          out << " rank " << r << " waits for rank " << f.waiting_for << " ("
              << describe_tag(f.waiting_tag) << ");";
      }
      out << " do the ranks run the same collectives in the same order?";
      deadlock = out.str();
      s.fail(first_waiting, deadlock);
      continue;
    }
    const int rank = s.ready.front();
    s.ready.pop_front();
    auto& fiber = s.fibers[static_cast<std::size_t>(rank)];
    if (fiber.finished || !fiber.runnable) continue;
    s.current = rank;
    swapcontext(&s.scheduler, &fiber.context);
    s.current = -1;
    if (fiber.finished) {
      --unfinished;
      fiber.stack.reset();
    } else if (fiber.runnable) {
      s.ready.push_back(rank);  // yielded while still runnable (not used today)
    }
  }
  s.fibers.clear();
  if (!deadlock.empty()) throw CommError(deadlock);
  if (s.first_error) {
    try {
      std::rethrow_exception(s.first_error);
    } catch (const CommError& error) {
      throw CommError("rank " + std::to_string(s.failed_rank) + ": " + error.what());
    } catch (const std::invalid_argument& error) {
      throw std::invalid_argument("rank " + std::to_string(s.failed_rank) + ": " + error.what());
    } catch (const std::exception& error) {
      throw std::runtime_error("rank " + std::to_string(s.failed_rank) + ": " + error.what());
    }
  }
}

}  // namespace ringlab::sim
