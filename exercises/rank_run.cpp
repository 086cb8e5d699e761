#include "exercises/rank_run.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <type_traits>

#include "exercises/evidence.hpp"

namespace ringlab::exercises {

namespace {

// ---- the barrier's bookkeeping -------------------------------------------------

// A receive that, once waited for, adds what its message carried.
class KnowingRequest final : public Request {
 public:
  KnowingRequest(std::unique_ptr<Request> inner, std::function<void()> on_done)
      : inner_(std::move(inner)), on_done_(std::move(on_done)) {}
  void wait(Duration timeout) override {
    inner_->wait(timeout);
    done();
  }
  bool test() override {
    if (!inner_->test()) return false;
    done();
    return true;
  }

 private:
  void done() {
    if (on_done_) std::exchange(on_done_, nullptr)();
  }
  std::unique_ptr<Request> inner_;
  std::function<void()> on_done_;
};

class KnowingTransport final : public Transport {
 public:
  KnowingTransport(Transport& inner, KnowledgeWorld& world)
      : inner_(inner), world_(world), heard_(1u << inner.rank()) {}

  std::uint32_t heard() const { return heard_; }
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  std::string_view name() const override { return inner_.name(); }

  std::unique_ptr<Request> isend(int dst, Tag tag, ConstBytes data) override {
    {
      const std::lock_guard lock(world_.mutex);
      world_.sends[{rank(), dst, tag}].push_back(heard_);
    }
    return inner_.isend(dst, tag, data);
  }
  std::unique_ptr<Request> irecv(int src, Tag tag, MutBytes data) override {
    const KnowledgeWorld::Key key{src, rank(), tag};
    std::size_t k;
    {
      const std::lock_guard lock(world_.mutex);
      k = world_.receives_posted[key]++;
    }
    return std::make_unique<KnowingRequest>(inner_.irecv(src, tag, data), [this, key, k] {
      const std::lock_guard lock(world_.mutex);
      const auto& carried = world_.sends[key];
      if (k < carried.size()) heard_ |= carried[k];
    });
  }
  MemoryKind memory() const override { return inner_.memory(); }
  Buffer allocate(std::size_t bytes) override { return inner_.allocate(bytes); }
  void copy(MutBytes dst, ConstBytes src) override { inner_.copy(dst, src); }
  void reduce(DType dtype, ReduceOp op, MutBytes acc, ConstBytes in) override {
    inner_.reduce(dtype, op, acc, in);
  }
  void divide(DType dtype, MutBytes data, int world_size) override {
    inner_.divide(dtype, data, world_size);
  }

