#include "simulator/fiber_world.hpp"

#include <sys/mman.h>
#include <ucontext.h>

#include <algorithm>
#include <deque>
#include <exception>
#include <sstream>
#include <vector>

#include "transport/mailbox.hpp"

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

}  // namespace

struct FiberWorld::State {
  struct Fiber {
    ucontext_t context{};
    std::shared_ptr<std::byte[]> stack;
    bool finished = false;
    bool runnable = true;
    // While blocked: what it waits for (to explain a stall) and until when.
    int waiting_for = -1;
    Tag waiting_tag = 0;
    Duration deadline{};
    bool timed_out = false;  // woken because virtual time reached its deadline
  };

  int size = 0;
  bool move_data = true;
  bool share_memory = false;
  // share_memory: the reservation every allocate() returns, and its size.
  std::shared_ptr<std::byte[]> shared;
  std::size_t shared_bytes = 0;
  std::vector<Mailbox> boxes;
  std::vector<Fiber> fibers;
  ucontext_t scheduler{};
  int current = -1;
  int failed_rank = -1;
  std::string failure;
  std::exception_ptr first_error;
  const std::function<void(Transport&)>* body = nullptr;
  std::deque<int> ready;
  // Virtual time: it moves only when every unfinished rank waits (see
  // fiber_world.hpp), to the earliest deadline among them.
  Duration now{};
  // Who waited for whom the last time nobody could go on (before any failure).
  std::string stall;

  Fiber& fiber(int rank) { return fibers[static_cast<std::size_t>(rank)]; }
  void make_runnable(int rank) {
    Fiber& f = fiber(rank);
    if (!f.runnable && !f.finished) {
      f.runnable = true;
      ready.push_back(rank);
    }
  }
  Duration deadline_after(Duration timeout) const {
    return timeout >= Duration::max() - now ? Duration::max() : now + timeout;
  }
  // Called by a fiber that cannot go on: back to the scheduler. Returns true
  // if it was woken because virtual time reached `deadline`.
  bool block(int src, Tag tag, Duration deadline) {
    Fiber& f = fiber(current);
    f.runnable = false;
    f.waiting_for = src;
    f.waiting_tag = tag;
    f.deadline = deadline;
    f.timed_out = false;
    swapcontext(&f.context, &scheduler);
    f.waiting_for = -1;
    return f.timed_out;
  }
  // Called by a fiber that can go on but lets the others run first.
  void yield() {
    if (current >= 0) swapcontext(&fiber(current).context, &scheduler);
  }
  void fail(int rank, const std::string& why) {
    if (failed_rank >= 0) return;
    failed_rank = rank;
    failure = why;
    for (int r = 0; r < size; ++r) make_runnable(r);
  }
  // Nobody can go on: note who waits for whom, move virtual time to the
  // earliest deadline and wake the ranks whose waits end there.
  void advance_time();
};

namespace {

class FiberRecv final : public Request {
 public:
  FiberRecv(FiberWorld::State& world, int rank, std::shared_ptr<PostedReceive> posted)
      : world_(world), rank_(rank), posted_(std::move(posted)) {}
  ~FiberRecv() override { box().withdraw(posted_); }
  bool test() override {
    if (!posted_->done) world_.yield();  // a polling loop lets the others run
    return posted_->done;
  }
  int source() const override { return posted_->done ? posted_->sender : -1; }
  void wait(Duration timeout) override {
    const Duration deadline = world_.deadline_after(timeout);
    bool timed_out = false;
    while (!posted_->done && world_.failed_rank < 0 && !timed_out)
      timed_out = world_.block(posted_->source, posted_->tag, deadline);
    if (posted_->done) {
      if (!posted_->error.empty()) throw CommError(posted_->error);
      return;
    }
    box().withdraw(posted_);
    if (world_.failed_rank >= 0)
      throw PeerError(world_.failed_rank, peer_failed_message(rank_, posted_->source, posted_->tag,
                                                              world_.failed_rank));
    throw TimeoutError(
        timeout_message(rank_, "receive from", posted_->source, posted_->tag, timeout));
  }

 private:
  Mailbox& box() { return world_.boxes[static_cast<std::size_t>(rank_)]; }
  FiberWorld::State& world_;
  int rank_;
  std::shared_ptr<PostedReceive> posted_;
};

class FiberTransport final : public Transport {
 public:
  FiberTransport(FiberWorld::State& world, int rank) : world_(world), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return world_.size; }
  std::string_view name() const override {
    return world_.move_data ? "fibers" : "fibers (no data)";
  }
  bool receives_from_any_source() const override { return true; }

