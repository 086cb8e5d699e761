// The torch.distributed-style API: the article's cases, async work, algorithm
// choice, and bad input (an error naming the rank and the argument, never a
// hang).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <vector>

#include "primitives/process_group.hpp"
#include "transport/inproc.hpp"
#include "transport/nccl_rules/nccl_rules.hpp"
#include "with_groups.hpp"

using namespace ringlab;
using namespace std::chrono_literals;

namespace {

using ringlab::testing::with_groups;

Tensor article_input(int rank) { return Tensor::arange(2, DType::Int64) + (1 + 2 * rank); }

std::vector<std::int64_t> values(const Tensor& t) {
  auto d = t.data<std::int64_t>();
  return {d.begin(), d.end()};
}

// Catches what every rank threw, keyed by rank.
struct Errors {
  std::mutex mutex;
  std::vector<std::string> by_rank;
  explicit Errors(int world) : by_rank(static_cast<std::size_t>(world)) {}
  template <typename Fn>
  void capture(int rank, Fn&& fn) {
    try {
      fn();
    } catch (const std::exception& e) {
      std::lock_guard lock(mutex);
      by_rank[static_cast<std::size_t>(rank)] = e.what();
    }
  }
};

}  // namespace

TEST_CASE("the article's reduce: dst 3 gets the sum, the others Gloo's partial sums") {
  std::vector<std::vector<std::int64_t>> after(4);
  with_groups(4, [&](ProcessGroup& pg) {
    Tensor t = article_input(pg.rank());
    pg.reduce(t, 3, ReduceOp::SUM);
    after[static_cast<std::size_t>(pg.rank())] = values(t);
  });
  CHECK(after[0] == std::vector<std::int64_t>{16, 20});
  CHECK(after[1] == std::vector<std::int64_t>{15, 18});
  CHECK(after[2] == std::vector<std::int64_t>{12, 14});
  CHECK(after[3] == std::vector<std::int64_t>{16, 20});
}

TEST_CASE("every all_reduce algorithm gives the article's [16, 20] on every rank") {
  for (const std::string& name : algorithm_names(Collective::AllReduce)) {
    ProcessGroupOptions options;
    options.algorithms[Collective::AllReduce] = name;
    with_groups(
        4,
        [&](ProcessGroup& pg) {
          Tensor t = article_input(pg.rank());
          pg.all_reduce(t);
          INFO("algorithm " << name << " rank " << pg.rank());
          CHECK(values(t) == std::vector<std::int64_t>{16, 20});
        },
        options);
  }
}

TEST_CASE("AVG divides the sum by the world size; it needs a floating tensor") {
  with_groups(4, [](ProcessGroup& pg) {
    Tensor t = Tensor::of({1.0 + pg.rank(), 2.0 * pg.rank()});
    pg.all_reduce(t, ReduceOp::AVG);
    CHECK(t.item_as_double(0) == 2.5);  // (1+2+3+4)/4
    CHECK(t.item_as_double(1) == 3.0);  // (0+2+4+6)/4
    Tensor ints = article_input(pg.rank());
    CHECK_THROWS_WITH_AS(pg.all_reduce(ints, ReduceOp::AVG),
                         doctest::Contains("avg does not apply to dtype int64"),
                         std::invalid_argument);
  });
}

TEST_CASE("async collectives run in order and wait() returns their result") {
  with_groups(3, [](ProcessGroup& pg) {
    Tensor a = article_input(pg.rank()), b = article_input(pg.rank());
    Work first = pg.all_reduce_async(a);
    Work second = pg.broadcast_async(b, 2);
    second.wait();
    first.wait();
    CHECK(first.is_completed());
    CHECK(values(a) == std::vector<std::int64_t>{9, 12});  // 1+3+5, 2+4+6
    CHECK(values(b) == std::vector<std::int64_t>{5, 6});
    pg.barrier();  // a synchronous call after async ones
  });
}

