// The collective table (primitives/collectives.hpp) against independent
// references: nccl-tests' bus factors in closed form, ProcessGroup's
// signatures (which collectives take a root or an op, which take lists), every
// algorithm of every row run through the table with closed-form results, auto
// as ProcessGroup's all_reduce default (counted messages), and the benchmark,
// which now reads the table, with its closed forms.
//
// The sweep over world size x count x dtype x op is tests/test_algorithms.cpp;
// this runs each row at a few world sizes only.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bench/bench.hpp"
#include "primitives/algorithms.hpp"
#include "primitives/collectives.hpp"
#include "primitives/process_group.hpp"
#include "run_program.hpp"
#include "transport/inproc.hpp"
#include "with_groups.hpp"

using namespace ringlab;
using namespace std::chrono_literals;

namespace {

using ringlab::testing::with_groups;

// What each rank threw, by rank ("" where it did not).
std::vector<std::string> errors_of(int world, const std::function<void(ProcessGroup&)>& body) {
  std::vector<std::string> errors(static_cast<std::size_t>(world));
  std::mutex mutex;
  with_groups(world, [&](ProcessGroup& pg) {
    try {
      body(pg);
    } catch (const std::exception& e) {
      std::lock_guard lock(mutex);
      errors[static_cast<std::size_t>(pg.rank())] = e.what();
    }
  });
  return errors;
}

std::vector<std::int64_t> values(const Tensor& t) {
  auto d = t.data<std::int64_t>();
  return {d.begin(), d.end()};
}
Tensor tensor_of(const std::vector<std::int64_t>& v) {
  return Tensor::from(std::span<const std::int64_t>(v));
}
std::vector<std::int64_t> block(std::size_t n, const std::function<std::int64_t(std::size_t)>& f) {
  std::vector<std::int64_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = f(i);
  return v;
}

// A transport that counts the messages a rank sends, over another.
class CountingTransport final : public Transport {
 public:
  explicit CountingTransport(Transport& inner) : inner_(inner) {}
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  std::string_view name() const override { return inner_.name(); }
  std::unique_ptr<Request> isend(int dst, Tag tag, ConstBytes data) override {
    ++sends;
    return inner_.isend(dst, tag, data);
  }
  std::unique_ptr<Request> irecv(int src, Tag tag, MutBytes data) override {
    return inner_.irecv(src, tag, data);
  }
  int sends = 0;

 private:
  Transport& inner_;
};

// Messages each rank sends for one all_reduce of `count` elements of dtype on
// `world` ranks with these options (the argument check, which adds its own
// messages, is off).
std::vector<int> all_reduce_sends(int world, std::size_t count, DType dtype,
                                  ProcessGroupOptions options) {
  options.check_arguments = false;
  std::vector<int> sends(static_cast<std::size_t>(world));
  run_world(world, [&](Transport& inner) {
    auto counting = std::make_shared<CountingTransport>(inner);
    ProcessGroup pg(counting, options);
    Tensor t(dtype, {static_cast<std::int64_t>(count)});
    pg.all_reduce(t);
    sends[static_cast<std::size_t>(pg.rank())] = counting->sends;
  });
  return sends;
}

}  // namespace

TEST_CASE("one row per collective, in the enum's order, found by its name") {
  REQUIRE(collective_table().size() == std::size(kAllCollectives));
  for (Collective c : kAllCollectives) {
    const CollectiveInfo& row = collective_info(c);
    CAPTURE(row.name);
    CHECK(row.id == c);
    CHECK(parse_collective(row.name) == c);
    CHECK(find_collective(row.name) == &row);
    CHECK(collective_name(c) == row.name);
  }
  CHECK(find_collective("all-reduce") == &collective_info(Collective::AllReduce));
  CHECK(find_collective("sendrecv") == nullptr);
  CHECK(find_collective("parameter_server") == nullptr);
  CHECK_THROWS_WITH_AS(parse_collective("allreduce"),
                       doctest::Contains("unknown collective 'allreduce': use one of broadcast"),
                       std::invalid_argument);
}

