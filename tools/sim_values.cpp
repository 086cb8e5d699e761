// `ringlab sim OP --compare-values`: the results of every algorithm side by
// side, element by element, against the exact sum.
#include "tools/sim_values.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "primitives/algorithms.hpp"

namespace ringlab::cli {

namespace {

using sim::Run;
using sim::Scenario;

// Rank r's element i: 1 + k/1024 for a k from a hash of (r, i), so every
// value has ten bits after the point: float16 holds it, bfloat16 rounds it
// (to eight), and a sum of several needs more bits than the dtype has.
double input_value(int rank, std::size_t i) {
  const std::uint64_t h = (static_cast<std::uint64_t>(rank) * 2654435761u + i * 40503u + 12345u) *
                          0x9E3779B97F4A7C15ull;
  return 1.0 + static_cast<double>((h >> 40) % 1024) / 1024.0;
}

// The value rank r really holds: input_value rounded to the dtype.
double held(DType dtype, int rank, std::size_t i) {
  return visit_dtype(dtype, [&]<typename T>() {
    return static_cast<double>(wrapped<T>(input_value(rank, i)));
  });
}

// The exact reduction of element i over every rank (double holds every sum
// here exactly: at most 1024 values of at most 24 significant bits, near 1),
// divided by the ranks for avg.
double exact(const Scenario& s, std::size_t i) {
  double sum = 0;
  for (int r = 0; r < s.ranks; ++r) sum += held(s.dtype, r, i);
  return s.op == ReduceOp::AVG ? sum / s.ranks : sum;
}

// The rank whose result is shown: the root of a reduce, else rank 0.
int shown_rank(const Scenario& s) { return s.collective == Collective::Reduce ? s.root : 0; }

// That rank's result of one algorithm, element by element.
std::vector<double> result_of(Scenario s, const std::string& algorithm) {
  s.algorithm = algorithm;
  s.input = input_value;
  s.values = sim::ValueMode::On;
  const Run run = sim::simulate(s);
  sim::Replay replay(run);
  replay.seek(run.steps);
  const int rank = shown_rank(s);
  for (int id : run.regions_of(rank)) {
    if (run.regions[static_cast<std::size_t>(id)].name != "buf") continue;
    const Tensor t = replay.tensor(id);
    // reduce_scatter's buffer holds every block; rank r's result is block r.
    const std::size_t first = s.collective == Collective::ReduceScatter ? rank * s.count : 0;
    std::vector<double> out;
    for (std::size_t i = 0; i < s.count; ++i) out.push_back(t.item_as_double(first + i));
    return out;
  }
  throw std::logic_error("--compare-values: the recorded run has no buf on rank " +
                         std::to_string(rank));
}

void check(const Scenario& s) {
  if (s.collective != Collective::AllReduce && s.collective != Collective::Reduce &&
      s.collective != Collective::ReduceScatter)
    throw std::invalid_argument(
        "--compare-values compares what reducing collectives add up: use all_reduce, reduce or "
        "reduce_scatter");
  if (s.op != ReduceOp::SUM && s.op != ReduceOp::AVG)
    throw std::invalid_argument("--compare-values compares sums: use --redop sum or avg (min and "
                                "max pick a value, and every order picks the same one)");
  if (s.ranks > 64 || s.count > 4096)
    throw std::invalid_argument("--compare-values records every algorithm's run with its values: "
                                "use at most 64 ranks and 4096 elements (--count)");
}

std::string text(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

}  // namespace

void run_compare_values(const Scenario& base) {
  check(base);
  const std::string dtype(dtype_name(base.dtype));
  std::vector<std::string> names;
  for (const std::string& name : algorithm_names(base.collective))
    if (name != "auto") names.push_back(name);  // auto runs one of the others
  std::vector<std::vector<double>> results;
  for (const std::string& name : names) results.push_back(result_of(base, name));

  std::printf("# ringlab sim %s --compare-values: %d ranks, %zu x %s per rank, op %s; rank %d's "
              "result of each algorithm\n",
              std::string(collective_name(base.collective)).c_str(), base.ranks, base.count,
              dtype.c_str(), std::string(op_name(base.op)).c_str(), shown_rank(base));
  std::printf("# rank r's element i: 1 + k/1024 (k from a hash of r and i), rounded to %s; "
              "\"exact\": the %s of those values, in double; \"once\": the exact one rounded "
              "to %s once\n",
              dtype.c_str(), std::string(op_name(base.op)).c_str(), dtype.c_str());
  std::printf("%8s", "element");
  for (const std::string& name : names) std::printf(" %18s", name.c_str());
  std::printf(" %18s %18s\n", "exact", "once");
  std::size_t differ = 0;
  std::vector<std::size_t> off(names.size(), 0);  // elements where each is not `once`
  for (std::size_t i = 0; i < base.count; ++i) {
    const double x = exact(base, i);
    const double once = visit_dtype(base.dtype, [&]<typename T>() {
      return static_cast<double>(wrapped<T>(x));
    });
    bool same = true;
    for (std::size_t a = 0; a < names.size(); ++a) {
      same = same && results[a][i] == results[0][i];
      off[a] += results[a][i] != once;
    }
    if (same) continue;
    ++differ;
    std::printf("%8zu", i);
    for (const auto& r : results) std::printf(" %18s", text(r[i]).c_str());
    std::printf(" %18s %18s\n", text(x).c_str(), text(once).c_str());
  }
  std::printf("%zu of %zu elements differ between algorithms\n", differ, base.count);
  for (std::size_t a = 0; a < names.size(); ++a)
    std::printf("%s: %zu of %zu elements are not the exact %s rounded once\n", names[a].c_str(),
                off[a], base.count, std::string(op_name(base.op)).c_str());
}

}  // namespace ringlab::cli
