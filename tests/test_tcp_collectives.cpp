// Every collective of ProcessGroup over the TCP transport (default
// algorithms), world sizes 1-4, counts 0, 1, 997 and 2^20, checked against
// closed forms computed here from the inputs' definition (not from the code
// under test).
//
// Inputs, for rank r, element i, world size W (int32):
//   x(r, i)    = 3 (r + 1) + (i mod 101)
//   z(r, q, i) = 1000 r + 10 q + (i mod 101)     (rank r's block for rank q)
// Closed forms:
//   all_reduce / reduce (root) sum = 3 W (W + 1) / 2 + W (i mod 101)
//   broadcast from W-1           = x(W - 1, i)
//   all_gather / gather list[q]  = x(q, i)
//   scatter from 0 of z(0, q, .) = z(0, r, i) on rank r
//   reduce_scatter of x(r, i) + 7 q on every rank: rank q gets sum + 7 q W
//   all_to_all(_single) block q  = z(q, r, i)
#include <doctest/doctest.h>

#include <chrono>

#include "test_tcp_util.hpp"

using namespace ringlab;
using namespace ringlab::tcp;
using namespace ringlab::tcp::testing;
using namespace std::chrono_literals;

namespace {

using Int = std::int32_t;
Int x(int r, std::size_t i) { return 3 * (r + 1) + static_cast<Int>(i % 101); }
Int z(int r, int q, std::size_t i) { return 1000 * r + 10 * q + static_cast<Int>(i % 101); }
Int sum_x(int world, std::size_t i) {
  return 3 * world * (world + 1) / 2 + world * static_cast<Int>(i % 101);
}

Tensor make(std::size_t n, const std::function<Int(std::size_t)>& value) {
  Tensor t(DType::Int32, {static_cast<std::int64_t>(n)});
  auto d = t.data<Int>();
  for (std::size_t i = 0; i < n; ++i) d[i] = value(i);
  return t;
}

// The first index where t differs from value(i), or "" if none.
std::string mismatch(const Tensor& t, std::size_t n, const std::function<Int(std::size_t)>& value) {
  if (t.numel() != n) return "numel " + std::to_string(t.numel()) + " != " + std::to_string(n);
  auto d = t.data<Int>();
  for (std::size_t i = 0; i < n; ++i)
    if (d[i] != value(i))
      return "element " + std::to_string(i) + " is " + std::to_string(d[i]) + ", expected " +
             std::to_string(value(i));
  return {};
}

void every_collective(ProcessGroup& pg, std::size_t n) {
  const int r = pg.rank(), W = pg.size();
  {
    Tensor t = make(n, [&](std::size_t i) { return x(r, i); });
    pg.all_reduce(t);
    CHECK_MESSAGE(mismatch(t, n, [&](std::size_t i) { return sum_x(W, i); }) == "", "all_reduce");
  }
  {
    Tensor t = make(n, [&](std::size_t i) { return x(r, i); });
    pg.broadcast(t, W - 1);
    CHECK_MESSAGE(mismatch(t, n, [&](std::size_t i) { return x(W - 1, i); }) == "", "broadcast");
  }
  {
    Tensor t = make(n, [&](std::size_t i) { return x(r, i); });
    pg.reduce(t, 0);
    if (r == 0)
      CHECK_MESSAGE(mismatch(t, n, [&](std::size_t i) { return sum_x(W, i); }) == "", "reduce");
  }
  {
    std::vector<Tensor> list;
    for (int q = 0; q < W; ++q) list.push_back(make(n, [](std::size_t) { return -1; }));
    pg.all_gather(list, make(n, [&](std::size_t i) { return x(r, i); }));
    for (int q = 0; q < W; ++q)
      CHECK_MESSAGE(mismatch(list[static_cast<std::size_t>(q)], n, [&](std::size_t i) { return x(q, i); }) == "",
                    "all_gather block " << q);
  }
  {
    const Tensor mine = make(n, [&](std::size_t i) { return x(r, i); });
    if (r == W - 1) {
      std::vector<Tensor> list;
      for (int q = 0; q < W; ++q) list.push_back(make(n, [](std::size_t) { return -1; }));
      pg.gather(mine, list, W - 1);
      for (int q = 0; q < W; ++q)
        CHECK_MESSAGE(mismatch(list[static_cast<std::size_t>(q)], n, [&](std::size_t i) { return x(q, i); }) == "",
                      "gather block " << q);
    } else {
      pg.gather(mine, W - 1);
    }
  }
  {
    Tensor t = make(n, [](std::size_t) { return -1; });
    std::vector<Tensor> list;
    if (r == 0)
      for (int q = 0; q < W; ++q) list.push_back(make(n, [&](std::size_t i) { return z(0, q, i); }));
    pg.scatter(t, list, 0);
    CHECK_MESSAGE(mismatch(t, n, [&](std::size_t i) { return z(0, r, i); }) == "", "scatter");
  }
  {
    std::vector<Tensor> inputs;
    for (int q = 0; q < W; ++q) inputs.push_back(make(n, [&](std::size_t i) { return x(r, i) + 7 * q; }));
    Tensor out = make(n, [](std::size_t) { return -1; });
    pg.reduce_scatter(out, inputs);
    CHECK_MESSAGE(mismatch(out, n, [&](std::size_t i) { return sum_x(W, i) + 7 * r * W; }) == "",
                  "reduce_scatter");
  }
  {
    std::vector<Tensor> inputs, outputs;
    for (int q = 0; q < W; ++q) {
      inputs.push_back(make(n, [&](std::size_t i) { return z(r, q, i); }));
      outputs.push_back(make(n, [](std::size_t) { return -1; }));
    }
    pg.all_to_all(outputs, inputs);
    for (int q = 0; q < W; ++q)
      CHECK_MESSAGE(mismatch(outputs[static_cast<std::size_t>(q)], n, [&](std::size_t i) { return z(q, r, i); }) == "",
                    "all_to_all block " << q);
  }
  {
    const std::size_t total = n * static_cast<std::size_t>(W);
    const Tensor in = make(total, [&](std::size_t i) { return z(r, static_cast<int>(i / std::max<std::size_t>(n, 1)), i % std::max<std::size_t>(n, 1)); });
    Tensor out = make(total, [](std::size_t) { return -1; });
    pg.all_to_all_single(out, in);
    CHECK_MESSAGE(mismatch(out, total, [&](std::size_t i) {
                    return z(static_cast<int>(i / std::max<std::size_t>(n, 1)), r, i % std::max<std::size_t>(n, 1));
                  }) == "",
                  "all_to_all_single");
  }
  pg.barrier();
}

}  // namespace