TEST_CASE("find_algorithm serves every table, scatter's and gather's apart though one type") {
  // ScatterFn and GatherFn are one type; each table still gives its own functions.
  // (Double parentheses: doctest cannot print a function pointer.)
  CHECK((find_algorithm(scatter_algorithms(), Collective::Scatter, "binomial").run ==
         &scatter_binomial));
  CHECK((find_algorithm(gather_algorithms(), Collective::Gather, "binomial").run ==
         &gather_binomial));
  CHECK((find_algorithm(scatter_algorithms(), Collective::Scatter, "").run == &scatter_flat));
  CHECK((find_algorithm(gather_algorithms(), Collective::Gather, "default").run == &gather_flat));
  CHECK_THROWS_WITH_AS(find_algorithm(gather_algorithms(), Collective::Gather, "ring"),
                       "unknown gather algorithm 'ring': use one of flat, binomial",
                       std::invalid_argument);
  // Every table's type: each name finds its own row.
  const auto each_found = [](auto table, Collective c) {
    CAPTURE(collective_name(c));
    for (const auto& a : table) CHECK(&find_algorithm(table, c, a.name) == &a);
  };
  each_found(broadcast_algorithms(), Collective::Broadcast);
  each_found(scatter_algorithms(), Collective::Scatter);
  each_found(gather_algorithms(), Collective::Gather);
  each_found(reduce_algorithms(), Collective::Reduce);
  each_found(all_reduce_algorithms(), Collective::AllReduce);
  each_found(all_gather_algorithms(), Collective::AllGather);
  each_found(reduce_scatter_algorithms(), Collective::ReduceScatter);
  each_found(all_to_all_algorithms(), Collective::AllToAll);
  each_found(barrier_algorithms(), Collective::Barrier);
}

TEST_CASE("every row's bus factor is nccl-tests' closed form") {
  // nccl-tests (src/*.cu, getBw): all_reduce 2(n-1)/n; all_gather,
  // reduce_scatter, alltoall, gather, scatter (n-1)/n; broadcast, reduce 1.
  // The barrier moves nothing; it keeps the cost model's 1.
  const std::map<std::string, std::function<double(double)>> expected{
      {"all_reduce", [](double n) { return 2 * (n - 1) / n; }},
      {"all_gather", [](double n) { return (n - 1) / n; }},
      {"reduce_scatter", [](double n) { return (n - 1) / n; }},
      {"all_to_all", [](double n) { return (n - 1) / n; }},
      {"gather", [](double n) { return (n - 1) / n; }},
      {"scatter", [](double n) { return (n - 1) / n; }},
      {"broadcast", [](double) { return 1.0; }},
      {"reduce", [](double) { return 1.0; }},
      {"barrier", [](double) { return 1.0; }},
  };
  REQUIRE(expected.size() == collective_table().size());  // a new row needs its closed form here
  for (const CollectiveInfo& row : collective_table()) {
    CAPTURE(row.name);
    REQUIRE(expected.count(std::string(row.name)) == 1);
    for (int P : {1, 2, 3, 4, 7, 8, 1024}) {
      CAPTURE(P);
      const double want = expected.at(std::string(row.name))(P);
      CHECK(row.bus_factor(P) == doctest::Approx(want).epsilon(1e-15));
      CHECK(bus_factor(row.name, P) == row.bus_factor(P));
    }
  }
  // Point-to-point traffic: nccl-tests' sendrecv factor, 1.
  for (int P : {1, 2, 5}) {
    CHECK(bus_factor("sendrecv", P) == 1.0);
    CHECK(bus_factor("parameter_server", P) == 1.0);
  }
}

