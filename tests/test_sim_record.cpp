// The simulator's record: step counts and bytes against the textbook
// formulas (the costs documented at the top of each primitives/ file),
// buffers at the end against closed forms of the articles' inputs (rank r
// holds 1+2r+i), provenance, determinism, stepping back.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "simulator/fiber_world.hpp"
#include "simulator/record.hpp"

using namespace ringlab;
using namespace ringlab::sim;

namespace {

int ceil_log2(int p) {
  int k = 0;
  while ((1 << k) < p) ++k;
  return k;
}
int floor_log2(int p) {
  int k = 0;
  while ((2 << k) <= p) ++k;
  return k;
}
bool pow2(int p) { return (p & (p - 1)) == 0; }

Run run_of(Collective c, const std::string& algorithm, int P, std::size_t n, int root = 0,
           RankExecution execution = RankExecution::Fibers, ReduceOp op = ReduceOp::SUM) {
  Scenario s;
  s.collective = c;
  s.algorithm = algorithm;
  s.ranks = P;
  s.count = n;
  s.root = root;
  s.execution = execution;
  s.op = op;
  return simulate(s);
}

std::vector<double> values_at_end(const Run& run, int rank, const char* name) {
  Replay replay(run);
  replay.seek(run.steps);
  const int region = run.buffer_of(rank, name);
  REQUIRE(region >= 0);
  const Tensor t = replay.tensor(region);
  std::vector<double> out;
  for (std::size_t i = 0; i < t.numel(); ++i) out.push_back(t.item_as_double(i));
  return out;
}

RankSet all_ranks(int P) { return RankSet::range(0, P); }

// Everything in a Run, as text: two runs are the same record iff equal.
std::string fingerprint(const Run& run) {
  std::ostringstream out;
  out << run.operation << ' ' << run.algorithm << ' ' << run.ranks << ' ' << run.steps << '\n';
  for (const auto& r : run.regions)
    out << "R" << r.id << ' ' << r.rank << ' ' << r.name << ' ' << r.count << ' ' << r.created << ' '
        << r.freed << '\n';
  for (const auto& m : run.messages) {
    out << "M" << m.step << ' ' << m.send_step << ' ' << m.src << ' ' << m.dst << ' ' << m.tag << ' '
        << m.from.region << ':' << m.from.offset << '+' << m.from.count << ' ' << m.to.region << ':'
        << m.to.offset << '+' << m.to.count << ' ' << m.reduced << m.reduced_by_write;
    for (const auto& p : run.runs(m.payload)) out << ' ' << p.offset << '+' << p.count << '=' << run.set(p.set).to_string();
    out << '\n';
  }
  for (std::size_t index = 0; index < run.writes.size(); ++index) {
    const Write& w = run.writes[index];
    out << "W" << w.step << ' ' << w.rank << ' ' << w.seq << ' ' << int(w.kind) << ' ' << w.dst.region << ':'
        << w.dst.offset << '+' << w.dst.count << ' ' << w.message;
    for (const auto& p : run.runs(w.after)) out << ' ' << p.offset << '+' << p.count << '=' << run.set(p.set).to_string();
    if (run.values_recorded) {
      const std::size_t bytes = w.dst.count * element_size(run.regions[static_cast<std::size_t>(w.dst.region)].dtype);
      out << " v";
      for (std::size_t i = 0; i < bytes; ++i)
        out << ' ' << int(run.values[run.write_values[index].after + i]);
    }
    out << '\n';
  }
  return out.str();
}

struct Expect {
  Collective c;
  const char* algorithm;
  int (*steps)(int P);
};

}  // namespace

