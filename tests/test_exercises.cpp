// `ringlab exercise`'s checker: every reference solution and every algorithm
// of ringlab's passes it (the simulator and the in-process backends here, TCP
// through the exercise_solutions program), the closed forms agree with the
// articles, the solutions cost what ringlab's own algorithms cost and what
// the closed form says, and typical wrong solutions get the diagnosis they
// should. (test_exercise_checker.cpp: the checker against programs that try it.)
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <sstream>
#include <string>
#include <tuple>
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

// The cases of every world, on a backend (the 100,003-element one included).
int backend_cases(const Exercise& exercise) {
  int cases = 0;
  for (int P : kWorlds) cases += static_cast<int>(cases_for(exercise, P).size());
  return cases;
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
      CHECK(result.cases == backend_cases(exercise));
    }
  }
}

TEST_CASE("every case is checked in every dtype, and with every op that applies") {
  const Exercise& ring = find_exercise("ring_all_reduce");
  const std::vector<Case> cases = cases_for(ring, 4);
  // The articles' three (int64, sum), then 61 pairs of a dtype and an op: 9 more dtypes with
  // sum; prod, min, max in all 10; avg in the 4 floats; band, bor, bxor in the 5 integers and
  // bool; then the large case.
  CHECK(cases.size() == 3 + 9 + 3 * 10 + 4 + 3 * 6 + 1);
  // Every dtype ringlab has is among them.
  for (DType dtype : kAllDTypes)
    CHECK(std::find(std::begin(kCheckedDTypes), std::end(kCheckedDTypes), dtype) !=
          std::end(kCheckedDTypes));
  for (DType dtype : kCheckedDTypes)
    for (ReduceOp op : kAllReduceOps) {
      INFO(dtype_name(dtype) << " " << op_name(op));
      const bool present = std::any_of(cases.begin(), cases.end(), [&](const Case& c) {
        return c.dtype == dtype && c.op == op;
      });
      CHECK(present == op_applies(op, dtype));
    }
  // An exercise without an op: every dtype, sum.
  const std::vector<Case> gather = cases_for(find_exercise("ring_all_gather"), 4, false);
  CHECK(gather.size() == 3 + 9);
  // The values are exact: AVG's inputs are multiples of P, so the average is an integer.
  const Case avg{.ranks = 3, .count = 7, .op = ReduceOp::AVG, .dtype = DType::BFloat16};
  for (std::size_t i = 0; i < 7; ++i) {
    const double mean = expected_value(ring, avg, 0, 0, i);
    // 3 (1 + (r + i) % 3) averaged over r = 0, 1, 2: 1 + 2 + 3 whatever i.
    CHECK(mean == 6);
  }
  // At 9 ranks every partial sum of AVG's inputs is at most 9 * 27 = 243, exact in bfloat16.
  const Case avg9{.ranks = 9, .count = 7, .op = ReduceOp::AVG, .dtype = DType::BFloat16};
  for (std::size_t i = 0; i < 7; ++i) CHECK(expected_value(ring, avg9, 0, 0, i) == 18);
  // Integers wrap as the dtype does: int8's sum of 1 + 2r + 6 over 9 ranks is 135 - 256.
  const Case int8_sum{.ranks = 9, .count = 7, .op = ReduceOp::SUM, .dtype = DType::Int8};
  CHECK(expected_value(ring, int8_sum, 0, 0, 6) == 135 - 256);
  // bool's inputs are (r + i) % 3 != 0: at 2 ranks element 0 is false, true; element 1 true, true.
  const Case bool_and{.ranks = 2, .count = 7, .op = ReduceOp::BAND, .dtype = DType::Bool};
  CHECK(expected_value(ring, bool_and, 0, 0, 0) == 0);
  CHECK(expected_value(ring, bool_and, 0, 0, 1) == 1);
  const Case bool_or{.ranks = 2, .count = 7, .op = ReduceOp::SUM, .dtype = DType::Bool};
  CHECK(expected_value(ring, bool_or, 0, 0, 0) == 1);
  CHECK(input_value(bool_or, 0, 0) == 0);  // so rank 0 needs rank 1's input
}