TEST_CASE("an async collective's error surfaces at wait()") {
  with_groups(2, [](ProcessGroup& pg) {
    Tensor t = article_input(pg.rank());
    Work w = pg.reduce_async(t, 7);
    CHECK_THROWS_WITH_AS(w.wait(), doctest::Contains("dst = 7 is out of range"),
                         std::invalid_argument);
  });
}

TEST_CASE("tensors of different sizes on different ranks: every rank says which") {
  Errors errors(3);
  with_groups(3, [&](ProcessGroup& pg) {
    errors.capture(pg.rank(), [&] {
      Tensor t = Tensor::zeros(pg.rank() == 1 ? 3 : 2, DType::Int64);
      pg.all_reduce(t);
    });
  });
  for (int r = 0; r < 3; ++r) {
    INFO("rank " << r << ": " << errors.by_rank[static_cast<std::size_t>(r)]);
    CHECK(errors.by_rank[static_cast<std::size_t>(r)].find("the ranks disagree on the tensor size") !=
          std::string::npos);
    CHECK(errors.by_rank[static_cast<std::size_t>(r)].find("rank " + std::to_string(r) + ": all_reduce") == 0);
  }
  CHECK(errors.by_rank[0].find("rank 1 called all_reduce with 3 elements") != std::string::npos);
}

TEST_CASE("different dtypes or roots across ranks are caught the same way") {
  Errors errors(2);
  with_groups(2, [&](ProcessGroup& pg) {
    errors.capture(pg.rank(), [&] {
      Tensor t = Tensor::zeros(2, pg.rank() == 0 ? DType::Float32 : DType::Float64);
      pg.broadcast(t, 0);
    });
  });
  CHECK(errors.by_rank[1].find("disagree on the dtype") != std::string::npos);
  Errors roots(2);
  with_groups(2, [&](ProcessGroup& pg) {
    roots.capture(pg.rank(), [&] {
      Tensor t = Tensor::zeros(2);
      pg.reduce(t, pg.rank());
    });
  });
  CHECK(roots.by_rank[0].find("disagree on the root") != std::string::npos);
}

TEST_CASE("without the argument check a size mismatch still fails instead of hanging") {
  ProcessGroupOptions options;
  options.check_arguments = false;
  options.timeout = 2s;
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_AS(with_groups(
                      2,
                      [](ProcessGroup& pg) {
                        Tensor t = Tensor::zeros(pg.rank() == 0 ? 4 : 6);
                        pg.all_reduce(t);
                      },
                      options),
                  CommError);
  CHECK(std::chrono::steady_clock::now() - start < 5s);
}

