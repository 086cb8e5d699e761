// Every lesson's output, canonicalized, against the article's printout
// (expected text transcribed from ../shared/reference/article-outputs.md).
#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <memory>
#include <string>

#include "article_outputs.hpp"
#include "lessons/canonical.hpp"
#include "lessons/runner.hpp"
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

TEST_CASE("canonical form leaves out the runner's '#' lines") {
  CHECK(ringlab::lessons::canonicalize("# lesson x: all_reduce algorithm ring (the article's)\n"
                                       "after x  Rank  1  has data  b\n"
                                       "# a header\n"
                                       "before x  Rank  1  has data  a\n") ==
        "before x Rank 1 has data a\n"
        "after x Rank 1 has data b\n");
}

// The lines of `output` that start with prefix.
std::vector<std::string> lines_starting(const std::string& output, const std::string& prefix) {
  std::vector<std::string> found;
  std::size_t at = 0;
  while (at < output.size()) {
    const std::size_t end = std::min(output.find('\n', at), output.size());
    const std::string line = output.substr(at, end - at);
    if (line.rfind(prefix, 0) == 0) found.push_back(line);
    at = end + 1;
  }
  return found;
}

TEST_CASE("a lesson keeps its article's algorithm and says which one ran, once, outside stdout") {
  using Lines = std::vector<std::string>;
  // The process group's all_reduce default is auto; the article's is the ring.
  Run run = run_ringlab("lesson all_reduce --backend inproc");
  CHECK(run.status == 0);
  CHECK(lines_starting(run.output, "#") ==
        Lines{"# lesson all_reduce: all_reduce algorithm ring (the article's)"});
  run = run_ringlab("lesson all_reduce --backend inproc --algorithm all_reduce=recursive_doubling");
  CHECK(lines_starting(run.output, "#") ==
        Lines{"# lesson all_reduce: all_reduce algorithm recursive_doubling (as chosen)"});
  run = run_ringlab("lesson reduce --backend inproc");
  CHECK(lines_starting(run.output, "#") ==
        Lines{"# lesson reduce: reduce algorithm gloo_ring (the article's)"});
  run = run_ringlab("lesson broadcast --backend inproc");
  CHECK(lines_starting(run.output, "#") ==
        Lines{"# lesson broadcast: broadcast algorithm binomial (the default)"});
  run = run_ringlab("lesson pingpong --backend inproc");
  CHECK(lines_starting(run.output, "#").empty());  // point to point: no collective
  // stdout alone is the article's program's output.
  run = ringlab::testing::run_shell("(" + ringlab::testing::kCleanEnvironment + RINGLAB_EXE +
                                    " lesson all_reduce --backend inproc 2>/dev/null)");
  CHECK(run.output.find("after reudce  Rank  3  has data  tensor([16, 20])") != std::string::npos);
  CHECK(lines_starting(run.output, "#").empty());

  // The tour says it in each lesson's header instead.
  run = run_ringlab("tour --backend inproc");
  CHECK(run.status == 0);
  const Lines headers = lines_starting(run.output, "# all_reduce ");
  CHECK(headers == Lines{"# all_reduce (world 4): all_reduce: everyone gets the sum "
                         "[all_reduce algorithm ring (the article's)]"});
  CHECK(lines_starting(run.output, "# lesson").empty());
}

TEST_CASE("a lesson's group selects its article's algorithm unless the caller named one") {
  using namespace ringlab;
  const lessons::Lesson& all_reduce = lessons::find_lesson("all_reduce");
  ProcessGroupOptions caller;
  CHECK(algorithm_in_effect(caller, Collective::AllReduce) == "auto");
  CHECK(algorithm_in_effect(lessons::lesson_group_options(all_reduce, caller),
                            Collective::AllReduce) == "ring");
  caller.algorithms[Collective::AllReduce] = "binary_tree";
  CHECK(algorithm_in_effect(lessons::lesson_group_options(all_reduce, caller),
                            Collective::AllReduce) == "binary_tree");
  caller.algorithms[Collective::AllReduce] = "default";  // names none
  CHECK(algorithm_in_effect(lessons::lesson_group_options(all_reduce, caller),
                            Collective::AllReduce) == "ring");
}
