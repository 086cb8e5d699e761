// Every lesson over real TCP processes: `ringlab lesson NAME` on its default
// backend (tcp: one process per rank, started by the lesson itself), output
// canonicalized and compared with the article's printout (the expected texts
// of test_lessons.cpp, transcribed from docs/article-outputs.md)
// or with values worked out here from each lesson's definition.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "lessons/canonical.hpp"
#include "article_outputs.hpp"
#include "run_program.hpp"

namespace {

using Run = ringlab::testing::ProgramRun;
using ringlab::testing::kCleanEnvironment;
using ringlab::testing::run_shell;

std::string canonical_lesson(const std::string& arguments) {
  const Run run =
      run_shell(kCleanEnvironment + RINGLAB_EXE + " lesson " + arguments + " --timeout-ms 20000");
  INFO("ringlab lesson " << arguments << " printed:\n" << run.output);
  CHECK(run.status == 0);
  return ringlab::lessons::canonicalize(run.output);
}

// "tensor([ 9, 10])" as PyTorch prints an int64 tensor: every element
// right-aligned to the widest one.
std::string tensor(const std::vector<std::int64_t>& values) {
  std::size_t width = 0;
  for (std::int64_t v : values) width = std::max(width, std::to_string(v).size());
  std::string text = "tensor([";
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::string number = std::to_string(values[i]);
    text += (i ? ", " : "") + std::string(width - number.size(), ' ') + number;
  }
  return text + "])";
}

std::string tensor_list(const std::vector<std::vector<std::int64_t>>& tensors) {
  std::string text = "[";
  for (std::size_t i = 0; i < tensors.size(); ++i) text += (i ? ", " : "") + tensor(tensors[i]);
  return text + "]";
}

// The article's input on rank r: [1 + 2r, 2 + 2r].
std::vector<std::int64_t> input(int r) { return {1 + 2 * r, 2 + 2 * r}; }

std::string before_lines(const std::string& what, int world) {
  std::string text;
  for (int r = 0; r < world; ++r)
    text += "before " + what + " Rank " + std::to_string(r) + " has data " + tensor(input(r)) + "\n";
  return text;
}

// ---- Gloo's reduce, worked out independently from the reference's recipe ----
//
// P ranks, n int64 elements (e = 8 bytes), M = 1 MiB:
//   segBytes = roundUp(min(ceil(n*e / 2P), M), e),  segE = segBytes / e
//   S = roundUp(max(ceil(n*e / segBytes), 2P), P),  spr = S / P
// element j: segment g = j / segE, chunk c = g / spr (owned by rank c),
// position s = g % spr. A segment of chunk c starts raw at rank c-1 and travels
// down c-1 -> c-2 -> ... -> c, each rank adding its own value; the owner ends
// with the full sum and so does the root. Non-root rank q holds the sum of the
// inputs of ranks q, q+1, ..., c-1 (cyclically), except that rank c-1 holds its
// own input plus the full sum for segments s < spr-2 (forwarded once more).
std::int64_t round_up(std::int64_t value, std::int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

std::vector<std::vector<std::int64_t>> gloo_reduce(int world, int root, std::int64_t n) {
  const std::int64_t e = 8, M = 1 << 20;
  const std::int64_t seg_bytes = round_up(std::min((n * e + 2 * world - 1) / (2 * world), M), e);
  const std::int64_t seg_elements = seg_bytes / e;
  const std::int64_t segments =
      round_up(std::max((n * e + seg_bytes - 1) / seg_bytes, std::int64_t{2} * world), world);
  const std::int64_t per_chunk = segments / world;
  const auto x = [](int r, std::int64_t j) { return 1 + 2 * r + j; };

  std::vector<std::vector<std::int64_t>> held(world, std::vector<std::int64_t>(n));
  for (std::int64_t j = 0; j < n; ++j) {
    const std::int64_t segment = j / seg_elements;
    const int chunk = static_cast<int>(segment / per_chunk);
    const std::int64_t position = segment % per_chunk;
    std::int64_t total = 0;
    for (int r = 0; r < world; ++r) total += x(r, j);
    for (int q = 0; q < world; ++q) {
      if (q == root || q == chunk) {
        held[q][j] = total;
      } else if (q == (chunk - 1 + world) % world && position < per_chunk - 2) {
        held[q][j] = x(q, j) + total;
      } else {
        std::int64_t partial = 0;  // ranks q, q+1, ..., chunk-1 (mod P)
        for (int r = q; r != chunk; r = (r + 1) % world) partial += x(r, j);
        held[q][j] = partial;
      }
    }
  }
  return held;
}

std::string expected_reduce(int world, int root) {
  const auto held = gloo_reduce(world, root, 2);
  std::string text = before_lines("reudce", world);
  for (int r = 0; r < world; ++r)
    text += "after reudce Rank " + std::to_string(r) + " has data " + tensor(held[r]) + "\n";
  return text;
}

}  // namespace