TEST_CASE(
    "rooted and reduces match ProcessGroup: a bad root or op fails exactly the rows that take "
    "one") {
  const int P = 3;
  for (const CollectiveInfo& row : collective_table()) {
    CAPTURE(row.name);
    // Lists as the row's shapes say, so that only the root or the op can be
    // wrong.
    auto call = [&](ProcessGroup& pg, int root, ReduceOp op, DType dtype) {
      Tensor t(dtype, {2});
      const bool is_root = pg.rank() == root;
      auto list = [&](Shape s) {
        std::vector<Tensor> l;
        if (s == Shape::List || (s == Shape::RootList && is_root))
          for (int r = 0; r < P; ++r) l.emplace_back(dtype, std::vector<std::int64_t>{2});
        return l;
      };
      std::vector<Tensor> inputs = list(row.input), outputs = list(row.output);
      row.run_group(pg, {&t, &inputs, &outputs, root, op});
    };
    // A root outside the world: ProcessGroup refuses it where it takes one.
    for (const std::string& error :
         errors_of(P, [&](ProcessGroup& pg) { call(pg, 7, ReduceOp::SUM, DType::Int64); })) {
      if (row.rooted)
        CHECK(error.find("= 7 is out of range") != std::string::npos);
      else
        CHECK(error == "");
    }
    // AVG on integers: refused where the collective takes an op.
    for (const std::string& error :
         errors_of(P, [&](ProcessGroup& pg) { call(pg, 1, ReduceOp::AVG, DType::Int64); })) {
      if (row.reduces)
        CHECK(error.find("avg does not apply to dtype int64") != std::string::npos);
      else
        CHECK(error == "");
    }
  }
}

TEST_CASE(
    "list shapes: nccl-tests' size counts P blocks exactly where a list is involved, and the "
    "algorithms' buffers hold that many elements on the root") {
  for (const CollectiveInfo& row : collective_table()) {
    CAPTURE(row.name);
    if (row.input == Shape::None) {
      CHECK(row.output == Shape::None);
      CHECK(!row.first.present(true));
      continue;
    }
    for (int P : {1, 3, 4}) {
      const std::size_t n = 5;
      const bool lists = row.input != Shape::Tensor || row.output != Shape::Tensor;
      CHECK(row.size_blocks(P) == (lists ? static_cast<std::size_t>(P) : 1));
      const std::size_t biggest =
          std::max(row.first.count(P, n, true), row.second.count(P, n, true));
      CHECK(biggest == row.size_blocks(P) * n);
    }
    CHECK(row.in_place == (row.input == Shape::Tensor && row.output == Shape::Tensor));
  }
}

