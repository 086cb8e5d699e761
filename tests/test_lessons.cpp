// Every lesson's output, canonicalized, against the article's printout
// (expected text transcribed from ../shared/reference/article-outputs.md).
#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <memory>
#include <string>

#include "lessons/canonical.hpp"
#include "article_outputs.hpp"
#include "run_program.hpp"

namespace {

using Run = ringlab::testing::ProgramRun;
using ringlab::testing::run_ringlab;

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


TEST_CASE("every article lesson prints what the article prints (ranks as threads)") {
  for (const auto& article : ringlab::testing::article_outputs()) {
    CAPTURE(article.lesson);
    CHECK(canonical_lesson(std::string(article.lesson) + " --backend inproc") == article.canonical);
  }
}

TEST_CASE("a lesson with a bad argument fails with a message, not a hang") {
  Run run = run_ringlab("lesson no_such_lesson");
  CHECK(run.status != 0);
  CHECK(run.output.find("unknown lesson 'no_such_lesson'") != std::string::npos);
  run = run_ringlab("lesson reduce --backend inproc --root 9");
  CHECK(run.status != 0);
  CHECK(run.output.find("dst = 9 is out of range") != std::string::npos);
}
