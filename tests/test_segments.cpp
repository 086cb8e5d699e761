// The reduce-scatter phases cut what a step sends into segments of
// kReduceSegmentBytes in host memory, and not in GPU memory
// (primitives/phases.hpp). Counted here through a transport that forwards
// to the in-process one and can claim its memory is the GPU's; the results
// are checked against the closed form of a sum.
#include <doctest/doctest.h>

#include <vector>

#include "primitives/algorithms.hpp"
#include "primitives/phases.hpp"
#include "transport/inproc.hpp"

using namespace ringlab;

namespace {

// Forwards to `inner`, counts the messages sent, and reports `kind` as its
// memory (the memory is still host memory: copy and reduce are the host's).
class CountingTransport final : public Transport {
 public:
  CountingTransport(Transport& inner, MemoryKind kind) : inner_(inner), kind_(kind) {
    set_timeout(inner.timeout());
  }
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  std::string_view name() const override { return "counting"; }
  std::unique_ptr<Request> isend(int dst, Tag tag, ConstBytes data) override {
    ++sends;
    return inner_.isend(dst, tag, data);
  }
  std::unique_ptr<Request> irecv(int src, Tag tag, MutBytes data) override {
    return inner_.irecv(src, tag, data);
  }
  MemoryKind memory() const override { return kind_; }
  int sends = 0;

 private:
  Transport& inner_;
  MemoryKind kind_;
};

// Each rank's messages in a 2-rank ring all_reduce of `count` float32 (two
// equal blocks): the reduce-scatter step sends its block in `segments`
// messages, the all-gather step in one.
void check_ring(MemoryKind kind, std::size_t count, int expected_sends) {
  run_world(2, [&](Transport& t) {
    CountingTransport counting(t, kind);
    std::vector<float> values(count);
    for (std::size_t i = 0; i < count; ++i)
      values[i] = static_cast<float>((i % 1000) + 1000 * t.rank());
    Comm comm(counting, 0);
    all_reduce_ring(comm, Elems{reinterpret_cast<std::byte*>(values.data()), count, DType::Float32},
                    ReduceOp::SUM);
    CHECK(counting.sends == expected_sends);
    std::size_t wrong = 0;  // rank 0's i % 1000 plus rank 1's (i % 1000) + 1000
    for (std::size_t i = 0; i < count; ++i)
      wrong += values[i] != static_cast<float>(2 * (i % 1000) + 1000);
    CHECK(wrong == 0);
  });
}

}  // namespace

TEST_CASE("a reduce-scatter step is cut into segments in host memory, not in GPU memory") {
  const std::size_t per_segment = detail::kReduceSegmentBytes / sizeof(float);
  // Blocks of 3 segments, of 2.5 segments (the last one short), of 1 segment.
  for (const auto& [block, segments] : {std::pair<std::size_t, int>{3 * per_segment, 3},
                                        {5 * per_segment / 2, 3},
                                        {per_segment, 1}}) {
    INFO("block of " << block << " elements");
    check_ring(MemoryKind::Host, 2 * block, segments + 1);
    check_ring(MemoryKind::Device, 2 * block, 2);
  }
}