TEST_CASE("step counts follow the textbook formulas") {
  const Expect table[] = {
      {Collective::AllReduce, "ring", [](int P) { return 2 * (P - 1); }},
      {Collective::AllReduce, "recursive_doubling",
       [](int P) { return pow2(P) ? ceil_log2(P) : floor_log2(P) + 2; }},
      {Collective::AllReduce, "rabenseifner",
       [](int P) { return pow2(P) ? 2 * ceil_log2(P) : 2 * floor_log2(P) + 2; }},
      {Collective::AllReduce, "reduce_broadcast", [](int P) { return 2 * ceil_log2(P); }},
      // One segment: 2(d + S - 1) with d = floor(log2 P), S = 1.
      {Collective::AllReduce, "binary_tree", [](int P) { return 2 * floor_log2(P); }},
      {Collective::Broadcast, "binomial", [](int P) { return ceil_log2(P); }},
      {Collective::Broadcast, "flat", [](int) { return 1; }},
      {Collective::Broadcast, "chain", [](int P) { return P - 2 + 1; }},  // P-2+S, S = 1
      {Collective::Scatter, "flat", [](int) { return 1; }},
      {Collective::Scatter, "binomial", [](int P) { return ceil_log2(P); }},
      {Collective::Gather, "flat", [](int) { return 1; }},
      {Collective::Gather, "binomial", [](int P) { return ceil_log2(P); }},
      {Collective::Reduce, "binomial", [](int P) { return ceil_log2(P); }},
      {Collective::AllGather, "ring", [](int P) { return P - 1; }},
      {Collective::AllGather, "recursive_doubling",
       [](int P) { return pow2(P) ? ceil_log2(P) : floor_log2(P) + 2; }},
      {Collective::ReduceScatter, "ring", [](int P) { return P - 1; }},
      {Collective::ReduceScatter, "recursive_halving",
       [](int P) { return pow2(P) ? ceil_log2(P) : floor_log2(P) + 2; }},
      {Collective::AllToAll, "pairwise", [](int P) { return P - 1; }},
      {Collective::Barrier, "dissemination", [](int P) { return ceil_log2(P); }},
  };
  for (const auto& e : table)
    for (int P : {2, 3, 4, 5, 8, 12, 16}) {
      CAPTURE(collective_name(e.c));
      CAPTURE(e.algorithm);
      CAPTURE(P);
      const Run run = run_of(e.c, e.algorithm, P, static_cast<std::size_t>(P) * 3);
      CHECK(run.steps == static_cast<Step>(e.steps(P)));
    }
}

TEST_CASE("bytes sent per rank follow the textbook formulas") {
  for (int P : {2, 4, 5, 8}) {
    CAPTURE(P);
    const std::size_t n = static_cast<std::size_t>(P) * 6;  // divisible: equal blocks
    const std::size_t N = n * 4;                            // float32 bytes
    const auto uP = static_cast<std::size_t>(P);
    const Run ring = run_of(Collective::AllReduce, "ring", P, n);
    for (int r = 0; r < P; ++r) CHECK(ring.bytes_sent[static_cast<std::size_t>(r)] == 2 * (uP - 1) * N / uP);
    const Run ag = run_of(Collective::AllGather, "ring", P, n);  // n per block: N_total = P*N
    for (int r = 0; r < P; ++r) CHECK(ag.bytes_sent[static_cast<std::size_t>(r)] == (uP - 1) * N);
    const Run rs = run_of(Collective::ReduceScatter, "ring", P, n);
    for (int r = 0; r < P; ++r) CHECK(rs.bytes_sent[static_cast<std::size_t>(r)] == (uP - 1) * N);
    const Run a2a = run_of(Collective::AllToAll, "pairwise", P, n);
    for (int r = 0; r < P; ++r) CHECK(a2a.bytes_sent[static_cast<std::size_t>(r)] == (uP - 1) * N);
    const Run flat = run_of(Collective::Broadcast, "flat", P, n, 1);
    CHECK(flat.bytes_sent[1] == (uP - 1) * N);
    CHECK(flat.bytes_sent[0] == 0);
    const Run binomial = run_of(Collective::Broadcast, "binomial", P, n);
    CHECK(binomial.bytes_sent[0] == static_cast<std::size_t>(ceil_log2(P)) * N);
    if (pow2(P)) {
      const Run rd = run_of(Collective::AllReduce, "recursive_doubling", P, n);
      for (int r = 0; r < P; ++r)
        CHECK(rd.bytes_sent[static_cast<std::size_t>(r)] == static_cast<std::size_t>(ceil_log2(P)) * N);
      const Run rab = run_of(Collective::AllReduce, "rabenseifner", P, n);
      for (int r = 0; r < P; ++r) CHECK(rab.bytes_sent[static_cast<std::size_t>(r)] == 2 * (uP - 1) * N / uP);
    }
  }
}

