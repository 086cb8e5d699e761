// Every lesson's output, canonicalized, against the article's printout
// (expected text transcribed from docs/article-outputs.md).
#include <doctest/doctest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

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
  CHECK(run.output.find("--root 9 names the dst rank, but a world of 4 ranks has ranks 0 to 3") !=
        std::string::npos);
}

namespace {

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// `ringlab ARGUMENTS` is refused with one error that contains `message`, and
// no rank started: no rank printed a line (ranks print "... Rank r ..."), the
// benchmark printed no header (rank 0's first line), and no rank reported an
// error of its own.
void refused_before_start(const std::string& arguments, const std::string& message) {
  const Run run = run_ringlab(arguments);
  INFO("ringlab " << arguments << " printed:\n" << run.output);
  CHECK(run.status != 0);
  CHECK(run.output.find(message) != std::string::npos);
  CHECK(count_of(run.output, message) == 1);
  CHECK(count_of(run.output, "ringlab: error:") <= 1);          // none from a parse error
  CHECK(run.output.find("error: rank ") == std::string::npos);  // "rank 2: reduce: ..."
  CHECK(run.output.find("Rank") == std::string::npos);
  CHECK(run.output.find("before") == std::string::npos);
  CHECK(run.output.find("# ringlab bench") == std::string::npos);
}

}  // namespace

// Issue 15, item 7: over TCP every rank would find these itself, after the
// "before" lines, and print the same error once per rank.
TEST_CASE("bad lesson arguments are refused with one error before any rank starts") {
  refused_before_start("lesson reduce --root 7",
                       "lesson reduce: --root 7 names the dst rank, but a world of 4 ranks has "
                       "ranks 0 to 3: pass a --root below 4, or --world-size 8 or more");
  refused_before_start("lesson broadcast -n 3 --root 3", "--root 3 names the src rank");
  refused_before_start("lesson all_reduce --algorithm all_reduce=foo",
                       "--algorithm all_reduce=foo: all_reduce has no algorithm 'foo': use one "
                       "of ring, ");
  refused_before_start("lesson reduce --algorithm all_reduce=ring --algorithm reduce=ring",
                       "reduce has no algorithm 'ring': use one of gloo_ring, ");
  refused_before_start("lesson all_reduce --algorithm allreduce=ring",
                       "--algorithm allreduce=ring: unknown collective 'allreduce'");
  refused_before_start("lesson all_reduce --algorithm ring", "write COLLECTIVE=NAME");
  refused_before_start("lesson all_reduce --root 1",
                       "lesson all_reduce has no src or dst rank, so --root 1 would change "
                       "nothing: leave it out. --root is for broadcast (src), scatter (src), "
                       "gather (dst), reduce (dst)");
  refused_before_start("lesson reduce --root -1", "--root: Value -1 not in range 0 to 1023");
  refused_before_start("lesson reduce --backend gloo", "--backend: gloo not in {inproc,tcp");
  refused_before_start("lesson reduce -n 0", "--world-size: Value 0 not in range 1 to 1024");
  refused_before_start("tour --algorithm reduce=nope", "reduce has no algorithm 'nope'");
}

TEST_CASE("bad benchmark arguments are refused with one error before any rank starts") {
  const std::string bench = "bench --sizes 4K:4K --warmup 0 --iters 1 ";
  refused_before_start(bench + "--op reduce --root 7",
                       "--root 7 is not a rank of a world of 4 ranks (0 to 3): pass a --root "
                       "below 4, or -n 8 or more");
  refused_before_start(bench + "--op all_reduce --root 1", "--root: all_reduce has no root rank");
  refused_before_start(bench + "--op all_reduce --algorithm foo",
                       "--algorithm foo: all_reduce has no such algorithm: use one of ring, ");
  refused_before_start(bench + "--op sendrecv --algorithm ring",
                       "sendrecv is one send and one receive per rank and has no algorithm");
  refused_before_start(bench + "--op sendrecv -n 1", "sendrecv passes messages between ranks");
  refused_before_start(bench + "--op all_reduce --redop prod",
                       "the benchmark checks its results for sum, avg, min and max only");
  refused_before_start(bench + "--op all_reduce --redop avg --dtype int64",
                       "reduce op avg does not apply to dtype int64");
  refused_before_start(bench + "--op all_gather --redop max",
                       "--redop: all_gather does not reduce");
  refused_before_start(bench + "--op allreduce", "unknown benchmark op 'allreduce'");
  // What passes those checks runs (the header is rank 0's first line).
  const Run run = run_ringlab(bench + "--op reduce --root 3 --redop max --backend inproc");
  INFO(run.output);
  CHECK(run.status == 0);
  CHECK(run.output.find("# ringlab bench: reduce") != std::string::npos);
}

