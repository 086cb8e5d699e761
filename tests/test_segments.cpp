// Messages the algorithms send, counted through a transport that forwards
// to the in-process one and can claim its memory is the GPU's, or that it
// prefers fewer messages; the results are checked against the closed form of
// a sum.
// - The reduce-scatter phases cut what a step sends into segments of
//   kReduceSegmentBytes in host memory, and not in GPU memory
//   (primitives/phases.hpp), pipelined or not (overlaps_transfers).
// - all_reduce's auto sends fewer messages for small vectors where the
//   transport prefers that (all_reduce.cpp), traced (through the recorder
//   `--trace` and the Python backend's traces wrap a transport in) or not.
#include <doctest/doctest.h>

#include <atomic>
#include <vector>

#include "primitives/algorithms.hpp"
#include "primitives/phases.hpp"
#include "simulator/recording_transport.hpp"
#include "transport/inproc.hpp"

using namespace ringlab;

namespace {

// Forwards to `inner`, counts the messages sent, and reports `kind` as its
// memory (the memory is still host memory: copy and reduce are the host's).
class CountingTransport final : public Transport {
 public:
  CountingTransport(Transport& inner, MemoryKind kind, bool fewer_messages = false,
                    bool overlaps = false)
      : inner_(inner), kind_(kind), fewer_messages_(fewer_messages), overlaps_(overlaps) {
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
  bool prefers_fewer_messages() const override { return fewer_messages_; }
  bool overlaps_transfers() const override { return overlaps_; }
  int sends = 0;

 private:
  Transport& inner_;
  MemoryKind kind_;
  bool fewer_messages_;
  bool overlaps_;
};

// Rank r's element i: (i % 1000) + 1000 r; the sum over P ranks.
float summed(std::size_t i, int P) {
  return static_cast<float>(P * static_cast<int>(i % 1000) + 1000 * P * (P - 1) / 2);
}

// Each rank's messages in a 2-rank ring all_reduce of `count` float32 (two
// equal blocks): the reduce-scatter step sends its block in `segments`
// messages, the all-gather step in one.
void check_ring(MemoryKind kind, std::size_t count, int expected_sends, bool overlaps = false) {
  run_world(2, [&](Transport& t) {
    CountingTransport counting(t, kind, false, overlaps);
    std::vector<float> values(count);
    for (std::size_t i = 0; i < count; ++i)
      values[i] = static_cast<float>((i % 1000) + 1000 * t.rank());
    Comm comm(counting, 0);
    all_reduce_ring(comm, Elems{reinterpret_cast<std::byte*>(values.data()), count, DType::Float32},
                    ReduceOp::SUM);
    CHECK(counting.sends == expected_sends);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < count; ++i) wrong += values[i] != summed(i, 2);
    CHECK(wrong == 0);
  });
}

// Messages sent by all P ranks in an auto all_reduce of `bytes` of float32,
// through transports that prefer fewer messages or not; `traced`: through a
// sim::RecordingTransport wrapped around them, as a traced rank runs.
int auto_messages(int P, std::size_t bytes, bool fewer_messages, bool traced = false) {
  std::atomic<int> total{0};
  run_world(P, [&](Transport& t) {
    CountingTransport counting(t, MemoryKind::Host, fewer_messages);
    sim::RecordOptions record;
    record.wall_clock = true;
    sim::RecordingTransport recorder(counting, record);
    const std::size_t count = bytes / sizeof(float);
    std::vector<float> values(count);
    for (std::size_t i = 0; i < count; ++i)
      values[i] = static_cast<float>((i % 1000) + 1000 * t.rank());
    Comm comm(traced ? static_cast<Transport&>(recorder) : counting, 0);
    all_reduce_auto(comm, Elems{reinterpret_cast<std::byte*>(values.data()), count, DType::Float32},
                    ReduceOp::SUM);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < count; ++i) wrong += values[i] != summed(i, P);
    CHECK(wrong == 0);
    total += counting.sends;
  });
  return total;
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
    // Pipelined (a transport that overlaps transfers): the same messages.
    check_ring(MemoryKind::Host, 2 * block, segments + 1, true);
    check_ring(MemoryKind::Device, 2 * block, 2, true);
  }
}

TEST_CASE("auto sends fewer messages for small vectors where the transport prefers it") {
  // Up to 64 KiB: reduce_broadcast, where every rank but 0 sends its vector
  // up once and receives the result once, 2(P-1) messages in all; otherwise
  // recursive doubling, log2 P messages from every rank of a power-of-two
  // world.
  for (const std::size_t bytes : {std::size_t{4} << 10, kAllReduceAutoSmallBytes}) {
    INFO(bytes << " bytes");
    for (const int P : {3, 4, 5, 8}) {
      INFO(P << " ranks");
      CHECK(auto_messages(P, bytes, true) == 2 * (P - 1));
    }
    CHECK(auto_messages(4, bytes, false) == 4 * 2);
    CHECK(auto_messages(8, bytes, false) == 8 * 3);
  }
  // On 2 ranks both send 2 messages, and recursive doubling takes one round.
  CHECK(all_reduce_auto_choice(4 << 10, 2, true) == "recursive_doubling");
  CHECK(auto_messages(2, 4 << 10, true) == 2);
  // Above 64 KiB the bytes decide, either way: Rabenseifner on 4 ranks, 2
  // halving and 2 doubling steps of one message from every rank.
  CHECK(auto_messages(4, 2 * kAllReduceAutoSmallBytes, true) == 4 * 4);
  CHECK(auto_messages(4, 2 * kAllReduceAutoSmallBytes, false) == 4 * 4);
}

TEST_CASE("a traced rank chooses as an untraced one: the recorder answers as its transport") {
  // 4 ranks, 4 KiB: reduce_broadcast where the transport prefers fewer
  // messages (2(P-1) = 6 in all), recursive doubling where not (4 x 2).
  CHECK(auto_messages(4, 4 << 10, true, true) == 6);
  CHECK(auto_messages(4, 4 << 10, false, true) == 8);
  for (const bool overlaps : {false, true})
    for (const bool fewer : {false, true})
      run_world(2, [&](Transport& t) {
        CountingTransport counting(t, MemoryKind::Host, fewer, overlaps);
        sim::RecordingTransport recorder(counting, sim::RecordOptions{});
        CHECK(recorder.prefers_fewer_messages() == fewer);
        CHECK(recorder.overlaps_transfers() == overlaps);
      });
}