TEST_CASE("buffers after the last step are the collective's result, provenance complete") {
  for (int P : {1, 2, 3, 4, 7, 8}) {
    const std::size_t n = 5;
    const auto uP = static_cast<std::size_t>(P);
    // Closed forms of the inputs 1 + 2r + i.
    auto input = [](int r, std::size_t i) { return 1.0 + 2.0 * r + static_cast<double>(i); };
    auto sum = [&](std::size_t i) { return P * (1.0 + static_cast<double>(i)) + P * (P - 1.0); };
    for (const auto& algorithm : algorithm_names(Collective::AllReduce)) {
      CAPTURE(P);
      CAPTURE(algorithm);
      const Run run = run_of(Collective::AllReduce, algorithm, P, n);
      Replay end(run);
      end.seek(run.steps);
      for (int r = 0; r < P; ++r) {
        const auto got = values_at_end(run, r, "buf");
        for (std::size_t i = 0; i < n; ++i) CHECK(got[i] == sum(i));
        const int region = run.buffer_of(r, "buf");
        for (std::size_t i = 0; i < n; ++i) CHECK(end.provenance_at(region, i) == all_ranks(P));
      }
    }
    for (const auto& algorithm : algorithm_names(Collective::Broadcast)) {
      CAPTURE(algorithm);
      const int root = P - 1;
      const Run run = run_of(Collective::Broadcast, algorithm, P, n, root);
      Replay end(run);
      end.seek(run.steps);
      for (int r = 0; r < P; ++r) {
        const auto got = values_at_end(run, r, "buf");
        for (std::size_t i = 0; i < n; ++i) CHECK(got[i] == input(root, i));
        CHECK(end.provenance_at(run.buffer_of(r, "buf"), 0) == RankSet::single(root));
      }
    }
    for (const auto& algorithm : algorithm_names(Collective::Reduce)) {
      CAPTURE(algorithm);
      const int root = P / 2;
      const Run run = run_of(Collective::Reduce, algorithm, P, n, root);
      const auto got = values_at_end(run, root, "buf");
      for (std::size_t i = 0; i < n; ++i) CHECK(got[i] == sum(i));
      Replay end(run);
      end.seek(run.steps);
      CHECK(end.provenance_at(run.buffer_of(root, "buf"), n - 1) == all_ranks(P));
    }
    for (const auto& algorithm : algorithm_names(Collective::AllGather)) {
      CAPTURE(algorithm);
      const Run run = run_of(Collective::AllGather, algorithm, P, n);
      Replay end(run);
      end.seek(run.steps);
      for (int r = 0; r < P; ++r) {
        const auto got = values_at_end(run, r, "buf");
        for (std::size_t b = 0; b < uP; ++b)
          for (std::size_t i = 0; i < n; ++i) {
            CHECK(got[b * n + i] == input(static_cast<int>(b), i));
            CHECK(end.provenance_at(run.buffer_of(r, "buf"), b * n + i) == RankSet::single(static_cast<int>(b)));
          }
      }
    }
    for (const auto& algorithm : algorithm_names(Collective::ReduceScatter)) {
      CAPTURE(algorithm);
      const Run run = run_of(Collective::ReduceScatter, algorithm, P, n);
      Replay end(run);
      end.seek(run.steps);
      for (int r = 0; r < P; ++r) {
        const auto got = values_at_end(run, r, "buf");
        for (std::size_t i = 0; i < n; ++i) {
          CHECK(got[static_cast<std::size_t>(r) * n + i] == sum(static_cast<std::size_t>(r) * n + i));
          CHECK(end.provenance_at(run.buffer_of(r, "buf"), static_cast<std::size_t>(r) * n + i) == all_ranks(P));
        }
      }
    }
    {
      const Run run = run_of(Collective::AllToAll, "pairwise", P, n);
      Replay end(run);
      end.seek(run.steps);
      for (int r = 0; r < P; ++r) {
        const auto got = values_at_end(run, r, "recv");
        for (std::size_t s = 0; s < uP; ++s)
          for (std::size_t i = 0; i < n; ++i) {
            CHECK(got[s * n + i] == input(static_cast<int>(s), static_cast<std::size_t>(r) * n + i));
            CHECK(end.provenance_at(run.buffer_of(r, "recv"), s * n + i) == RankSet::single(static_cast<int>(s)));
          }
      }
    }
    for (const auto& algorithm : algorithm_names(Collective::Scatter)) {
      CAPTURE(algorithm);
      const int root = P > 1 ? 1 : 0;
      const Run run = run_of(Collective::Scatter, algorithm, P, n, root);
      for (int r = 0; r < P; ++r) {
        const auto got = values_at_end(run, r, "out");
        for (std::size_t i = 0; i < n; ++i) CHECK(got[i] == input(r, i));
      }
    }
    for (const auto& algorithm : algorithm_names(Collective::Gather)) {
      CAPTURE(algorithm);
      const int root = P - 1;
      const Run run = run_of(Collective::Gather, algorithm, P, n, root);
      const auto got = values_at_end(run, root, "recv");
      for (std::size_t b = 0; b < uP; ++b)
        for (std::size_t i = 0; i < n; ++i) CHECK(got[b * n + i] == input(static_cast<int>(b), i));
    }
  }
}

