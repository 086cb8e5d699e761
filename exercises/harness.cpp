// exercise_main: the command line of an exercise's program (harness.hpp).
#include "exercises/harness.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "exercises/cost.hpp"
#include "exercises/evidence.hpp"
#include "exercises/explain.hpp"
#include "exercises/record.hpp"
#include "ops/atomic_file.hpp"

namespace ringlab::exercises {

namespace {

constexpr const char* kUsage =
    "usage: %s [check] [--stage STAGE[,STAGE...]] [--ranks P[,P...]] [--timeout-ms MS]\n"
    "          [--large] [--report-fd FD]\n"
    "       %s cost\n"
    "       %s record [--ranks P] [--count N] [--root R] --out FILE\n"
    "\n"
    "check   runs your %s on the cases of `ringlab exercise check` (world sizes 1 to 9;\n"
    "        0, 1, 7 and 100003 elements; every dtype, every op) and explains the first\n"
    "        failure: in the simulator, then on every backend of this build that runs on\n"
    "        a CPU (tcp: one process per rank, forked at each world). --stage: those only\n"
    "        (simulator, inproc, nccl_rules, tcp). --large: the simulator checks the\n"
    "        100003-element cases too. --report-fd: where `ringlab exercise check`, which\n"
    "        gives the verdict, reads what every case left (not for use by hand).\n"
    "cost    your algorithm's steps, messages and bytes per rank next to ringlab's.\n"
    "record  the simulator's recording of one case, for `ringlab exercise show`.\n";

struct Arguments {
  std::string verb = "check";
  std::vector<std::string> stages;  // empty: the simulator and the in-process backends
  int report_fd = -1;
  std::vector<int> ranks;
  int timeout_ms = 5000;
  bool large = false;
  std::optional<std::size_t> count;
  int root = -1;
  std::string out;
};

int whole_number(const std::string& option, const std::string& text, long long min, long long max) {
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value < min || value > max)
    throw std::invalid_argument(option + " " + text + ": give a whole number from " +
                                std::to_string(min) + " to " + std::to_string(max));
  return static_cast<int>(value);
}

std::vector<std::string> comma_list(const std::string& text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    items.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

std::vector<int> rank_list(const std::string& text) {
  std::vector<int> worlds;
  for (const std::string& item : comma_list(text))
    worlds.push_back(whole_number("--ranks", item, 1, kMaxWorld));
  return worlds;
}

Arguments parse(int argc, char** argv) {
  Arguments a;
  int i = 1;
  if (i < argc && argv[i][0] != '-') a.verb = argv[i++];
  if (a.verb != "check" && a.verb != "cost" && a.verb != "record")
    throw std::invalid_argument("unknown command '" + a.verb + "': use check, cost or record");
  for (; i < argc; ++i) {
    const std::string option = argv[i];
    if (option == "--large") {
      a.large = true;
      continue;
    }
    if (i + 1 >= argc) throw std::invalid_argument(option + " needs a value, or is unknown");
    const std::string value = argv[++i];
    if (option == "--stage")
      a.stages = comma_list(value);
    else if (option == "--report-fd")
      a.report_fd = whole_number(option, value, 0, 1 << 20);
    else if (option == "--ranks")
      a.ranks = rank_list(value);
    else if (option == "--timeout-ms")
      a.timeout_ms = whole_number(option, value, 1, 3600000);
    else if (option == "--count")
      a.count = std::size_t(whole_number(option, value, 0, 1 << 20));
    else if (option == "--root")
      a.root = whole_number(option, value, 0, kMaxWorld - 1);
    else if (option == "--out")
      a.out = value;
    else
      throw std::invalid_argument("unknown option " + option);
  }
  if (a.ranks.empty())
    for (int P = 1; P <= kMaxWorld; ++P) a.ranks.push_back(P);
  return a;
}

// One stage; prints a line when it passes, the explained failure when not.
bool run_stage(const Exercise& exercise, const Function& fn, const std::string& stage,
               const Arguments& a, const Reporter* reporter) {
  const StageResult result =
      stage == kSimulatorStage
          ? check_simulated(exercise, fn, a.ranks, a.large, reporter)
          : check_on_backend(exercise, fn, stage, a.ranks, Duration(a.timeout_ms), reporter);
  if (!result.failure) {
    std::printf("%-10s %d cases passed\n", stage.c_str(), result.cases);
    std::fflush(stdout);
    return true;
  }
  std::printf("%-10s %d cases passed, then\n%s", stage.c_str(), result.cases,
              describe(exercise, *result.failure).c_str());
  std::fflush(stdout);
  // Explaining runs the function again in the simulator: the checker gives
  // it a case's time.
  if (reporter) reporter->send({Record::Kind::Phase, {"explaining"}, ""});
  std::printf("%s", explain(exercise, fn, *result.failure).c_str());
  std::fflush(stdout);
  return false;
}

std::vector<std::string> stages_to_check(const Arguments& a) {
  const std::vector<std::string> names = check_backends();
  std::vector<std::string> all{kSimulatorStage};
  all.insert(all.end(), names.begin(), names.end());
  if (a.stages.empty()) return all;
  for (const std::string& stage : a.stages)
    if (std::find(all.begin(), all.end(), stage) == all.end()) {
      std::string list;
      for (const std::string& n : all) list += (list.empty() ? "" : ", ") + n;
      throw std::invalid_argument("--stage " + stage + ": this build checks on " + list);
    }
  return a.stages;
}

int check(const Exercise& exercise, const Function& fn, const Arguments& a) {
  const std::vector<std::string> stages = stages_to_check(a);
  std::optional<Reporter> reporter;
  if (a.report_fd >= 0) reporter.emplace(a.report_fd);
  for (const std::string& stage : stages)
    if (!run_stage(exercise, fn, stage, a, reporter ? &*reporter : nullptr)) return 1;
  return 0;
}

int record(const Exercise& exercise, const Function& fn, const Arguments& a) {
  if (a.out.empty()) throw std::invalid_argument("record needs --out FILE");
  Case c = cost_case(exercise);
  c.ranks = a.ranks.size() == 1 ? a.ranks.front() : 4;
  c.count = a.count.value_or(exercise.shape == Shape::Barrier ? 0 : 2 * std::size_t(c.ranks));
  c.root = a.root >= 0 ? std::min(a.root, c.ranks - 1) : 0;
  const Recorded recorded = record_case(exercise, fn, c, /*values=*/true);
  if (!recorded.run)
    throw std::runtime_error("on " + describe(exercise, c) + ": " + recorded.error);
  write_file_atomically(a.out, "recording", [&](std::ostream& out) {
    write_recording(out, recorded.logs, recorded.info);
  });
  std::printf("recorded %s on %s: %u steps, in %s\n", std::string(exercise.name).c_str(),
              describe(exercise, c).c_str(), recorded.run->steps, a.out.c_str());
  return 0;
}

}  // namespace

int exercise_main(int argc, char** argv, std::string_view name, Function fn) {
  const char* program = argc > 0 ? argv[0] : "exercise";
  try {
    if (argc > 1 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
      const std::string n(name);
      std::printf(kUsage, program, program, program, n.c_str());
      return 0;
    }
    const Exercise& exercise = find_exercise(name);
    if (const std::string why = signature_problem(exercise, fn); !why.empty())
      throw std::invalid_argument(why);
    const Arguments a = parse(argc, argv);
    if (a.verb == "cost") {
      std::printf("%s", cost_report(exercise, fn).c_str());
      return 0;
    }
    if (a.verb == "record") return record(exercise, fn, a);
    return check(exercise, fn, a);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "%s: %s (--help shows the usage)\n", program, e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 1;
  }
}

}  // namespace ringlab::exercises