TEST_CASE("every reference solution passes over TCP, one process per rank") {
  for (const Exercise& exercise : all_exercises()) {
    const std::string command = testing::kCleanEnvironment + EXERCISE_SOLUTIONS + " " +
                                std::string(exercise.name) +
                                " check --stage tcp --timeout-ms 20000";
    const testing::ProgramRun run = testing::run_shell(command);
    INFO(command << " printed:\n" << run.output);
    CHECK(run.status == 0);
    CHECK(run.output.find("tcp        " + std::to_string(backend_cases(exercise)) +
                          " cases passed") != std::string::npos);
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
      // Gloo: 16 segments of 64 elements (512 bytes), 2 a chunk: 14 ring iterations of one
      // segment, two in flight (7 steps), then a non-root rank's chunk (1024 bytes) to the root.
      {"gloo_ring_reduce", 8, 15, 14 * 512 + 1024},
      {"recursive_halving_reduce_scatter", 3, 3, 7 * 8192},  // half, a quarter, an eighth of 8 blocks
      {"rabenseifner_all_reduce", 6, 6, 14 * 1024},  // halving 4+2+1 eighths, doubling 1+2+4
      {"binary_tree_all_reduce", 6, 3, 3 * 8192},    // depth 3 up and down; up once, 2 children
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
       {"op prod", "the same case with op sum passes", "not combined with prod"}},
      {"ring_all_reduce",
       AllReduceFn{m::ring_all_reduce_int64_only},
       {"FAILED on simulator", "7 int32 elements", "the same case in int64 passes, but not in int32",
        "assume the element type"}},
      {"ring_all_reduce",
       AllReduceFn{m::ring_all_reduce_four_dtypes},
       {"FAILED on simulator", "7 bool elements",
        "the same case in int64 passes, but not in bool", "assume the element type"}},
      {"ring_all_reduce",
       AllReduceFn{m::ring_all_reduce_forgets_increment},
       {"FAILED on simulator", "in a world of 2", "your loop never ends", "++s"}},
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

TEST_CASE("a ring where every rank receives first is told so, not asked about collectives") {
  const Function fn = AllReduceFn{testing::mistakes::ring_all_reduce_receive_first};
  const std::string text = check_text(find_exercise("ring_all_reduce"), fn);
  INFO(text);
  CHECK(text.find("FAILED on simulator: case 1 of 64 in a world of 2") != std::string::npos);
  CHECK(text.find("rank 0 waits for rank 1 (step 0); rank 1 waits for rank 0 (step 0)") !=
        std::string::npos);
  CHECK(text.find("every rank is blocked receiving") != std::string::npos);
  CHECK(text.find("Send first on some ranks") != std::string::npos);
  CHECK(text.find("sendrecv") != std::string::npos);
  CHECK(text.find("same collectives in the same order") == std::string::npos);
  CHECK(text.find("nobody will send") == std::string::npos);
  // A message to the wrong peer is still the other deadlock.
  const std::string wrong_peer = check_text(find_exercise("ring_all_gather"),
                                            BlocksFn{testing::mistakes::ring_all_gather_wrong_peer});
  CHECK(wrong_peer.find("every rank is blocked receiving") == std::string::npos);
}

TEST_CASE("a loop that never ends is stopped within a few hundred messages") {
  const auto start = std::chrono::steady_clock::now();
  const Function fn = AllReduceFn{testing::mistakes::ring_all_reduce_forgets_increment};
  const StageResult result = check_simulated(find_exercise("ring_all_reduce"), fn, kWorlds, false);
  REQUIRE(result.failure);
  INFO(describe(find_exercise("ring_all_reduce"), *result.failure));
  CHECK(result.failure->c.ranks == 2);
  CHECK(result.failure->error.find("your loop never ends") != std::string::npos);
  // 64 + 16 * 2^2 = 128 messages for an empty case of 2 ranks, not 2^20 steps' worth.
  CHECK(result.failure->error.find("more than 128 messages") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
}

TEST_CASE("ringlab's own algorithms pass every case of their exercise") {
  // The closed forms (cases.cpp, reduce_forms.cpp) and primitives/ are written
  // apart: each checks the other, Gloo's partial results included (on the
  // 100,003 elements too, whose segments end off the chunks' boundaries).
  for (const Exercise& exercise : all_exercises()) {
    INFO(exercise.name);
    const bool large = exercise.shape == exercises::Shape::Reduce;
    const StageResult simulated = check_simulated(exercise, exercise.builtin_fn, kWorlds, large);
    CHECK_MESSAGE(!simulated.failure,
                  (simulated.failure ? describe(exercise, *simulated.failure) : ""));
  }
}

TEST_CASE("Gloo's ring reduce leaves what the article prints on every rank") {
  // seed 003's reduce: 4 ranks, [1 + 2r, 2 + 2r], dst 3 (README: "The reduce
  // lesson leaves partial sums on the non-root ranks").
  const Exercise& gloo = find_exercise("gloo_ring_reduce");
  const Case c{.ranks = 4, .count = 2, .root = 3};
  const double article[4][2] = {{16, 20}, {15, 18}, {12, 14}, {16, 20}};
  for (int r = 0; r < 4; ++r)
    for (std::size_t i = 0; i < 2; ++i) {
      CHECK(initial_value(gloo, c, r, 0, i) == 1 + 2 * r + static_cast<double>(i));
      CHECK(expected_value(gloo, c, r, 0, i) == article[r][i]);
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
  CHECK(starter.find("// ringlab exercise 4 of 13: ring all-reduce (ring_all_reduce)") == 0);
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

TEST_CASE("a starter file includes every header its task tells the learner to use") {
  for (const Exercise& e : all_exercises()) {
    INFO(e.name);
    const std::string task(e.task), starter = starter_file(e);
    for (std::size_t at = task.find("primitives/"); at != std::string::npos;
         at = task.find("primitives/", at + 1)) {
      const std::string header = task.substr(at, task.find(".hpp", at) + 4 - at);
      CHECK(starter.find("#include \"" + header + "\"") != std::string::npos);
    }
  }
}

TEST_CASE("the binomial broadcast's task describes the messages its solution sends") {
  const Exercise& broadcast = find_exercise("binomial_broadcast");
  CHECK(std::string(broadcast.task).find("for P = 4 the root sends to 2 (step 1), then to 1 (step "
                                         "0), and 2 sends to 3 (step 0)") != std::string::npos);
  const Recorded recorded = record_case(broadcast, testing::solution_function(broadcast.name),
                                        Case{.ranks = 4, .count = 2, .root = 0}, false);
  REQUIRE(recorded.run);
  std::vector<std::tuple<int, int, unsigned>> sent;  // from, to, step
  for (const sim::Message& m : recorded.run->messages)
    sent.emplace_back(m.src, m.dst, static_cast<unsigned>(m.tag & 0xFFFFF));
  std::sort(sent.begin(), sent.end());
  const std::vector<std::tuple<int, int, unsigned>> described = {{0, 1, 0}, {0, 2, 1}, {2, 3, 0}};
  CHECK(sent == described);
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
