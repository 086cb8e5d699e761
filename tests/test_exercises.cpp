// `ringlab exercise`'s checker: every reference solution passes it (the
// simulator and the in-process backends here, TCP through the
// exercise_solutions program), costs what ringlab's own algorithm costs and
// what the closed form says, and typical wrong solutions get the diagnosis
// they should.
#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "exercise_mistakes.hpp"
#include "exercise_solutions.hpp"
#include "exercises/cost.hpp"
#include "exercises/explain.hpp"
#include "exercises/record.hpp"
#include "run_program.hpp"

namespace {

using namespace ringlab;
using namespace ringlab::exercises;

const std::vector<int> kWorlds = {1, 2, 3, 4, 5, 6, 7, 8, 9};

std::vector<std::string> in_process_backends() {
  std::vector<std::string> names = check_backends();
  names.erase(std::remove(names.begin(), names.end(), "tcp"), names.end());
  return names;
}

// What `check` prints for fn, without TCP: "" when every stage passes.
std::string check_text(const Exercise& exercise, const Function& fn) {
  std::vector<StageResult> results{check_simulated(exercise, fn, kWorlds, false)};
  for (const std::string& backend : in_process_backends()) {
    if (results.back().failure) break;
    results.push_back(check_on_backend(exercise, fn, backend, kWorlds, Duration(3000)));
  }
  const StageResult& last = results.back();
  if (!last.failure) return "";
  return describe(exercise, *last.failure) + explain(exercise, fn, *last.failure);
}

}  // namespace

TEST_CASE("every reference solution passes the simulator and the in-process backends") {
  for (const Exercise& exercise : all_exercises()) {
    const Function fn = testing::solution_function(exercise.name);
    INFO(exercise.name);
    const StageResult simulated = check_simulated(exercise, fn, kWorlds, false);
    CHECK_MESSAGE(!simulated.failure,
                  (simulated.failure ? describe(exercise, *simulated.failure) : ""));
    for (const std::string& backend : in_process_backends()) {
      INFO("backend " << backend);
      const StageResult result = check_on_backend(exercise, fn, backend, kWorlds, Duration(10000));
      CHECK_MESSAGE(!result.failure, (result.failure ? describe(exercise, *result.failure) : ""));
      // 0, 1, 7 and 100003 elements on every world (one case for a barrier).
      CHECK(result.cases == (exercise.shape == exercises::Shape::Barrier ? 9 : 36));
    }
  }
}

TEST_CASE("every reference solution passes over TCP, one process per rank") {
  for (const Exercise& exercise : all_exercises()) {
    const std::string command = testing::kCleanEnvironment + EXERCISE_SOLUTIONS + " " +
                                std::string(exercise.name) +
                                " check --stage tcp --timeout-ms 20000";
    const testing::ProgramRun run = testing::run_shell(command);
    INFO(command << " printed:\n" << run.output);
    CHECK(run.status == 0);
    // World sizes 1 to 9; 4 cases each (1 for a barrier).
    const int cases = exercise.shape == exercises::Shape::Barrier ? 9 : 36;
    CHECK(run.output.find("tcp        " + std::to_string(cases) + " cases passed") !=
          std::string::npos);
  }
}

TEST_CASE("the reference solutions cost what ringlab's algorithms and the closed forms say") {
  struct Expected {
    const char* name;
    unsigned steps;
    std::size_t messages, bytes;
  };
  // 8 ranks, 1024 int64 elements (8192 bytes) per rank or per block:
  const Expected closed_forms[] = {
      {"ping_pong", 2, 1, 8192},                // 0 -> 1, 1 -> 0
      {"binomial_broadcast", 3, 3, 3 * 8192},   // log2 8 rounds; the root sends 3 times
      {"ring_reduce_scatter", 7, 7, 7 * 8192},  // P-1 blocks
      {"ring_all_reduce", 14, 14, 14 * 1024},   // 2(P-1) chunks of 128 elements
      {"recursive_doubling", 3, 3, 3 * 8192},   // log2 8 swaps of everything
      {"ring_all_gather", 7, 7, 7 * 8192},      // P-1 blocks
      {"pairwise_all_to_all", 7, 7, 7 * 8192},  // P-1 blocks
      {"dissemination_barrier", 3, 3, 0},       // log2 8 rounds of empty messages
  };
  for (const Expected& e : closed_forms) {
    INFO(e.name);
    const Exercise& exercise = find_exercise(e.name);
    const Cost mine = measure(exercise, testing::solution_function(e.name));
    CHECK(mine.steps == e.steps);
    CHECK(mine.messages == e.messages);
    CHECK(mine.bytes == e.bytes);
  }
  // DDP's three buckets (342, 341, 341 floats) each take a ring all-reduce of
  // 2(P-1) = 14 steps, one after the other.
  const Exercise& ddp = find_exercise("ddp_bucket_average");
  const Cost buckets = measure(ddp, testing::solution_function(ddp.name));
  CHECK(buckets.steps == 3 * 14);
  CHECK(buckets.messages == 3 * 14);
  for (const Exercise& exercise : all_exercises()) {
    INFO(exercise.name);
    const Cost mine = measure(exercise, testing::solution_function(exercise.name));
    const Cost theirs = measure(exercise, exercise.builtin_fn);
    CHECK(mine.steps == theirs.steps);
    CHECK(mine.messages == theirs.messages);
    CHECK(mine.bytes == theirs.bytes);
  }
}