TEST_SUITE("tcp_collectives") {

TEST_CASE("every collective, default algorithm, world sizes 1-4, counts 0, 1, 997, 2^20") {
  for (int world : {1, 2, 3, 4}) {
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{997}, std::size_t{1} << 20}) {
      INFO("world " << world << ", count " << n);
      const auto errors = run_tcp_groups(world, [n](ProcessGroup& pg) {
        CHECK(pg.backend() == "tcp");
        every_collective(pg, n);
      });
      CHECK(first_error(errors) == "");
    }
  }
}

TEST_CASE("every all_reduce algorithm over TCP, 4 ranks, 997 elements") {
  for (const std::string& name : algorithm_names(Collective::AllReduce)) {
    INFO("algorithm " << name);
    ProcessGroupOptions options;
    options.algorithms[Collective::AllReduce] = name;
    const auto errors = run_tcp_groups(
        4,
        [](ProcessGroup& pg) {
          Tensor t = make(997, [&](std::size_t i) { return x(pg.rank(), i); });
          pg.all_reduce(t);
          CHECK(mismatch(t, 997, [&](std::size_t i) { return sum_x(4, i); }) == "");
        },
        options);
    CHECK(first_error(errors) == "");
  }
}

TEST_CASE("async collectives overlap on one TCP group") {
  const auto errors = run_tcp_groups(3, [](ProcessGroup& pg) {
    Tensor a = make(1 << 16, [&](std::size_t i) { return x(pg.rank(), i); });
    Tensor b = make(1 << 16, [&](std::size_t i) { return x(pg.rank(), i); });
    Work first = pg.all_reduce_async(a);
    Work second = pg.broadcast_async(b, 1);
    second.wait(10s);
    first.wait(10s);
    CHECK(mismatch(a, 1 << 16, [](std::size_t i) { return sum_x(3, i); }) == "");
    CHECK(mismatch(b, 1 << 16, [](std::size_t i) { return x(1, i); }) == "");
  });
  CHECK(first_error(errors) == "");
}

}  // TEST_SUITE
