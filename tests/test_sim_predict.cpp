// The prediction paths against each other and against independent forms:
//  - the message-level path (traffic.hpp), which runs the algorithms without
//    data, against the recorded path (record.hpp), which runs them with
//    every buffer: same steps, messages, bytes per rank and total time, for
//    every algorithm of every collective on small worlds;
//  - the closed forms (closed_form.hpp), derived from the algorithms'
//    descriptions without running them, against the message-level path:
//    the same to the last bit, at many (ranks, size) pairs;
//  - both against the textbook totals where the blocks are even.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "primitives/algorithms.hpp"
#include "simulator/closed_form.hpp"
#include "simulator/cost.hpp"
#include "simulator/forecast.hpp"
#include "simulator/traffic.hpp"

using namespace ringlab;
using namespace ringlab::sim;

namespace {

Scenario scenario(Collective c, const std::string& algorithm, int P, std::size_t count,
                  DType dtype = DType::Float32, int root = 0) {
  Scenario s;
  s.collective = c;
  s.algorithm = algorithm;
  s.ranks = P;
  s.count = count;
  s.dtype = dtype;
  s.root = root;
  s.values = ValueMode::Off;
  return s;
}

// Not round numbers, so a swapped term shows; gamma non-zero so reductions count.
CostModel odd_model() {
  CostModel m;
  m.alpha_s = 3.1e-6;
  m.bandwidth_Bps = 7.3e9;
  m.gamma_s_per_byte = 0.41e-9;
  return m;
}

std::vector<std::uint64_t> widen(const std::vector<std::size_t>& v) { return {v.begin(), v.end()}; }

// Sizes that hit the algorithms' edges: empty, fewer elements than ranks,
// uneven blocks, one element over a 1 MiB segment, several segments.
std::vector<std::size_t> counts_for(int P) {
  const auto uP = static_cast<std::size_t>(P);
  return {0, 1, uP - 1, uP, 3 * uP + 1, 1000, 65536, (1u << 18) + 1, 3u << 18, uP << 16};
}

}  // namespace

TEST_CASE("the message-level path prices every algorithm as the recorded path does") {
  const CostModel m = odd_model();
  for (const CollectiveInfo& row : collective_table())
    for (const std::string& algorithm : algorithm_names(row.id))
      for (int P : {1, 2, 3, 5, 8}) {
        for (std::size_t count :
             {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{70000}}) {
          CAPTURE(row.name);
          CAPTURE(algorithm);
          CAPTURE(P);
          CAPTURE(count);
          const Scenario s = scenario(row.id, algorithm, P, count, DType::Float32, P / 2);
          const Run run = simulate(s);
          const Traffic traffic = simulate_traffic(s);
          CHECK(traffic.steps == run.steps);
          CHECK(traffic.messages.size() == run.messages.size());
          CHECK(traffic.bytes_sent == widen(run.bytes_sent));
          CHECK(traffic.messages_sent == widen(run.messages_sent));
          const Prediction a = predict(run, m), b = predict(traffic, m);
          CHECK(b.total_s == a.total_s);  // exactly
          REQUIRE(a.steps.size() == b.steps.size());
          for (std::size_t k = 0; k < a.steps.size(); ++k) {
            CHECK(a.steps[k].messages == b.steps[k].messages);
            CHECK(a.steps[k].bytes == b.steps[k].bytes);
          }
        }
      }
}

