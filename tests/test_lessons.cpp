// Every lesson's output, canonicalized, against the article's printout
// (expected text transcribed from ../shared/reference/article-outputs.md).
#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <memory>
#include <string>

#include "lessons/canonical.hpp"

namespace {

struct Run {
  int status;
  std::string output;
};

Run run_ringlab(const std::string& arguments) {
  const std::string command = std::string(RINGLAB_EXE) + " " + arguments + " 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  REQUIRE(pipe);
  std::string output;
  std::array<char, 4096> chunk{};
  while (std::size_t n = std::fread(chunk.data(), 1, chunk.size(), pipe.get()))
    output.append(chunk.data(), n);
  const int status = pclose(pipe.release());
  return {status, output};
}

std::string canonical_lesson(const std::string& arguments) {
  Run run = run_ringlab("lesson " + arguments);
  INFO("ringlab lesson " << arguments << " printed:\n" << run.output);
  CHECK(run.status == 0);
  return ringlab::lessons::canonicalize(run.output);
}

}  // namespace

TEST_CASE("canonical form sorts interleaved lines by phase, rank and order") {
  const std::string interleaved =
      "after x  Rank  1  has data  b\n"
      "before x  Rank  1  has data  a\n"
      "before x  Rank  0  has data  c\n"
      "list: [d]\n"
      "after x  Rank  0  has data  e\n";
  CHECK(ringlab::lessons::canonicalize(interleaved) ==
        "before x Rank 0 has data c\n"
        "list: [d]\n"
        "before x Rank 1 has data a\n"
        "after x Rank 0 has data e\n"
        "after x Rank 1 has data b\n");
  // A rankless line belongs to rank 0 even when another rank printed between.
  const std::string gather_like =
      "after g  Rank  0  has data  a\n"
      "after g  Rank  3  has data  d\n"
      "gather_list: [a, b]\n"
      "after g  Rank  1  has data  b\n";
  CHECK(ringlab::lessons::canonicalize(gather_like) ==
        "after g Rank 0 has data a\n"
        "gather_list: [a, b]\n"
        "after g Rank 1 has data b\n"
        "after g Rank 3 has data d\n");
}


TEST_CASE("pingpong") {
  CHECK(canonical_lesson("pingpong --backend inproc") ==
        "after send, Rank 0 has data tensor(1.)\n"
        "after recv, Rank 0 has data tensor(2.)\n"
        "after recv, Rank 1 has data tensor(1.)\n"
        "after send, Rank 1 has data tensor(2.)\n");
}

TEST_CASE("pingpong_async prints the same as pingpong") {
  CHECK(canonical_lesson("pingpong_async --backend inproc") ==
        "after send, Rank 0 has data tensor(1.)\n"
        "after recv, Rank 0 has data tensor(2.)\n"
        "after recv, Rank 1 has data tensor(1.)\n"
        "after send, Rank 1 has data tensor(2.)\n");
}

TEST_CASE("broadcast") {
  CHECK(canonical_lesson("broadcast --backend inproc") ==
        "before broadcast Rank 0 has data tensor([1, 2])\n"
        "before broadcast Rank 1 has data tensor([3, 4])\n"
        "before broadcast Rank 2 has data tensor([5, 6])\n"
        "before broadcast Rank 3 has data tensor([7, 8])\n"
        "after broadcast Rank 0 has data tensor([1, 2])\n"
        "after broadcast Rank 1 has data tensor([1, 2])\n"
        "after broadcast Rank 2 has data tensor([1, 2])\n"
        "after broadcast Rank 3 has data tensor([1, 2])\n");
}

TEST_CASE("scatter") {
  CHECK(canonical_lesson("scatter --backend inproc") ==
        "before scatter Rank 0 has data tensor([1, 2])\n"
        "scater list: [tensor([0, 0]), tensor([1, 1]), tensor([2, 2]), tensor([3, 3])]\n"
        "before scatter Rank 1 has data tensor([3, 4])\n"
        "before scatter Rank 2 has data tensor([5, 6])\n"
        "before scatter Rank 3 has data tensor([7, 8])\n"
        "after scatter Rank 0 has data tensor([0, 0])\n"
        "after scatter Rank 1 has data tensor([1, 1])\n"
        "after scatter Rank 2 has data tensor([2, 2])\n"
        "after scatter Rank 3 has data tensor([3, 3])\n");
}

TEST_CASE("gather") {
  CHECK(canonical_lesson("gather --backend inproc") ==
        "before gather Rank 0 has data tensor([1, 2])\n"
        "before gather Rank 1 has data tensor([3, 4])\n"
        "before gather Rank 2 has data tensor([5, 6])\n"
        "before gather Rank 3 has data tensor([7, 8])\n"
        "after gather Rank 0 has data tensor([1, 2])\n"
        "gather_list: [tensor([1, 2]), tensor([3, 4]), tensor([5, 6]), tensor([7, 8])]\n"
        "after gather Rank 1 has data tensor([3, 4])\n"
        "after gather Rank 2 has data tensor([5, 6])\n"
        "after gather Rank 3 has data tensor([7, 8])\n");
}

TEST_CASE("reduce leaves Gloo's partial sums on the non-root ranks") {
  CHECK(canonical_lesson("reduce --backend inproc") ==
        "before reudce Rank 0 has data tensor([1, 2])\n"
        "before reudce Rank 1 has data tensor([3, 4])\n"
        "before reudce Rank 2 has data tensor([5, 6])\n"
        "before reudce Rank 3 has data tensor([7, 8])\n"
        "after reudce Rank 0 has data tensor([16, 20])\n"
        "after reudce Rank 1 has data tensor([15, 18])\n"
        "after reudce Rank 2 has data tensor([12, 14])\n"
        "after reudce Rank 3 has data tensor([16, 20])\n");
}

TEST_CASE("all_gather") {
  std::string expected;
  for (int r = 0; r < 4; ++r)
    expected += "before gather Rank " + std::to_string(r) + " has data tensor([" +
                std::to_string(1 + 2 * r) + ", " + std::to_string(2 + 2 * r) + "])\n";
  for (int r = 0; r < 4; ++r)
    expected += "after gather Rank " + std::to_string(r) + " has data tensor([" +
                std::to_string(1 + 2 * r) + ", " + std::to_string(2 + 2 * r) +
                "])\nafter gather Rank " + std::to_string(r) +
                " has gather list [tensor([1, 2]), tensor([3, 4]), tensor([5, 6]), "
                "tensor([7, 8])]\n";
  CHECK(canonical_lesson("all_gather --backend inproc") == expected);
}

TEST_CASE("all_reduce") {
  std::string expected;
  for (int r = 0; r < 4; ++r)
    expected += "before reudce Rank " + std::to_string(r) + " has data tensor([" +
                std::to_string(1 + 2 * r) + ", " + std::to_string(2 + 2 * r) + "])\n";
  for (int r = 0; r < 4; ++r)
    expected += "after reudce Rank " + std::to_string(r) + " has data tensor([16, 20])\n";
  CHECK(canonical_lesson("all_reduce --backend inproc") == expected);
}

TEST_CASE("a lesson with a bad argument fails with a message, not a hang") {
  Run run = run_ringlab("lesson no_such_lesson");
  CHECK(run.status != 0);
  CHECK(run.output.find("unknown lesson 'no_such_lesson'") != std::string::npos);
  run = run_ringlab("lesson reduce --backend inproc --root 9");
  CHECK(run.status != 0);
  CHECK(run.output.find("dst = 9 is out of range") != std::string::npos);
}