// Issue 15, item 6: `lesson pingpong -n 4` ran and exited 0 while ranks 2 and
// 3 did nothing; the article's program is for exactly 2 ranks.
TEST_CASE("a lesson for exactly 2 ranks refuses another world size before any rank starts") {
  for (const char* name : {"pingpong", "pingpong_async"})
    for (int world : {1, 3, 4}) {
      const std::string n = std::to_string(world);
      refused_before_start(std::string("lesson ") + name + " -n " + n,
                           std::string("lesson ") + name + " cannot run on " + n +
                               (world == 1 ? " rank" : " ranks") +
                               ": the article's ping-pong passes a tensor between rank 0 and "
                               "rank 1: it needs exactly 2 ranks (-n 2)");
    }
  const Run run = run_ringlab("lesson pingpong -n 2 --backend inproc");
  CHECK(run.status == 0);
}

TEST_CASE("every lesson runs at its own default world size") {
  for (const auto& lesson : ringlab::lessons::all_lessons()) {
    CAPTURE(lesson.name);
    CHECK(ringlab::lessons::world_problem(lesson, lesson.default_world_size).empty());
    CHECK(ringlab::lessons::world_problem(lesson, 0) != "");
  }
}

namespace {

// The tour's sections: the header line, and the ranks that printed in it.
struct Section {
  std::string header;
  std::set<int> ranks;
};

std::vector<Section> sections_of(const std::string& output) {
  std::vector<Section> sections;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# ", 0) == 0) {
      sections.push_back({line, {}});
    } else if (const auto at = line.find(" Rank "); at != std::string::npos && !sections.empty()) {
      sections.back().ranks.insert(std::stoi(line.substr(at + 6)));
    }
  }
  return sections;
}

std::set<int> ranks_below(int world) {
  std::set<int> ranks;
  for (int r = 0; r < world; ++r) ranks.insert(r);
  return ranks;
}

}  // namespace

// Issue 15, item 6: `tour -n 8` headed pingpong "pingpong (world 8)" and ran
// its 2-rank program. Each header now says the world whose ranks printed
// below it, and a lesson that cannot use the asked size says it was skipped.
TEST_CASE("the tour's headers say the world size that ran") {
  for (const std::string& n : {std::string(""), std::string(" -n 8")}) {
    const Run run = run_ringlab("tour --backend inproc" + n);
    INFO("ringlab tour --backend inproc" << n << " printed:\n" << run.output);
    CHECK(run.status == 0);
    const std::vector<Section> sections = sections_of(run.output);
    CHECK(sections.size() == ringlab::lessons::all_lessons().size());
    for (const Section& section : sections) {
      CAPTURE(section.header);
      const auto world_at = section.header.find("(world ");
      if (section.header.find("(skipped: not on 8 ranks)") != std::string::npos) {
        CHECK(section.ranks.empty());  // nothing ran
        continue;
      }
      REQUIRE(world_at != std::string::npos);
      const int world = std::stoi(section.header.substr(world_at + 7));
      // "(world 2, then 4)": the lesson runs a second world after the first.
      const std::string worlds =
          section.header.substr(world_at, section.header.find(')', world_at) - world_at);
      const auto then_at = worlds.find(", then ");
      const int last_world =
          then_at == std::string::npos ? world : std::stoi(worlds.substr(then_at + 7));
      const std::string name = section.header.substr(2, section.header.find(' ', 2) - 2);
      CHECK(world == (n.empty() ? ringlab::lessons::find_lesson(name).default_world_size : 8));
      // Lessons that print "Rank r" lines: exactly the ranks of the worlds.
      if (name != "support" && !section.ranks.empty())
        CHECK(section.ranks == ranks_below(last_world));
    }
    if (!n.empty()) {
      CHECK(run.output.find("# pingpong (skipped: not on 8 ranks): send/recv") !=
            std::string::npos);
      CHECK(run.output.find("skipped: the article's ping-pong passes a tensor between rank 0 and "
                            "rank 1: it needs exactly 2 ranks (-n 2)") != std::string::npos);
      CHECK(run.output.find("after send") == std::string::npos);
    }
  }
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

TEST_CASE("every lesson says what to try next, and that command works as printed") {
  const std::string folder =
      (std::filesystem::temp_directory_path() / ("ringlab-try-" + std::to_string(::getpid())))
          .string();
  std::filesystem::create_directories(folder);
  for (const ringlab::lessons::Lesson& lesson : ringlab::lessons::all_lessons()) {
    const std::string line(lesson.try_next);
    CAPTURE(lesson.name);
    REQUIRE(!line.empty());
    // "VAR=value ringlab ARGS": run from an empty folder (what it writes lands there).
    const std::size_t at = line.find("ringlab ");
    REQUIRE(at != std::string::npos);
    const std::string command = "cd " + folder + " && " + ringlab::testing::kCleanEnvironment +
                                line.substr(0, at) + RINGLAB_EXE + line.substr(at + 7);
    const Run run = ringlab::testing::run_shell(command);
    INFO(command << " printed:\n" << run.output);
    CHECK(run.status == 0);
  }
  std::filesystem::remove_all(folder);
}