TEST_CASE("closed forms agree exactly with the message-level path") {
  const CostModel m = odd_model();
  struct Case {
    Collective c;
    const char* algorithm;
  };
  const Case cases[] = {
      {Collective::AllReduce, "ring"},         {Collective::AllReduce, "recursive_doubling"},
      {Collective::AllReduce, "rabenseifner"}, {Collective::AllReduce, "reduce_broadcast"},
      {Collective::AllReduce, "binary_tree"},  {Collective::AllReduce, "auto"},
      {Collective::AllGather, "ring"},         {Collective::ReduceScatter, "ring"},
      {Collective::AllToAll, "pairwise"},      {Collective::Barrier, "dissemination"},
      {Collective::Broadcast, "flat"},         {Collective::Broadcast, "binomial"},
  };
  for (const Case& c : cases)
    for (int P : {1, 2, 3, 4, 5, 6, 7, 8, 11, 12, 16, 24, 33}) {
      // Lists (all_gather, reduce_scatter, all_to_all) hold P blocks: keep them small.
      const bool list = collective_info(c.c).size_blocks(P) > 1;
      for (std::size_t count : counts_for(P)) {
        if (list && count > 70000) continue;
        CAPTURE(collective_name(c.c));
        CAPTURE(c.algorithm);
        CAPTURE(P);
        CAPTURE(count);
        const Scenario s = scenario(c.c, c.algorithm, P, count, DType::Float32, P > 2 ? 2 : 0);
        std::string why;
        const auto form = closed_form(s, &why);
        REQUIRE_MESSAGE(form.has_value(), why);
        const Traffic traffic = simulate_traffic(s);
        CHECK(form->steps == traffic.steps);
        CHECK(form->messages == traffic.messages.size());
        CHECK(form->bytes_sent == traffic.bytes_sent);
        CHECK(form->messages_sent == traffic.messages_sent);
        const Prediction a = predict(*form, m), b = predict(traffic, m);
        CHECK(a.total_s == b.total_s);  // exactly, not approximately
        REQUIRE(a.steps.size() == b.steps.size());
        for (std::size_t k = 0; k < a.steps.size(); ++k) {
          CAPTURE(k);
          CHECK(a.steps[k].messages == b.steps[k].messages);
          CHECK(a.steps[k].bytes == b.steps[k].bytes);
          CHECK(a.steps[k].seconds == b.steps[k].seconds);
        }
      }
    }
}

TEST_CASE("closed forms at other dtypes and with several segments per ring step") {
  const CostModel m = odd_model();
  for (DType dtype : {DType::Float64, DType::Int32, DType::Int64})
    for (const char* algorithm : {"ring", "rabenseifner", "binary_tree", "recursive_doubling"})
      for (int P : {2, 3, 4, 6}) {
        CAPTURE(algorithm);
        CAPTURE(P);
        const std::size_t count = (std::size_t{5} << 20) / element_size(dtype) + 3;  // ~5 MiB
        const Scenario s = scenario(Collective::AllReduce, algorithm, P, count, dtype);
        std::string why;
        const auto form = closed_form(s, &why);
        if (!form) {
          MESSAGE(why);
          continue;
        }
        const Traffic traffic = simulate_traffic(s);
        CHECK(predict(*form, m).total_s == predict(traffic, m).total_s);
        CHECK(form->bytes_sent == traffic.bytes_sent);
      }
}

TEST_CASE("closed forms follow the textbook totals where blocks are even") {
  const CostModel m = odd_model();
  const double a = m.alpha_s, beta = m.beta(), g = m.gamma_s_per_byte;
  for (int P : {2, 4, 16, 1024, 65536}) {
    CAPTURE(P);
    // Small enough that no step is cut into 1 MiB segments (the textbook
    // forms count one message per step).
    const std::size_t count = static_cast<std::size_t>(P) * (P <= 1024 ? 64 : 2);
    const double n = static_cast<double>(count * 4);
    const auto ring = closed_form(scenario(Collective::AllReduce, "ring", P, count));
    REQUIRE(ring);
    CHECK(ring->steps == static_cast<Step>(2 * (P - 1)));
    CHECK(predict(*ring, m).total_s ==
          doctest::Approx(2 * (P - 1) * a + 2.0 * (P - 1) / P * n * beta + (P - 1.0) / P * n * g)
              .epsilon(1e-9)
              .scale(0));
    const double L = std::log2(P);
    const auto rd = closed_form(scenario(Collective::AllReduce, "recursive_doubling", P, count));
    REQUIRE(rd);
    CHECK(predict(*rd, m).total_s ==
          doctest::Approx(L * (a + n * beta + n * g)).epsilon(1e-9).scale(0));
    const auto rab = closed_form(scenario(Collective::AllReduce, "rabenseifner", P, count));
    REQUIRE(rab);
    CHECK(predict(*rab, m).total_s ==
          doctest::Approx(2 * L * a + 2.0 * (P - 1) / P * n * beta + (P - 1.0) / P * n * g)
              .epsilon(1e-9)
              .scale(0));
  }
}