TEST_CASE("bad arguments name the rank and the argument") {
  with_groups(2, [](ProcessGroup& pg) {
    Tensor t = article_input(pg.rank());
    CHECK_THROWS_WITH_AS(pg.broadcast(t, -1),
                         doctest::Contains(("rank " + std::to_string(pg.rank()) +
                                            ": broadcast: src = -1 is out of range")
                                               .c_str()),
                         std::invalid_argument);
    std::vector<Tensor> three(3, Tensor::zeros(2, DType::Int64));
    CHECK_THROWS_WITH_AS(pg.all_gather(three, t),
                         doctest::Contains("tensor_list has 3 tensors but the world has 2 ranks"),
                         std::invalid_argument);
    std::vector<Tensor> wrong_dtype(2, Tensor::zeros(2, DType::Int32));
    CHECK_THROWS_WITH_AS(pg.all_gather(wrong_dtype, t),
                         doctest::Contains("tensor_list[0] has 2 elements of int32"),
                         std::invalid_argument);
    Tensor floats = Tensor::zeros(2);
    CHECK_THROWS_WITH_AS(pg.all_reduce(floats, ReduceOp::BXOR),
                         doctest::Contains("bxor does not apply to dtype float32"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(pg.send(t, 9), doctest::Contains("send: dst = 9"), std::invalid_argument);
    CHECK_THROWS_WITH_AS(pg.set_algorithm(Collective::AllReduce, "fastest"),
                         doctest::Contains("use one of ring, "), std::invalid_argument);
    Tensor out = Tensor::zeros(3, DType::Int64);
    Tensor in = Tensor::zeros(3, DType::Int64);
    CHECK_THROWS_WITH_AS(pg.all_to_all_single(out, in),
                         doctest::Contains("do not split evenly over 2 ranks"),
                         std::invalid_argument);
    pg.barrier();  // the group is still usable after rejected calls
  });
}

TEST_CASE("send/recv and isend/irecv with tags") {
  with_groups(2, [](ProcessGroup& pg) {
    if (pg.rank() == 0) {
      Tensor a = Tensor::of({std::int64_t{1}, std::int64_t{2}});
      Tensor b = Tensor::of({std::int64_t{3}, std::int64_t{4}});
      Work wa = pg.isend(a, 1, /*tag=*/7);
      pg.send(b, 1, /*tag=*/8);
      wa.wait();
    } else {
      Tensor a = Tensor::zeros(2, DType::Int64), b = Tensor::zeros(2, DType::Int64);
      pg.recv(b, 0, 8);
      Work wa = pg.irecv(a, 0, 7);
      wa.wait();
      CHECK(values(a) == std::vector<std::int64_t>{1, 2});
      CHECK(values(b) == std::vector<std::int64_t>{3, 4});
    }
  });
}

TEST_CASE("recv from any source returns the sender's rank, as torch's dist.recv without src does") {
  with_groups(3, [](ProcessGroup& pg) {
    if (pg.rank() != 0) {
      const auto r = static_cast<std::int64_t>(pg.rank());
      pg.send(Tensor::of({r, 10 * r}), 0, /*tag=*/4);
      pg.send(Tensor::of({r, 20 * r}), 0, /*tag=*/5);
      return;
    }
    std::vector<int> senders;
    for (int i = 0; i < 2; ++i) {
      Tensor got = Tensor::zeros(2, DType::Int64);
      const int from = pg.recv(got, kAnySource, 4);
      CHECK(values(got) == std::vector<std::int64_t>{from, 10 * from});
      senders.push_back(from);
    }
    std::sort(senders.begin(), senders.end());
    CHECK(senders == std::vector<int>{1, 2});
    // irecv: the Work says who, once complete; a named source is returned as is.
    Tensor got = Tensor::zeros(2, DType::Int64);
    Work work = pg.irecv(got, kAnySource, 5);
    work.wait();
    const int from = work.source_rank();
    CHECK(values(got) == std::vector<std::int64_t>{from, 20 * from});
    CHECK(pg.recv(got, 3 - from, 5) == 3 - from);
  });
}

TEST_CASE("recv from any source is refused where the transport cannot do it, saying so") {
  std::string error;
  run_nccl_rules_world(
      2,
      [&](Transport& transport) {
        ProcessGroup pg(std::shared_ptr<Transport>(&transport, [](Transport*) {}));
        if (pg.rank() != 0) return;
        Tensor got = Tensor::zeros(2, DType::Int64);
        try {
          pg.recv(got, kAnySource);
        } catch (const std::invalid_argument& e) {
          error = e.what();
        }
      },
      10s);
  CHECK(error.find("rank 0: recv: src = any source (-1): the nccl_rules transport cannot receive "
                   "from any source here") != std::string::npos);
}

TEST_CASE("collectives work in place on views of memory the caller owns") {
  // As the Python package hands over torch tensors: no copy in, no copy out.
  std::vector<std::vector<float>> memory{{1, 2}, {3, 4}, {5, 6}};
  with_groups(3, [&](ProcessGroup& pg) {
    auto& mine = memory[static_cast<std::size_t>(pg.rank())];
    Tensor view = Tensor::view(DType::Float32, 2, reinterpret_cast<std::byte*>(mine.data()));
    pg.all_reduce(view);
    pg.broadcast(view, 1);
  });
  for (const auto& m : memory) CHECK(m == std::vector<float>{9, 12});
}