TEST_CASE(
    "every algorithm of every row runs through the table on inproc with closed-form results") {
  // Rank r's tensor element i: x(r, i). Lists: entry d of rank s is y(s, d, i).
  auto x = [](int r, std::size_t i) { return std::int64_t{1 + 10 * r} + 1000 * std::int64_t(i); };
  auto y = [](int s, int d, std::size_t i) {
    return std::int64_t{10000 * s + 100 * d} + std::int64_t(i);
  };
  const std::size_t n = 3;
  for (const CollectiveInfo& row : collective_table()) {
    std::vector<std::string> algorithms{""};  // "" = the default
    for (const std::string& name : algorithm_names(row.id)) algorithms.push_back(name);
    for (const std::string& algorithm : algorithms) {
      for (int P : {1, 2, 3, 4, 5}) {
        const int root = P / 2;
        CAPTURE(row.name);
        CAPTURE(algorithm);
        CAPTURE(P);
        ProcessGroupOptions options;
        options.algorithms[row.id] = algorithm;
        with_groups(
            P,
            [&](ProcessGroup& pg) {
              const int r = pg.rank();
              const bool is_root = r == root;
              Tensor t = tensor_of(block(n, [&](std::size_t i) { return x(r, i); }));
              auto list = [&](Shape s, bool filled) {
                std::vector<Tensor> l;
                if (s == Shape::List || (s == Shape::RootList && is_root))
                  for (int d = 0; d < P; ++d)
                    l.push_back(tensor_of(
                        block(n, [&](std::size_t i) { return filled ? y(r, d, i) : -1; })));
                return l;
              };
              std::vector<Tensor> inputs = list(row.input, true), outputs = list(row.output, false);
              row.run_group(pg, {&t, &inputs, &outputs, root, ReduceOp::SUM});

              auto sum_x = [&](std::size_t i) {
                std::int64_t s = 0;
                for (int q = 0; q < P; ++q) s += x(q, i);
                return s;
              };
              switch (row.id) {
                case Collective::Broadcast:
                  CHECK(values(t) == block(n, [&](std::size_t i) { return x(root, i); }));
                  break;
                case Collective::Scatter:  // entry r of the root's list
                  CHECK(values(t) == block(n, [&](std::size_t i) { return y(root, r, i); }));
                  break;
                case Collective::Gather:
                  if (is_root)
                    for (int d = 0; d < P; ++d)
                      CHECK(values(outputs[d]) == block(n, [&](std::size_t i) { return x(d, i); }));
                  break;
                case Collective::Reduce:
                  if (is_root) CHECK(values(t) == block(n, sum_x));
                  break;
                case Collective::AllReduce:
                  CHECK(values(t) == block(n, sum_x));
                  break;
                case Collective::AllGather:
                  for (int d = 0; d < P; ++d)
                    CHECK(values(outputs[d]) == block(n, [&](std::size_t i) { return x(d, i); }));
                  break;
                case Collective::ReduceScatter:  // entry r summed over the ranks
                  CHECK(values(t) == block(n, [&](std::size_t i) {
                          std::int64_t s = 0;
                          for (int q = 0; q < P; ++q) s += y(q, r, i);
                          return s;
                        }));
                  break;
                case Collective::AllToAll:  // entry s of mine is entry r of rank s's
                  for (int s = 0; s < P; ++s)
                    CHECK(values(outputs[s]) ==
                          block(n, [&](std::size_t i) { return y(s, r, i); }));
                  break;
                case Collective::Barrier:
                  break;
              }
            },
            options);
      }
    }
  }
}

TEST_CASE("auto is ProcessGroup's all_reduce default; every other default is the first listed") {
  ProcessGroupOptions none;
  for (Collective c : kAllCollectives) {
    CAPTURE(collective_name(c));
    const auto names = algorithm_names(c);
    const std::string& want = c == Collective::AllReduce ? std::string("auto") : names.front();
    CHECK(algorithm_in_effect(none, c) == want);
    CHECK(std::find(names.begin(), names.end(), collective_info(c).default_algorithm) !=
          names.end());
  }
  CHECK(algorithm_names(Collective::AllReduce).front() == "ring");  // what a walkthrough shows

  // What runs, counted in messages per rank on 4 ranks (all_reduce.cpp's cost
  // table): auto takes recursive doubling up to 64 KiB (log2 4 = 2 sends) and
  // Rabenseifner above it on a power of two (2 log2 4 = 4); the ring sends
  // 2(P-1) = 6 at any size.
  ProcessGroupOptions ring;
  ring.algorithms[Collective::AllReduce] = "ring";
  CHECK(all_reduce_sends(4, 16, DType::Int64, none) == std::vector<int>{2, 2, 2, 2});
  CHECK(all_reduce_sends(4, 1 << 18, DType::Float32, none) == std::vector<int>{4, 4, 4, 4});
  CHECK(all_reduce_sends(4, 16, DType::Int64, ring) == std::vector<int>{6, 6, 6, 6});
  ProcessGroupOptions named_default;
  named_default.algorithms[Collective::AllReduce] = "default";
  CHECK(all_reduce_sends(4, 16, DType::Int64, named_default) == std::vector<int>{2, 2, 2, 2});
}