TEST_CASE("provenance grows along the ring: r0, r0+r3, ... (the learner's view)") {
  const Run run = run_of(Collective::AllReduce, "ring", 4, 4);
  Replay replay(run);
  replay.seek(0);
  const int buf0 = run.buffer_of(0, "buf");
  CHECK(replay.provenance_at(buf0, 0).to_string() == "r0");
  // Step 1: rank 3 sends its block 2 (its r - s - 1 = 2) to rank 0, which adds it.
  replay.seek(1);
  CHECK(replay.provenance_at(buf0, 2).to_string() == "r0+r3");
  replay.seek(2);
  CHECK(replay.provenance_at(buf0, 1).to_string() == "r0+r2+r3");
  replay.seek(3);
  CHECK(replay.provenance_at(buf0, 0).to_string() == "r0+r1+r2+r3");
  // The messages of step 1 carry one rank each and are reduced on arrival.
  for (const Message& m : run.messages_in(1)) {
    CHECK(run.set(run.runs(m.payload)[0].set) == RankSet::single(m.src));
    CHECK(m.reduced);
    CHECK(m.reduce_op == ReduceOp::SUM);
  }
  // Each reduce-scatter message is reduced by its receiver, in its step, into
  // the block the ring gives it: rank r, step s, adds block (r - s - 1) mod P.
  for (Step k = 1; k <= 3; ++k)
    for (const Message& m : run.messages_in(k)) {
      REQUIRE(m.reduced_by_write >= 0);
      const Write& w = run.writes[static_cast<std::size_t>(m.reduced_by_write)];
      CHECK(w.kind == WriteKind::Reduce);
      CHECK(w.rank == m.dst);
      CHECK(w.step == m.step);
      CHECK(w.src.region == m.to.region);
      CHECK(w.dst.offset == static_cast<std::size_t>((m.dst - static_cast<int>(k) - 1 + 8) % 4));
    }
  // The all-gather half only copies.
  for (const Message& m : run.messages_in(4)) CHECK_FALSE(m.reduced);
}

TEST_CASE("replay steps backward as well as forward") {
  const Run run = run_of(Collective::AllReduce, "rabenseifner", 6, 7);
  std::vector<std::vector<std::string>> forward;
  Replay replay(run);
  auto snapshot = [&](const Replay& r) {
    std::vector<std::string> s;
    for (const auto& region : run.regions) {
      std::string line = r.tensor(region.id).to_string() + "|";
      for (std::size_t i = 0; i < region.count; ++i) line += r.provenance_at(region.id, i).to_string() + ",";
      s.push_back(line);
    }
    return s;
  };
  for (Step k = 0; k <= run.steps; ++k) {
    replay.seek(k);
    forward.push_back(snapshot(replay));
  }
  for (Step k = run.steps + 1; k-- > 0;) {
    replay.seek(k);
    CHECK(snapshot(replay) == forward[k]);
  }
  replay.seek(run.steps);
  replay.seek(2);
  CHECK(snapshot(replay) == forward[2]);
}