TEST_CASE("the recipe for Gloo's reduce gives the article's numbers") {
  // The article, P = 4, dst 3: both elements in chunk 0; [16,20] [15,18] [12,14] [16,20].
  CHECK(gloo_reduce(4, 3, 2) ==
        std::vector<std::vector<std::int64_t>>{{16, 20}, {15, 18}, {12, 14}, {16, 20}});
}

TEST_CASE("tcp is the default backend: a lesson started as a rank reads the launcher's variables") {
  // RANK and WORLD_SIZE set, MASTER_PORT not: the tcp backend names it.
  const Run run = run_shell(kCleanEnvironment + "RANK=0 WORLD_SIZE=2 " + RINGLAB_EXE +
                            " lesson pingpong --timeout-ms 5000");
  CHECK(run.status != 0);
  CHECK(run.output.find("MASTER_PORT is not set: export MASTER_PORT=") != std::string::npos);
}

TEST_CASE("every article lesson over TCP prints what the article prints") {
  for (const auto& article : ringlab::testing::article_outputs()) {
    CAPTURE(article.lesson);
    CHECK(canonical_lesson(article.lesson) == article.canonical);
  }
}

TEST_CASE("reduce over TCP at other world sizes and destinations") {
  const std::vector<std::pair<int, int>> cases{{2, 0}, {3, 0}, {3, 1}, {4, 1}, {5, 2}, {6, 5}};
  for (const auto& [world, root] : cases) {
    CAPTURE(world);
    CAPTURE(root);
    CHECK(canonical_lesson("reduce -n " + std::to_string(world) + " --root " +
                           std::to_string(root)) == expected_reduce(world, root));
  }
}

TEST_CASE("reduce keeps the article's dst=3 at any world size that has a rank 3") {
  // Without --root: rank 3 on 4 or more ranks (the article's literal
  // argument), the last rank below that (lessons/reduce.cpp).
  for (const auto& [world, root] : std::vector<std::pair<int, int>>{{6, 3}, {5, 3}, {4, 3}, {3, 2}}) {
    CAPTURE(world);
    CHECK(canonical_lesson("reduce -n " + std::to_string(world)) == expected_reduce(world, root));
  }
}

TEST_CASE("reduce_scatter over TCP") {
  // Rank r's entry j is input(r) * (j+1); rank j ends with the sum over r of
  // entry j: (j+1) * [16, 20].
  std::string expected;
  for (int r = 0; r < 4; ++r) {
    std::vector<std::vector<std::int64_t>> entries;
    for (int j = 0; j < 4; ++j) entries.push_back({input(r)[0] * (j + 1), input(r)[1] * (j + 1)});
    expected += "before reduce_scatter Rank " + std::to_string(r) + " has input list " +
                tensor_list(entries) + "\n";
  }
  for (int j = 0; j < 4; ++j) {
    std::vector<std::int64_t> sum{0, 0};
    for (int r = 0; r < 4; ++r) {
      sum[0] += input(r)[0] * (j + 1);
      sum[1] += input(r)[1] * (j + 1);
    }
    expected += "after reduce_scatter Rank " + std::to_string(j) + " has data " + tensor(sum) + "\n";
  }
  CHECK(canonical_lesson("reduce_scatter") == expected);
}

TEST_CASE("all_to_all over TCP transposes the (rank, entry) matrix") {
  // Rank r sends [10r + j] to rank j, so rank r receives [10j + r] from rank j.
  std::string before, after;
  for (int r = 0; r < 4; ++r) {
    std::vector<std::vector<std::int64_t>> sent, received;
    for (int j = 0; j < 4; ++j) {
      sent.push_back({10 * r + j});
      received.push_back({10 * j + r});
    }
    before += "before all_to_all Rank " + std::to_string(r) + " has input list " +
              tensor_list(sent) + "\n";
    after += "after all_to_all Rank " + std::to_string(r) + " has output list " +
             tensor_list(received) + "\n";
  }
  CHECK(canonical_lesson("all_to_all") == before + after);
}

TEST_CASE("barrier over TCP") {
  std::string expected;
  for (int r = 0; r < 4; ++r) expected += "before barrier Rank " + std::to_string(r) + " is waiting\n";
  for (int r = 0; r < 4; ++r) expected += "after barrier Rank " + std::to_string(r) + " passed\n";
  CHECK(canonical_lesson("barrier") == expected);
}