TEST_CASE(
    "the benchmark reads the table: every op finds no wrong element, and busbw is algbw times "
    "the row's factor") {
  for (const std::string& op : bench::benchmark_ops()) {
    for (int P : {1, 3, 4}) {
      CAPTURE(op);
      CAPTURE(P);
      bench::BenchOptions o;
      o.op = op;
      o.min_bytes = 4;
      o.max_bytes = 4096;
      o.dtype = DType::Int32;
      o.root = P - 1;
      o.warmup = 0;
      o.iters = 1;
      ProcessGroupOptions options;
      options.check_arguments = false;
      std::vector<bench::Row> rows;
      std::mutex mutex;
      with_groups(
          P,
          [&](ProcessGroup& pg) {
            auto mine = bench::run(pg, o, false);
            std::lock_guard lock(mutex);
            if (pg.rank() == 0) rows = mine;
          },
          options);
      REQUIRE(rows.size() == 11);  // 4 B .. 4 KiB, doubling
      // Sizes as nccl-tests counts them: the whole buffer, cut into P blocks
      // of whole elements where a list is involved.
      const bool lists = op == "all_gather" || op == "reduce_scatter" || op == "all_to_all" ||
                         op == "gather" || op == "scatter";
      const double factor = op == "all_reduce" ? 2.0 * (P - 1) / P
                            : lists            ? double(P - 1) / P
                                               : 1.0;
      std::size_t bytes = 4;
      for (const bench::Row& row : rows) {
        CAPTURE(bytes);
        CHECK(row.wrong == 0);
        const std::size_t count = lists ? std::max<std::size_t>(1, bytes / 4 / P) : bytes / 4;
        CHECK(row.count == count);
        CHECK(row.bytes == count * 4 * (lists ? P : 1));
        CHECK(row.busbw_gbs == doctest::Approx(row.algbw_gbs * factor));
        bytes *= 2;
      }
    }
  }
  CHECK_THROWS_WITH_AS(bench::benchmark_op("barrier"), doctest::Contains("barrier moves no data"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(bench::benchmark_op("allreduce"),
                       doctest::Contains("unknown benchmark op 'allreduce': use broadcast, "),
                       std::invalid_argument);
  CHECK(bench::benchmark_op("sendrecv") == nullptr);
}

// The first moments after the ranks connect are slower than the rest
// (docs/benchmarks.md): bench::run spends first_warm_up on untimed runs
// before its first row, every rank the same number of them.
TEST_CASE("the benchmark warms up for first_warm_up before its first row, unless told not to") {
  const auto seconds_taken = [](int warmup, Duration first_warm_up) {
    bench::BenchOptions o;
    o.min_bytes = 4;
    o.max_bytes = 8;
    o.warmup = warmup;
    o.iters = 1;
    o.first_warm_up = first_warm_up;
    std::mutex mutex;
    double slowest = 0;
    with_groups(3, [&](ProcessGroup& pg) {
      const auto start = std::chrono::steady_clock::now();
      const auto rows = bench::run(pg, o, false);
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
      CHECK(rows.size() == 2);
      for (const bench::Row& row : rows) CHECK(row.wrong == 0);
      std::lock_guard lock(mutex);
      slowest = std::max(slowest, took.count());
    });
    return slowest;
  };
  CHECK(seconds_taken(2, Duration(300)) >= 0.3);
  CHECK(seconds_taken(2, Duration(0)) < 0.3);
  CHECK(seconds_taken(0, Duration(300)) < 0.3);  // --warmup 0: no warm-up at all
}

TEST_CASE("ringlab bench runs auto where no algorithm is named, and the one named otherwise") {
  const auto header = [](const std::string& arguments) {
    const auto run = ringlab::testing::run_ringlab(
        "bench --backend inproc -n 2 --sizes 4K:4K --warmup 0 --iters 1" + arguments);
    INFO(run.output);
    CHECK(run.status == 0);
    return run.output.substr(0, run.output.find('\n'));
  };
  CHECK(header("") == "# ringlab bench: all_reduce, algorithm auto, 2 ranks, backend inproc");
  CHECK(header(" --algorithm ring") ==
        "# ringlab bench: all_reduce, algorithm ring, 2 ranks, backend inproc");
  CHECK(header(" --op broadcast") ==
        "# ringlab bench: broadcast, algorithm binomial, 2 ranks, backend inproc");
}