TEST_CASE("the record is the same whatever the scheduling") {
  struct Case {
    Collective c;
    const char* algorithm;
    int P;
  };
  for (const Case& k : {Case{Collective::AllReduce, "ring", 5}, Case{Collective::AllReduce, "binary_tree", 7},
                        Case{Collective::Reduce, "gloo_ring", 6}, Case{Collective::AllGather, "recursive_doubling", 6},
                        Case{Collective::Broadcast, "chain", 5}}) {
    CAPTURE(k.algorithm);
    const std::string reference = fingerprint(run_of(k.c, k.algorithm, k.P, 9, 1));
    // Threads: every run interleaves differently.
    for (int i = 0; i < 25; ++i) CHECK(fingerprint(run_of(k.c, k.algorithm, k.P, 9, 1, RankExecution::Threads)) == reference);
  }
}

TEST_CASE("without values the record has the same messages and provenance") {
  Scenario s;
  s.collective = Collective::AllReduce;
  s.algorithm = "recursive_doubling";
  s.ranks = 6;
  s.count = 12;
  const Run with = simulate(s);
  s.values = ValueMode::Off;
  const Run without = simulate(s);
  CHECK(with.values_recorded);
  CHECK_FALSE(without.values_recorded);
  CHECK_FALSE(without.values_note.empty());
  REQUIRE(with.messages.size() == without.messages.size());
  CHECK(with.steps == without.steps);
  for (std::size_t i = 0; i < with.messages.size(); ++i) {
    CHECK(with.messages[i].from == without.messages[i].from);
    CHECK(with.messages[i].step == without.messages[i].step);
  }
  Replay a(with), b(without);
  a.seek(with.steps);
  b.seek(without.steps);
  for (const auto& region : with.regions) CHECK(a.provenance(region.id) == b.provenance(region.id));
  // Auto turns values off above the budget, and says why.
  s.values = ValueMode::Auto;
  s.value_budget_bytes = 16;
  const Run big = simulate(s);
  CHECK_FALSE(big.values_recorded);
  CHECK(big.values_note.find("budget") != std::string::npos);
}

TEST_CASE("a custom input generator and avg") {
  Scenario s;
  s.collective = Collective::AllReduce;
  s.ranks = 4;
  s.count = 3;
  s.op = ReduceOp::AVG;
  s.input = [](int r, std::size_t i) { return 10.0 * r + static_cast<double>(i); };
  const Run run = simulate(s);
  const auto got = values_at_end(run, 2, "buf");
  for (std::size_t i = 0; i < 3; ++i) CHECK(got[i] == doctest::Approx((0 + 10 + 20 + 30) / 4.0 + static_cast<double>(i)));
  bool divided = false;
  for (const auto& w : run.writes) divided = divided || w.kind == WriteKind::Divide;
  CHECK(divided);
}

TEST_CASE("bad scenarios are refused with a reason") {
  Scenario s;
  s.ranks = 0;
  CHECK_THROWS_WITH_AS(simulate(s), doctest::Contains("1 to 1024"), std::invalid_argument);
  s.ranks = 4;
  s.algorithm = "no_such";
  CHECK_THROWS_AS(simulate(s), std::invalid_argument);
  s.algorithm = "";
  s.collective = Collective::Broadcast;
  s.root = 4;
  CHECK_THROWS_WITH_AS(simulate(s), doctest::Contains("root = 4"), std::invalid_argument);
}

TEST_CASE("fibers report a deadlock, naming who waits for whom") {
  FiberWorld world(3, true);
  CHECK_THROWS_WITH_AS(world.run([](Transport& t) {
    std::byte b{};
    if (t.rank() < 2) t.recv(1 - t.rank(), 7, {&b, 1});
  }),
                       doctest::Contains("rank 0 waits for rank 1 (tag 7)"), CommError);
}

TEST_CASE("1024 ranks record without values") {
  Scenario s;
  s.ranks = 1024;
  s.count = 4096;
  s.values = ValueMode::Off;
  const Run run = simulate(s);
  CHECK(run.steps == 2 * 1023);
  CHECK(run.messages.size() == 2u * 1023u * 1024u);
  Replay end(run);
  end.seek(run.steps);
  const int region = run.buffer_of(777, "buf");
  CHECK(end.provenance_at(region, 0) == all_ranks(1024));
  CHECK(end.provenance_at(region, 4095) == all_ranks(1024));
}
