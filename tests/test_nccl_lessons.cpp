// The lessons and `ringlab bench` with --backend nccl --world-size 1 (one GPU),
// the same with NCCL_DEBUG=WARN set (NCCL's own lines are left out):
// every message path goes through the NCCL backend's staged transport. The
// expected text follows from each lesson program at world size 1 (the
// article's input on rank 0 is tensor([1, 2]); scatter's list is
// [tensor([0, 0])]; all_to_all's entry 0 on rank 0 is tensor([0])).
#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>

#include "article_outputs.hpp"
#include "lessons/canonical.hpp"
#include "beside_this_program.hpp"
// ringlab next to this program's folder, so a copied build runs (tools/gpu_pack.sh).
#define RINGLAB_EXE ringlab::testing::beside_this_program("../tools/ringlab")
#include "run_program.hpp"
#include "transport/nccl/cuda_check.hpp"

namespace {

using Run = ringlab::testing::ProgramRun;
using ringlab::testing::run_ringlab;

constexpr const char* kSharedNote = "ringlab: nccl: ";

// The output less NCCL's own lines: with NCCL_DEBUG set (WARN, INFO) NCCL
// prints "NCCL version 2.28.9+cuda13.0" and "host:pid:tid [0] NCCL WARN ..."
// lines into the same output, which are not the lesson's. Less, too, the one
// line ringlab prints where ranks share a GPU (checked on its own).
std::string without_nccl_lines(const std::string& output) {
  std::istringstream in(output);
  std::string kept;
  for (std::string line; std::getline(in, line);) {
    const bool nccls = line.find("NCCL version") != std::string::npos ||
                       line.find(" NCCL INFO") != std::string::npos ||
                       line.find(" NCCL WARN") != std::string::npos ||
                       line.find(" NCCL TRACE") != std::string::npos ||
                       line.rfind(kSharedNote, 0) == 0;
    if (!nccls) kept += line + "\n";
  }
  return kept;
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string lesson_on_one_gpu(const std::string& name) {
  const Run run = run_ringlab("lesson " + name + " --backend nccl --world-size 1 --timeout-ms 60000");
  INFO("ringlab lesson " << name << " --backend nccl --world-size 1 printed:\n" << run.output);
  CHECK(run.status == 0);
  return ringlab::lessons::canonicalize(without_nccl_lines(run.output));
}

}  // namespace

TEST_CASE("broadcast") {
  CHECK(lesson_on_one_gpu("broadcast") ==
        "before broadcast Rank 0 has data tensor([1, 2])\n"
        "after broadcast Rank 0 has data tensor([1, 2])\n");
}

TEST_CASE("scatter") {
  CHECK(lesson_on_one_gpu("scatter") ==
        "before scatter Rank 0 has data tensor([1, 2])\n"
        "scater list: [tensor([0, 0])]\n"
        "after scatter Rank 0 has data tensor([0, 0])\n");
}

TEST_CASE("gather") {
  CHECK(lesson_on_one_gpu("gather") ==
        "before gather Rank 0 has data tensor([1, 2])\n"
        "after gather Rank 0 has data tensor([1, 2])\n"
        "gather_list: [tensor([1, 2])]\n");
}

TEST_CASE("reduce") {
  CHECK(lesson_on_one_gpu("reduce") ==
        "before reudce Rank 0 has data tensor([1, 2])\n"
        "after reudce Rank 0 has data tensor([1, 2])\n");
}

TEST_CASE("all_gather") {
  CHECK(lesson_on_one_gpu("all_gather") ==
        "before gather Rank 0 has data tensor([1, 2])\n"
        "after gather Rank 0 has data tensor([1, 2])\n"
        "after gather Rank 0 has gather list [tensor([1, 2])]\n");
}

TEST_CASE("all_reduce") {
  CHECK(lesson_on_one_gpu("all_reduce") ==
        "before reudce Rank 0 has data tensor([1, 2])\n"
        "after reudce Rank 0 has data tensor([1, 2])\n");
}

TEST_CASE("reduce_scatter") {
  CHECK(lesson_on_one_gpu("reduce_scatter") ==
        "before reduce_scatter Rank 0 has input list [tensor([1, 2])]\n"
        "after reduce_scatter Rank 0 has data tensor([1, 2])\n");
}

TEST_CASE("all_to_all") {
  CHECK(lesson_on_one_gpu("all_to_all") ==
        "before all_to_all Rank 0 has input list [tensor([0])]\n"
        "after all_to_all Rank 0 has output list [tensor([0])]\n");
}

TEST_CASE("barrier") {
  CHECK(lesson_on_one_gpu("barrier") ==
        "before barrier Rank 0 is waiting\n"
        "after barrier Rank 0 passed\n");
}

TEST_CASE("pingpong needs two ranks: at world size 1 it is refused as on every backend") {
  for (const char* name : {"pingpong", "pingpong_async"}) {
    const Run run = run_ringlab(std::string("lesson ") + name + " --backend nccl --world-size 1");
    INFO(run.output);
    CHECK(run.status != 0);
    // Refused before any rank starts (lessons/registry.cpp), on every backend.
    CHECK(run.output.find("cannot run on 1 rank: the article's ping-pong passes a tensor between "
                          "rank 0 and rank 1: it needs exactly 2 ranks") != std::string::npos);
  }
}

TEST_CASE("ringlab bench --backend nccl -n 1 runs and finds no wrong elements") {
  const Run run = run_ringlab(
      "bench --backend nccl -n 1 --op all_reduce --sizes 4K:1M --warmup 1 --iters 2");
  INFO(run.output);
  REQUIRE(run.status == 0);
  // One row per size (4K, 8K, ..., 1M: 9 rows), each ending in #wrong = 0.
  const std::string output = without_nccl_lines(run.output);
  int rows = 0;
  std::size_t start = 0;
  while (start < output.size()) {
    std::size_t end = output.find('\n', start);
    if (end == std::string::npos) end = output.size();
    const std::string line = output.substr(start, end - start);
    start = end + 1;
    if (line.empty() || line[0] == '#') continue;
    ++rows;
    std::istringstream fields(line);
    std::string field, last;
    while (fields >> field) last = field;
    CHECK(last == "0");
  }
  CHECK(rows == 9);
}

// At the article's world sizes (2 and 4 ranks), on however many GPUs there
// are: with fewer GPUs than ranks, the ranks are processes that share them
// (backends/nccl.cpp), each message on NCCL's network transport.
TEST_CASE("every article lesson at its own world size prints what the article prints") {
  for (const auto& article : ringlab::testing::article_outputs()) {
    CAPTURE(article.lesson);
    const Run run = run_ringlab("lesson " + std::string(article.lesson) +
                                " --backend nccl --timeout-ms 60000");
    INFO(run.output);
    CHECK(run.status == 0);
    CHECK(ringlab::lessons::canonicalize(without_nccl_lines(run.output)) == article.canonical);
    // Ranks that share a GPU say so, once.
    const int world = article.lesson == std::string("pingpong") ||
                              article.lesson == std::string("pingpong_async")
                          ? 2
                          : 4;
    const int gpus = ringlab::nccl::visible_gpu_count();
    CHECK(count_of(run.output, kSharedNote) == (gpus < world ? 1u : 0u));
  }
}
