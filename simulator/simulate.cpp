// simulate(): the scenario's buffers on every virtual rank, laid out as the
// collective's row says (primitives/collectives.hpp), the row's runner (the one
// the process group calls) over a RecordingTransport, and the logs turned into
// a Run.
#include <algorithm>
#include <limits>
#include <stdexcept>

#include "primitives/collectives.hpp"
#include "simulator/build_record.hpp"
#include "simulator/fiber_world.hpp"
#include "simulator/rank_program.hpp"
#include "simulator/record.hpp"
#include "simulator/recording_transport.hpp"
#include "transport/inproc.hpp"

namespace ringlab::sim {

namespace detail {

std::size_t user_elements(const Scenario& s) {
  const CollectiveInfo& c = collective_info(s.collective);
  return c.first.count(s.ranks, s.count, true) + c.second.count(s.ranks, s.count, true);
}

std::string validate(const Scenario& s, int max_ranks, std::string_view what) {
  if (s.ranks < 1 || s.ranks > max_ranks)
    throw std::invalid_argument("ranks = " + std::to_string(s.ranks) + ": " + std::string(what) +
                                " runs 1 to " + std::to_string(max_ranks) + " virtual ranks");
  if (s.root < 0 || s.root >= s.ranks)
    throw std::invalid_argument("root = " + std::to_string(s.root) + " is not a rank of 0.." +
                                std::to_string(s.ranks - 1));
  check_op(s.op, s.dtype);
  // No name: the first of the collective's algorithm table, whose own
  // messages are what a walkthrough shows (a ProcessGroup's default may be
  // all_reduce's auto, which only hands over to one of them).
  const auto names = algorithm_names(s.collective);
  if (s.algorithm.empty()) return names.front();
  if (std::find(names.begin(), names.end(), s.algorithm) != names.end()) return s.algorithm;
  std::string valid;
  for (const auto& name : names) valid += (valid.empty() ? "" : ", ") + name;
  throw std::invalid_argument("unknown " + std::string(collective_name(s.collective)) +
                              " algorithm '" + s.algorithm + "': use one of " + valid);
}

}  // namespace detail

namespace {
constexpr int kMaxRecordedRanks = 1024;
}  // namespace

Run simulate(const Scenario& scenario) {
  const std::string algorithm_name =
      detail::validate(scenario, kMaxRecordedRanks, "the recorded simulator");
  const std::size_t user_bytes = static_cast<std::size_t>(scenario.ranks) *
                                 detail::user_elements(scenario) * element_size(scenario.dtype);
  bool values = scenario.values == ValueMode::On;
  std::string note;
  if (scenario.values == ValueMode::Auto) {
    values = user_bytes <= scenario.value_budget_bytes;
    if (!values)
      note = "values not recorded: the buffers hold " + std::to_string(user_bytes) +
             " bytes over all ranks, more than the value budget of " +
             std::to_string(scenario.value_budget_bytes) +
             " (Scenario::values = On records them anyway)";
  } else if (!values) {
    note = "values not recorded (Scenario::values = Off)";
  }
  const bool real_memory = values || scenario.execution == RankExecution::Threads;

  // A buffer's element ranges must fit the record's 32-bit offsets.
  const CollectiveInfo& row = collective_info(scenario.collective);
  for (const BufferSpec* spec : {&row.first, &row.second})
    if (spec->count(scenario.ranks, scenario.count, true) > std::numeric_limits<Elem>::max())
      throw std::invalid_argument(
          "the recorded simulator keeps element ranges in 32 bits: a buffer of " +
          std::to_string(spec->count(scenario.ranks, scenario.count, true)) +
          " elements is too big to record (a prediction takes it)");

  RunInfo info;
  info.operation = std::string(collective_name(scenario.collective));
  info.algorithm = algorithm_name;
  info.dtype = scenario.dtype;
  info.op = scenario.op;
  info.root = scenario.root;
  info.count = scenario.count;
  info.values_recorded = values;
  info.values_note = note;

  RecordOptions options;
  options.values = values;
  options.scratch_dtype = scenario.dtype;
  Scenario resolved = scenario;
  resolved.algorithm = algorithm_name;
  if (scenario.execution == RankExecution::Fibers) {
    // Built as the fibers run: no log is kept (build_record.hpp).
    LiveRecord live(scenario.ranks, std::move(info));
    FiberWorld world(scenario.ranks, real_memory);
    world.run([&](Transport& inner) {
      RecordingTransport recording(inner, options, live);
      detail::RankProgram(resolved, inner, recording, &recording, real_memory).run();
    });
    return live.finish();
  }
  std::vector<RankLog> logs(static_cast<std::size_t>(scenario.ranks));
  run_world(scenario.ranks, [&](Transport& inner) {
    RecordingTransport recording(inner, options);
    detail::RankProgram(resolved, inner, recording, &recording, real_memory).run();
    logs[static_cast<std::size_t>(inner.rank())] = recording.take_log();
  });
  return build_run(std::move(logs), std::move(info));
}

}  // namespace ringlab::sim
