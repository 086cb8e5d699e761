// simulate(): the scenario's buffers on every virtual rank, laid out as the
// collective's row says (primitives/collectives.hpp), the row's runner (the one
// the process group calls) over a RecordingTransport, and the logs turned into
// a Run.
#include <mutex>
#include <stdexcept>

#include "primitives/collectives.hpp"
#include "simulator/build_record.hpp"
#include "simulator/fiber_world.hpp"
#include "simulator/record.hpp"
#include "simulator/recording_transport.hpp"
#include "transport/inproc.hpp"

namespace ringlab::sim {

namespace {

constexpr int kMaxRanks = 1024;

// Elements per rank over all its user buffers (for the value budget): the
// root's, which has the most.
std::size_t user_elements(const Scenario& s) {
  const CollectiveInfo& c = collective_info(s.collective);
  return c.first.count(s.ranks, s.count, true) + c.second.count(s.ranks, s.count, true);
}

void validate(const Scenario& s) {
  if (s.ranks < 1 || s.ranks > kMaxRanks)
    throw std::invalid_argument("ranks = " + std::to_string(s.ranks) +
                                ": the simulator runs 1 to 1024 virtual ranks");
  if (s.root < 0 || s.root >= s.ranks)
    throw std::invalid_argument("root = " + std::to_string(s.root) + " is not a rank of 0.." +
                                std::to_string(s.ranks - 1));
  check_op(s.op, s.dtype);
}

// One rank's part: its buffers, laid out, filled and named as the
// collective's row says, and the row's runner (the one ProcessGroup calls).
class RankProgram {
 public:
  RankProgram(const Scenario& s, Transport& inner, RecordingTransport& recording, bool real)
      : s_(s), inner_(inner), rec_(recording), real_(real), rank_(inner.rank()) {}

  void run() {
    const CollectiveInfo& c = collective_info(s_.collective);
    const bool is_root = rank_ == s_.root;
    const Elems first = make(c.first, is_root);
    const Elems second = make(c.second, is_root);
    const auto blocks = equal_blocks(s_.count, s_.ranks);
    Comm comm(rec_, 0);
    c.run(comm, s_.algorithm,
          {.first = first,
           .second = second,
           .blocks = blocks,
           .second_blocks = blocks,
           .root = s_.root,
           .op = s_.op});
  }

 private:
  // The buffer `spec` describes (Elems{} where it is absent), its inputs
  // filled and named for provenance.
  Elems make(const BufferSpec& spec, bool is_root) {
    if (!spec.present(is_root)) return {};
    const std::size_t n = s_.count;
    const std::size_t count = spec.count(s_.ranks, n, is_root);
    const int r = rank_;
    switch (spec.input) {
      case Input::None:
        return make(count, spec.name, 0, 0, [](std::size_t) {
          return std::pair{-1, std::size_t{0}};
        });
      case Input::Whole:
        return make(count, spec.name, 0, count, [r](std::size_t i) { return std::pair{r, i}; });
      case Input::OwnBlock: {
        const std::size_t mine = static_cast<std::size_t>(r) * n;
        return make(count, spec.name, mine, n, [r, mine, n](std::size_t i) {
          return i >= mine && i < mine + n ? std::pair{r, i - mine} : std::pair{-1, std::size_t{0}};
        });
      }
      case Input::PerRank:
        // Block d is rank d's to receive: shown as rank d's input.
        return make(count, spec.name, 0, count, [n](std::size_t i) {
          return std::pair{static_cast<int>(i / n), i % n};
        });
    }
    throw std::logic_error("unknown Input");
  }

  // A user buffer of `count` elements; element i holds input(who(i)) (or 0
  // when who(i).first < 0); elements [input_offset, +input_count) are this
  // rank's input for provenance.
  template <typename Who>
  Elems make(std::size_t count, std::string_view name, std::size_t input_offset,
             std::size_t input_count, Who who) {
    Buffer buffer = inner_.allocate(count * element_size(s_.dtype));
    if (real_) {
      const auto& input = s_.input ? s_.input : std::function<double(int, std::size_t)>(default_input);
      visit_dtype(s_.dtype, [&]<typename T>() {
        T* data = reinterpret_cast<T*>(buffer.storage.get());
        for (std::size_t i = 0; i < count; ++i) {
          const auto [rank, index] = who(i);
          data[i] = rank < 0 ? T{} : static_cast<T>(input(rank, index));
        }
      });
    }
    rec_.name_buffer(buffer.span(), std::string(name), s_.dtype, input_offset, input_count);
    Elems elems{buffer.storage.get(), count, s_.dtype};
    buffers_.push_back(std::move(buffer));
    return elems;
  }

  const Scenario& s_;
  Transport& inner_;
  RecordingTransport& rec_;
  bool real_;
  int rank_;
  std::vector<Buffer> buffers_;
};

}  // namespace

Run simulate(const Scenario& scenario) {
  validate(scenario);
  // No name: the first of the collective's algorithm table, whose own
  // messages are what a walkthrough shows (a ProcessGroup's default may be
  // all_reduce's auto, which only hands over to one of them).
  const auto& algorithm_name = [&]() -> std::string {
    const auto names = algorithm_names(scenario.collective);
    if (scenario.algorithm.empty()) return names.front();
    algorithm_summary(scenario.collective, scenario.algorithm);  // throws listing the names
    return scenario.algorithm;
  }();
  const std::size_t user_bytes = static_cast<std::size_t>(scenario.ranks) * user_elements(scenario) *
                                 element_size(scenario.dtype);
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
  const bool real_memory = values || scenario.engine == Engine::Threads;

  RecordOptions options;
  options.values = values;
  options.scratch_dtype = scenario.dtype;
  std::vector<RankLog> logs(static_cast<std::size_t>(scenario.ranks));
  Scenario resolved = scenario;
  resolved.algorithm = algorithm_name;
  auto body = [&](Transport& inner) {
    RecordingTransport recording(inner, options);
    RankProgram(resolved, inner, recording, real_memory).run();
    logs[static_cast<std::size_t>(inner.rank())] = recording.take_log();
  };
  if (scenario.engine == Engine::Fibers) {
    FiberWorld world(scenario.ranks, real_memory);
    world.run(body);
  } else {
    run_world(scenario.ranks, body);
  }

  RunInfo info;
  info.operation = std::string(collective_name(scenario.collective));
  info.algorithm = algorithm_name;
  info.dtype = scenario.dtype;
  info.op = scenario.op;
  info.root = scenario.root;
  info.count = scenario.count;
  info.values_recorded = values;
  info.values_note = note;
  return build_run(std::move(logs), std::move(info));
}

}  // namespace ringlab::sim