TEST_CASE("a ring whose blocks need different segment counts has no closed form, and says why") {
  // q = 2^18 float32 elements is exactly one 1 MiB segment; q + 1 needs two.
  const std::size_t count = 3 * (std::size_t{1} << 18) + 1;
  std::string why;
  CHECK_FALSE(closed_form(scenario(Collective::AllReduce, "ring", 3, count), &why));
  CHECK(why.find("segments") != std::string::npos);
  CHECK_FALSE(closed_form(scenario(Collective::Reduce, "gloo_ring", 4, 8), &why));
  CHECK(why.find("no closed form for reduce gloo_ring") != std::string::npos);
}

TEST_CASE("prediction paths take worlds the recorder cannot") {
  CHECK_THROWS_WITH_AS(simulate(scenario(Collective::AllReduce, "ring", 2048, 8)),
                       doctest::Contains("1 to 1024"), std::invalid_argument);
  const Traffic traffic =
      simulate_traffic(scenario(Collective::AllReduce, "recursive_doubling", 2048, 8));
  CHECK(traffic.steps == 11);
  CHECK_THROWS_WITH_AS(simulate_traffic(scenario(Collective::AllReduce, "ring", 8193, 8)),
                       doctest::Contains("1 to 8192"), std::invalid_argument);
  const auto form = closed_form(scenario(Collective::AllReduce, "ring", 65536, 1 << 20));
  REQUIRE(form);
  CHECK(form->messages == 2ull * 65535 * 65536);
  CHECK_THROWS_WITH_AS(closed_form(scenario(Collective::AllReduce, "ring", 65537, 8)),
                       doctest::Contains("1 to 65536"), std::invalid_argument);
}

// ---- segments, topologies, auto and limits (issues 21, 22, 25) -----------------

namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

// Steps of the ring all_reduce whose blocks of N/P bytes are cut into
// g = ceil(N/P / 1 MiB) segments, one step each in the reduce-scatter:
// (P-1) g + (P-1).
Step segmented_ring_steps(std::uint64_t P, std::uint64_t bytes) {
  const std::uint64_t block = bytes / P, g = block == 0 ? 1 : (block + kMiB - 1) / kMiB;
  return static_cast<Step>((P - 1) * (g + 1));
}

}  // namespace

TEST_CASE("a segmented ring takes (P-1)(g+1) steps, and the note says why: 63 at 64 MiB on 8") {
  // Issue 25: 8 ranks show 14 steps at 1 MiB, 21 at 9 MiB and 63 at 64 MiB.
  for (const std::uint64_t bytes : {1 * kMiB, 9 * kMiB, 64 * kMiB}) {
    CAPTURE(bytes);
    const Scenario s = scenario(Collective::AllReduce, "ring", 8, bytes / 4);
    const Step expected = segmented_ring_steps(8, bytes);
    const auto form = closed_form(s);
    REQUIRE(form);
    CHECK(form->steps == expected);
    CHECK(simulate_traffic(s).steps == expected);
    const std::string note = segment_note(s);
    if (expected == 14) {
      CHECK(note.empty());
    } else {
      CHECK(note.find(std::to_string(expected) + " steps instead of the unsegmented 2(P-1) = 14") !=
            std::string::npos);
      CHECK(note.find("1 MiB") != std::string::npos);
    }
  }
  CHECK(
      segment_note(scenario(Collective::AllReduce, "ring", 8, 16 * kMiB)).find("into 8 segments") !=
      std::string::npos);
  // auto at 64 MiB on 8 ranks runs Rabenseifner, whose halving rounds cut
  // halves of 32, 16 and 8 MiB: 56 steps, then 3 for the all-gather.
  const Scenario rab = scenario(Collective::AllReduce, "rabenseifner", 8, 16 * kMiB);
  REQUIRE(closed_form(rab));
  CHECK(closed_form(rab)->steps == 32 + 16 + 8 + 3);
  CHECK(segment_note(rab).find("32 + 16 + 8 = 56 steps") != std::string::npos);
}