 private:
  Transport& inner_;
  KnowledgeWorld& world_;
  std::uint32_t heard_;
};

// ---- buffers ----------------------------------------------------------------------

double read_element(const Buffer& buffer, DType dtype, std::size_t i) {
  return visit_dtype(dtype, [&]<typename T>() {
    return static_cast<double>(load_element<T>(buffer.storage.get(), i));
  });
}

void write_element(Buffer& buffer, DType dtype, std::size_t i, double value) {
  visit_dtype(dtype, [&]<typename T>() {
    const T typed = ringlab::wrapped<T>(value);
    std::memcpy(buffer.storage.get() + i * sizeof(T), &typed, sizeof(T));
  });
}

void call(const Function& fn, Comm& comm, std::vector<Elems>& bufs, std::span<const Chunk> blocks,
          const Case& c) {
  std::visit(
      [&](auto f) {
        using F = decltype(f);
        if constexpr (std::is_same_v<F, PingPongFn>)
          f(comm, bufs.at(0));
        else if constexpr (std::is_same_v<F, RootedFn>)
          f(comm, bufs.at(0), c.root);
        else if constexpr (std::is_same_v<F, BlocksReduceFn>)
          f(comm, bufs.at(0), blocks, c.op);
        else if constexpr (std::is_same_v<F, AllReduceFn>)
          f(comm, bufs.at(0), c.op);
        else if constexpr (std::is_same_v<F, BlocksFn>)
          f(comm, bufs.at(0), blocks);
        else if constexpr (std::is_same_v<F, AllToAllFn>)
          f(comm, bufs.at(0), blocks, bufs.at(1), blocks);
        else if constexpr (std::is_same_v<F, ReduceFn>)
          f(comm, bufs.at(0), c.op, c.root);
        else
          f(comm);
      },
      fn);
}

}  // namespace

std::unique_ptr<Transport> knowing_transport(Transport& inner, KnowledgeWorld& world) {
  return std::make_unique<KnowingTransport>(inner, world);
}

std::vector<int> not_heard_from(const Transport& knowing) {
  const auto& transport = dynamic_cast<const KnowingTransport&>(knowing);
  std::vector<int> missing;
  for (int s = 0; s < transport.size(); ++s)
    if (!(transport.heard() & (1u << s))) missing.push_back(s);
  return missing;
}

RankOutcome run_case_on_rank(const Exercise& exercise, const Function& fn, const Case& c,
                             const RankRun& run) {
  const int rank = run.inner.rank();
  const std::vector<BufferPlan> plans = buffers_of(exercise, c, rank);
  std::vector<Buffer> buffers;
  std::vector<Elems> elems;
  for (std::size_t b = 0; b < plans.size(); ++b) {
    Buffer buffer = run.inner.allocate(plans[b].count * element_size(c.dtype));
    for (std::size_t i = 0; i < plans[b].count; ++i)
      write_element(buffer, c.dtype, i, initial_value(exercise, c, rank, static_cast<int>(b), i));
    if (run.recorder)
      run.recorder->name_buffer(buffer.span(), plans[b].name, c.dtype, plans[b].input_offset,
                                plans[b].input_count);
    elems.push_back({buffer.storage.get(), plans[b].count, c.dtype});
    buffers.push_back(std::move(buffer));
  }
  const std::vector<Chunk> blocks = blocks_of(exercise, c);
  std::size_t bytes = 0;
  for (const BufferPlan& plan : plans) bytes += plan.count * element_size(c.dtype);
  const auto watching =
      watching_transport(run.run_on, post_limit(c.ranks, c.count, bytes), run.watch);
  Comm comm(*watching, run.sequence);
  call(fn, comm, elems, blocks, c);

  RankOutcome outcome;
  outcome.ran = true;
  for (std::size_t b = 0; b < plans.size(); ++b)
    for (std::size_t i = 0; i < plans[b].count; ++i) {
      const int buffer = static_cast<int>(b);
      if (!checked(exercise, c, rank, buffer, i)) continue;
      const double held = read_element(buffers[b], c.dtype, i);
      const double expected = expected_value(exercise, c, rank, buffer, i);
      if (same_value(held, expected, c.dtype)) continue;
      if (outcome.wrong++ == 0) {
        outcome.buffer = buffer;
        outcome.buffer_name = plans[b].name;
        outcome.index = i;
        outcome.held = held;
        outcome.expected = expected;
      }
    }
  if (run.knowing) outcome.not_heard = not_heard_from(*run.knowing);
  outcome.result = result_bytes(
      exercise, c, rank,
      [&](int b, std::size_t i) { return read_element(buffers[std::size_t(b)], c.dtype, i); },
      outcome.not_heard);
  return outcome;
}

std::string format_value(double value, DType dtype) {
  char text[64];
  if (is_floating(dtype))
    std::snprintf(text, sizeof text, "%.9g", value);
  else
    std::snprintf(text, sizeof text, "%.0f", value);
  return text;
}

std::string describe(const RankOutcome& outcome, int rank, DType dtype) {
  const std::string who = "rank " + std::to_string(rank);
  if (!outcome.error.empty()) return outcome.error;
  if (!outcome.not_heard.empty()) {
    std::string ranks;
    for (int s : outcome.not_heard) ranks += (ranks.empty() ? "" : ", ") + std::to_string(s);
    return who + " returned from the barrier before hearing from rank" +
           (outcome.not_heard.size() == 1 ? " " : "s ") + ranks +
           " (directly or through others), so they may not have arrived yet";
  }
  if (outcome.wrong == 0) return who + ": right";
  std::string text = who + ": element " + std::to_string(outcome.index) + " of " +
                     outcome.buffer_name + " holds " + format_value(outcome.held, dtype) +
                     ", should hold " + format_value(outcome.expected, dtype);
  if (outcome.wrong > 1)
    text += " (and " + std::to_string(outcome.wrong - 1) + " more element" +
            (outcome.wrong == 2 ? " is" : "s are") + " wrong)";
  return text;
}

}  // namespace ringlab::exercises