TEST_CASE("typical wrong solutions get the diagnosis they should") {
  namespace m = testing::mistakes;
  struct Mistake {
    const char* exercise;
    Function fn;
    std::vector<std::string> says;
  };
  const Mistake mistakes[] = {
      {"ring_all_reduce",
       AllReduceFn{m::ring_all_reduce_wrong_chunk},
       {"FAILED on simulator", "in a world of 2", "step by step", "chunk"}},
      {"ring_all_reduce",
       AllReduceFn{m::ring_all_reduce_no_reduce},
       {"FAILED on simulator", "the inputs of r1", "should hold", "never reduces"}},
      {"ring_all_gather",
       BlocksFn{m::ring_all_gather_wrong_peer},
       {"FAILED on simulator", "in a world of 3", "deadlock", "rank 0 waits for rank 1",
        "the rank you receive from"}},
      {"recursive_doubling",
       AllReduceFn{m::recursive_doubling_always_sum},
       {"op max", "not combined with max"}},
      {"dissemination_barrier",
       BarrierFn{m::dissemination_barrier_one_round},
       {"in a world of 3", "before hearing from rank", "every round"}},
      {"ddp_bucket_average",
       BlocksFn{m::ddp_bucket_average_no_divide},
       {"in a world of 2", "summed but not averaged"}},
  };
  for (const Mistake& mistake : mistakes) {
    const std::string text = check_text(find_exercise(mistake.exercise), mistake.fn);
    INFO(mistake.exercise << ":\n" << text);
    for (const std::string& words : mistake.says) CHECK(text.find(words) != std::string::npos);
  }
}

TEST_CASE("everyone sending first with blocking sends passes where sends are buffered") {
  const Exercise& exercise = find_exercise("ring_all_reduce");
  const Function fn = AllReduceFn{testing::mistakes::ring_all_reduce_blocking_sends};
  CHECK(!check_simulated(exercise, fn, kWorlds, false).failure);
  CHECK(!check_on_backend(exercise, fn, "inproc", kWorlds, Duration(3000)).failure);
  const std::vector<std::string> backends = check_backends();
  if (std::find(backends.begin(), backends.end(), "nccl_rules") == backends.end()) {
    MESSAGE("this build has no nccl_rules backend: the hang under NCCL's rules is not checked");
    return;
  }
  const StageResult strict = check_on_backend(exercise, fn, "nccl_rules", kWorlds, Duration(2000));
  REQUIRE(strict.failure);
  const std::string text =
      describe(exercise, *strict.failure) + explain(exercise, fn, *strict.failure);
  INFO(text);
  CHECK(text.find("FAILED on nccl_rules") != std::string::npos);
  CHECK(text.find("in a world of 2") != std::string::npos);
  CHECK(text.find("NCCL's rules") != std::string::npos);
  CHECK(text.find("sendrecv") != std::string::npos);
}

TEST_CASE("an exercise's starter file is its task, its cost and an empty function") {
  const Exercise& exercise = find_exercise("ring_all_reduce");
  const std::string starter = starter_file(exercise);
  CHECK(starter.find("// ringlab exercise 4 of 9: ring all-reduce (ring_all_reduce)") == 0);
  CHECK(starter.find("2(P-1) steps") != std::string::npos);
  CHECK(starter.find("#include \"exercises/task.hpp\"") != std::string::npos);
  CHECK(
      starter.find(
          "void ring_all_reduce(Comm& comm, Elems buf, ReduceOp op) {\n  // Your code here.\n}") !=
      std::string::npos);
  for (const Exercise& e : all_exercises()) {
    INFO(e.name);
    CHECK(solution_file(e).find("void " + std::string(e.name) + "(") != std::string::npos);
    CHECK(solution_file(e).find("#include \"exercises/task.hpp\"") != std::string::npos);
  }
}

TEST_CASE("a function of another exercise's signature is refused by name") {
  const Exercise& broadcast = find_exercise("binomial_broadcast");
  CHECK(signature_problem(broadcast, testing::solution_function("binomial_broadcast")).empty());
  const std::string why =
      signature_problem(broadcast, testing::solution_function("ring_all_reduce"));
  CHECK(why.find("binomial_broadcast must be void(Comm&, Elems, int)") != std::string::npos);
}

TEST_CASE("a recording read back is the run that was recorded") {
  const Exercise& exercise = find_exercise("ring_all_reduce");
  const Case c{.ranks = 4, .count = 8};
  const Recorded recorded =
      record_case(exercise, testing::solution_function(exercise.name), c, true);
  REQUIRE(recorded.run);
  std::stringstream stream;
  write_recording(stream, recorded.logs, recorded.info);
  const sim::Run back = read_recording(stream);
  CHECK(back.steps == 6);
  CHECK(back.steps == recorded.run->steps);
  CHECK(back.messages.size() == recorded.run->messages.size());
  CHECK(back.writes.size() == recorded.run->writes.size());
  CHECK(back.values == recorded.run->values);
  std::stringstream garbage("not a recording");
  CHECK_THROWS_WITH_AS(read_recording(garbage), "not a recording of an exercise",
                       std::runtime_error);
}