TEST_CASE("the binary tree's segments: 2(S + H - 1) steps, S = ceil(N / 256 KiB)") {
  CHECK(tree_segments(0, DType::Float32) == 1);
  CHECK(tree_segments(65536, DType::Float32) == 1);  // exactly 256 KiB
  CHECK(tree_segments(65537, DType::Float32) == 2);
  CHECK(tree_segments(std::size_t{1} << 40, DType::Float64) == std::size_t{1}
                                                                   << 18);  // at most 2^18
  // 8 ranks: a heap tree of height floor(log2 8) = 3; 64 MiB is 256 segments.
  const Scenario s = scenario(Collective::AllReduce, "binary_tree", 8, 16 * kMiB);
  REQUIRE(closed_form(s));
  CHECK(closed_form(s)->steps == 2 * (256 + 3 - 1));
  CHECK(segment_note(s).find("256 segments") != std::string::npos);
}

TEST_CASE("the ring's closed form holds on the ring topology, exactly") {
  CostModel m = odd_model();
  m.topology = Topology::Ring;
  struct Case {
    Collective c;
    const char* algorithm;
  };
  for (const Case& c : {Case{Collective::AllReduce, "ring"}, Case{Collective::AllGather, "ring"},
                        Case{Collective::ReduceScatter, "ring"}})
    for (int P : {2, 3, 5, 8, 16})
      for (std::size_t count : {std::size_t{1}, std::size_t{1000}, std::size_t{3} << 18}) {
        CAPTURE(c.algorithm);
        CAPTURE(P);
        CAPTURE(count);
        const Scenario s = scenario(c.c, c.algorithm, P, count);
        const Forecast f = forecast(s, m);
        CHECK(f.path == PredictionPath::ClosedForm);
        CHECK(f.prediction.total_s == predict(simulate_traffic(s), m).total_s);
      }
  // Others cross several links: the message-level path answers them.
  CHECK(forecast(scenario(Collective::AllReduce, "rabenseifner", 8, 1000), m).path ==
        PredictionPath::MessageLevel);
}