TEST_CASE("a lesson that fails on its ranks fails the run, naming a rank") {
  // Arguments are checked before any rank starts (test_lessons.cpp); the
  // ranks' own environment is read by each rank as it connects, so a bad
  // RINGLAB_TIMEOUT_MS fails every rank process.
  const Run run = run_shell(kCleanEnvironment + "RINGLAB_TIMEOUT_MS=nonsense " + RINGLAB_EXE +
                            " lesson reduce --timeout-ms 5000");
  CHECK(run.status != 0);
  CHECK(run.output.find("RINGLAB_TIMEOUT_MS=nonsense is not an integer") != std::string::npos);
  CHECK(run.output.find("ringlab: error: tcp backend: rank ") != std::string::npos);
}

TEST_CASE("a lesson started by ringlab run takes the job's world; an -n that disagrees fails") {
  // Without -n the lesson runs on the job's WORLD_SIZE, not its default 4.
  const Run launched = run_shell(kCleanEnvironment + RINGLAB_EXE +
                                 " run --nproc-per-node 2 --time-limit-ms 30000 -- " +
                                 RINGLAB_EXE + " lesson reduce --timeout-ms 5000");
  CHECK(launched.status == 0);
  CHECK(ringlab::lessons::canonicalize(launched.output) == expected_reduce(2, 1));

  const Run mismatch = run_shell(kCleanEnvironment + RINGLAB_EXE +
                                 " run --nproc-per-node 2 --time-limit-ms 30000 -- " +
                                 RINGLAB_EXE + " lesson reduce -n 4 --timeout-ms 5000");
  CHECK(mismatch.status != 0);
  CHECK(mismatch.output.find("of a world of 2") != std::string::npos);
  CHECK(mismatch.output.find("asked to run 4 ranks: pass --world-size 2") != std::string::npos);

  const Run matching = run_shell(kCleanEnvironment + RINGLAB_EXE +
                                 " run --nproc-per-node 2 --time-limit-ms 30000 -- " +
                                 RINGLAB_EXE + " lesson reduce -n 2 --timeout-ms 5000");
  CHECK(matching.status == 0);
  CHECK(ringlab::lessons::canonicalize(matching.output) == expected_reduce(2, 1));
}

TEST_CASE("the tour over TCP runs each lesson once, in order") {
  const Run run =
      run_shell(kCleanEnvironment + RINGLAB_EXE + " tour --timeout-ms 20000");
  INFO(run.output);
  CHECK(run.status == 0);
  // Each lesson's header once, and the reduce lesson's lines once each.
  std::size_t headers = 0, reduce_root_lines = 0;
  for (std::size_t at = 0; (at = run.output.find("\n# ", at)) != std::string::npos; ++at) ++headers;
  if (run.output.rfind("# ", 0) == 0) ++headers;
  for (std::size_t at = 0;
       (at = run.output.find("after reudce  Rank  3  has data  tensor([16, 20])", at)) !=
       std::string::npos;
       ++at)
    ++reduce_root_lines;
  const Run list = run_shell(std::string(RINGLAB_EXE) + " lesson --list");
  const auto lessons = static_cast<std::size_t>(std::count(list.output.begin(), list.output.end(), '\n'));
  CHECK(lessons >= 11);
  CHECK(headers == lessons);
  CHECK(reduce_root_lines == 2);  // the reduce lesson and all_reduce print it once each
}

TEST_CASE("a tour under ringlab run: every rank runs every lesson on one connection") {
  const Run list = run_shell(std::string(RINGLAB_EXE) + " lesson --list");
  const auto lessons = static_cast<std::size_t>(std::count(list.output.begin(), list.output.end(), '\n'));
  const Run run = run_shell(kCleanEnvironment + RINGLAB_EXE +
                            " run --nproc-per-node 4 --time-limit-ms 120000 -- " + RINGLAB_EXE +
                            " tour -n 4 --timeout-ms 20000");
  INFO(run.output);
  CHECK(run.status == 0);
  // Each of the 4 ranks prints every header (it runs the whole program, as
  // under torchrun), then its own lines of each lesson.
  std::size_t headers = 0;
  for (std::size_t at = 0; (at = run.output.find("# ", at)) != std::string::npos; ++at)
    if (at == 0 || run.output[at - 1] == '\n') ++headers;
  CHECK(headers == 4 * lessons);
  CHECK(run.output.find("after reudce  Rank  3  has data  tensor([16, 20])") != std::string::npos);
}