  std::unique_ptr<Request> isend(int dst, Tag tag, ConstBytes data) override {
    check_peer(dst, "destination rank");
    if (world_.boxes[static_cast<std::size_t>(dst)].deliver(rank_, tag, data))
      world_.make_runnable(dst);
    return std::make_unique<CompletedRequest>();
  }

  std::unique_ptr<Request> irecv(int src, Tag tag, MutBytes data) override {
    check_source(src, "source rank");
    auto posted = world_.boxes[static_cast<std::size_t>(rank_)].receive(src, tag, data);
    if (!posted->done) return std::make_unique<FiberRecv>(world_, rank_, std::move(posted));
    if (!posted->error.empty()) return std::make_unique<FailedRequest>(posted->error);
    return std::make_unique<CompletedRequest>(posted->sender);
  }

  Buffer allocate(std::size_t bytes) override {
    if (world_.move_data) return Transport::allocate(bytes);
    if (!world_.share_memory) return Buffer{reserve_address_space(bytes), bytes};
    if (bytes > world_.shared_bytes || !world_.shared) {
      // Grow by doubling so a run asks the kernel a handful of times; buffers
      // handed out earlier keep the older reservation alive.
      const std::size_t size = std::max({bytes, 2 * world_.shared_bytes, std::size_t{1} << 20});
      world_.shared = reserve_address_space(size);
      world_.shared_bytes = size;
    }
    return Buffer{world_.shared, bytes};
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

FiberWorld::FiberWorld(int size, bool move_data, bool share_memory)
    : state_(std::make_shared<State>()) {
  check_world_size(size);
  state_->size = size;
  state_->move_data = move_data;
  state_->share_memory = share_memory && !move_data;
  state_->boxes.reserve(static_cast<std::size_t>(size));
  for (int rank = 0; rank < size; ++rank) state_->boxes.emplace_back(rank, move_data);
}

FiberWorld::~FiberWorld() = default;

void FiberWorld::run(const std::function<void(Transport&)>& body) {
  State& s = *state_;
  s.body = &body;
  s.fibers.assign(static_cast<std::size_t>(s.size), {});
  s.ready.clear();
  s.now = Duration{};
  s.stall.clear();
  s.failed_rank = -1;
  s.failure.clear();
  s.first_error = nullptr;
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
  while (unfinished > 0) {
    if (s.ready.empty()) {
      s.advance_time();
      continue;
    }
    const int rank = s.ready.front();
    s.ready.pop_front();
    auto& fiber = s.fiber(rank);
    if (fiber.finished || !fiber.runnable) continue;
    s.current = rank;
    swapcontext(&s.scheduler, &fiber.context);
    s.current = -1;
    if (fiber.finished) {
      --unfinished;
      fiber.stack.reset();
    } else if (fiber.runnable) {
      s.ready.push_back(rank);  // yielded (Request::test) while still runnable
    }
  }
  s.fibers.clear();
  if (!s.first_error) return;
  const std::string prefix = "rank " + std::to_string(s.failed_rank) + ": ";
  try {
    std::rethrow_exception(s.first_error);
  } catch (const TimeoutError& error) {
    // Waits time out only when no rank can go on: explain the deadlock.
    throw CommError(s.stall.empty() ? prefix + error.what() : s.stall);
  } catch (const CommError& error) {
    throw CommError(prefix + error.what());
  } catch (const std::invalid_argument& error) {
    throw std::invalid_argument(prefix + error.what());
  } catch (const std::exception& error) {
    throw std::runtime_error(prefix + error.what());
  }
}

void FiberWorld::State::advance_time() {
  Duration earliest = Duration::max();
  for (const Fiber& f : fibers)
    if (!f.finished) earliest = std::min(earliest, f.deadline);
  if (failed_rank < 0) {
    std::ostringstream out;
    out << "deadlock: no rank can go on;";
    int shown = 0;
    for (int r = 0; r < size; ++r) {
      const Fiber& f = fiber(r);
      if (!f.finished && shown++ < 16)
        out << " rank " << r << " waits for " << describe_source(f.waiting_for) << " ("
            << describe_tag(f.waiting_tag) << ");";
    }
    out << " do the ranks run the same collectives in the same order?";
    stall = out.str();
  }
  now = earliest;
  for (int r = 0; r < size; ++r) {
    Fiber& f = fiber(r);
    if (f.finished || f.deadline != earliest) continue;
    f.timed_out = true;
    make_runnable(r);
  }
}

}  // namespace ringlab::sim