TEST_CASE("auto runs the fastest predicted for the topology given; the measured rule beside it") {
  const CostModel fc = odd_model();
  CostModel ring = fc;
  ring.topology = Topology::Ring;
  // 16 ranks, 64 MiB: on a ring of links the ring algorithm crosses one link
  // a message; its time is the segmented ring's textbook form: 15 x 4
  // segments of 1 MiB reduced, then 15 blocks of 4 MiB.
  const Scenario big = scenario(Collective::AllReduce, "auto", 16, 16 * kMiB);
  const double S = static_cast<double>(kMiB), a = fc.alpha_s, b = fc.beta(),
               g = fc.gamma_s_per_byte;
  const Forecast on_ring = forecast(big, ring);
  CHECK(on_ring.runs_as == "ring");
  CHECK(
      on_ring.prediction.total_s ==
      doctest::Approx(15 * 4 * (a + S * b + S * g) + 15 * (a + 4 * S * b)).epsilon(1e-9).scale(0));
  CHECK(on_ring.rule == "rabenseifner");  // what a ProcessGroup's auto runs: measured on hosts
  CHECK(on_ring.rule_s > on_ring.prediction.total_s);
  const Forecast on_hosts = forecast(big, fc);
  CHECK(on_hosts.runs_as == "rabenseifner");
  CHECK(on_hosts.rule == "rabenseifner");
  // Everywhere: auto's time is the least of the others' (the first on a tie).
  for (const CostModel& m : {fc, ring})
    for (int P : {3, 8, 16})
      for (std::size_t count : {std::size_t{256}, std::size_t{65536}, std::size_t{1} << 20}) {
        CAPTURE(P);
        CAPTURE(count);
        Scenario s = scenario(Collective::AllReduce, "auto", P, count);
        const Forecast f = forecast(s, m);
        double least = 1e300;
        std::string first;
        for (const std::string& name : algorithm_names(Collective::AllReduce)) {
          if (name == "auto") continue;
          s.algorithm = name;
          const double t = forecast(s, m).prediction.total_s;
          if (t < least) least = t, first = name;
        }
        CHECK(f.prediction.total_s == least);
        CHECK(f.runs_as == first);
      }
}

TEST_CASE(
    "the message-level path refuses what it cannot hold, before it starts where it can tell") {
  // A ring on 4096 ranks sends 2 P (P-1) = 33,546,240 messages, more than it keeps: the
  // closed form's count refuses it at once.
  CHECK_THROWS_WITH_AS(simulate_traffic(scenario(Collective::AllReduce, "ring", 4096, 1024)),
                       doctest::Contains("33546240 messages"), std::invalid_argument);
  // 16,384 ranks: past its rank limit (P blocks on each of P ranks).
  CHECK_THROWS_WITH_AS(
      simulate_traffic(scenario(Collective::AllReduce, "recursive_doubling", 16384, 1024)),
      doctest::Contains("1 to 8192"), std::invalid_argument);
  // No closed form (Gloo's ring reduce, 64 ranks, 8127 messages): it stops at the limit.
  CHECK_THROWS_WITH_AS(simulate_traffic(scenario(Collective::Reduce, "gloo_ring", 64, 4096), 1000),
                       doctest::Contains("more than 1000 messages"), std::invalid_argument);
  CHECK(simulate_traffic(scenario(Collective::Reduce, "gloo_ring", 64, 4096), 10000)
            .messages.size() == 8127);
  // A prediction too large for it names the closed form instead.
  CostModel ring = odd_model();
  ring.topology = Topology::Ring;
  CHECK_THROWS_WITH_AS(forecast(scenario(Collective::AllReduce, "rabenseifner", 16384, 1024), ring),
                       doctest::Contains("8192"), std::invalid_argument);
}

TEST_CASE("sizes past 1 TiB are refused, not allocated") {
  const std::size_t most = std::size_t{1} << 38;  // float32 elements in 1 TiB
  CHECK_THROWS_WITH_AS(closed_form(scenario(Collective::AllReduce, "ring", 4, ~std::size_t{0})),
                       doctest::Contains("1 TiB"), std::invalid_argument);
  CHECK_THROWS_AS(forecast(scenario(Collective::AllReduce, "ring", 4, most + 1), odd_model()),
                  std::invalid_argument);
  // Exactly 1 TiB: blocks of 2^36 elements, 2^18 segments of 1 MiB each.
  const auto form = closed_form(scenario(Collective::AllReduce, "ring", 4, most));
  REQUIRE(form);
  CHECK(form->steps == 3 * ((std::size_t{1} << 18) + 1));
  // A list op counts P blocks: all_gather on 8 ranks takes 2^35 elements a block.
  CHECK(closed_form(scenario(Collective::AllGather, "ring", 8, most / 8)));
  CHECK_THROWS_AS(closed_form(scenario(Collective::AllGather, "ring", 8, most / 8 + 1)),
                  std::invalid_argument);
}
