// simulate(): the scenario's buffers on every virtual rank, the algorithm from
// primitives/ called exactly as the process group calls it, over a
// RecordingTransport, and the logs turned into a Run.
#include <mutex>
#include <stdexcept>

#include "simulator/build_record.hpp"
#include "simulator/fiber_world.hpp"
#include "simulator/record.hpp"
#include "simulator/recording_transport.hpp"
#include "transport/inproc.hpp"

namespace ringlab::sim {

namespace {

constexpr int kMaxRanks = 1024;

// Elements per rank over all its user buffers (for the value budget).
std::size_t user_elements(const Scenario& s) {
  const auto P = static_cast<std::size_t>(s.ranks);
  const std::size_t n = s.count;
  switch (s.collective) {
    case Collective::Broadcast:
    case Collective::Reduce:
    case Collective::AllReduce: return n;
    case Collective::Scatter:
    case Collective::Gather: return n + P * n;  // the root's list; a bound
    case Collective::AllGather:
    case Collective::ReduceScatter: return P * n;
    case Collective::AllToAll: return 2 * P * n;
    case Collective::Barrier: return 0;
  }
  return 0;
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

// One rank's part: its buffers, filled and named, and the algorithm call.
class RankProgram {
 public:
  RankProgram(const Scenario& s, Transport& inner, RecordingTransport& recording, bool real)
      : s_(s), inner_(inner), rec_(recording), real_(real), rank_(inner.rank()) {}

  void run() {
    const auto P = static_cast<std::size_t>(s_.ranks);
    const std::size_t n = s_.count;
    const int r = rank_;
    const int root = s_.root;
    const ReduceOp op = wire_op(s_.op);
    auto own = [r](std::size_t i) { return std::pair{r, i}; };
    auto nothing = [](std::size_t) { return std::pair{-1, std::size_t{0}}; };
    Comm comm(rec_, 0);
    switch (s_.collective) {
      case Collective::Broadcast: {
        Elems buf = make(n, "buf", 0, n, own);
        find_algorithm(broadcast_algorithms(), s_.collective, s_.algorithm).run(comm, buf, root);
        break;
      }
      case Collective::Scatter: {
        Elems send{};
        if (r == root)
          send = make(P * n, "send", 0, P * n,
                      [n](std::size_t i) { return std::pair{static_cast<int>(i / n), i % n}; });
        Elems out = make(n, "out", 0, 0, nothing);
        find_algorithm(scatter_algorithms(), s_.collective, s_.algorithm).run(comm, send, out, root);
        break;
      }
      case Collective::Gather: {
        Elems in = make(n, "in", 0, n, own);
        Elems recv{};
        if (r == root) recv = make(P * n, "recv", 0, 0, nothing);
        find_algorithm(gather_algorithms(), s_.collective, s_.algorithm).run(comm, in, recv, root);
        break;
      }
      case Collective::Reduce: {
        Elems buf = make(n, "buf", 0, n, own);
        find_algorithm(reduce_algorithms(), s_.collective, s_.algorithm).run(comm, buf, op, root);
        if (s_.op == ReduceOp::AVG && r == root) rec_.divide(buf.dtype, buf.bytes(), s_.ranks);
        break;
      }
      case Collective::AllReduce: {
        Elems buf = make(n, "buf", 0, n, own);
        find_algorithm(all_reduce_algorithms(), s_.collective, s_.algorithm).run(comm, buf, op);
        if (s_.op == ReduceOp::AVG) rec_.divide(buf.dtype, buf.bytes(), s_.ranks);
        break;
      }
      case Collective::AllGather: {
        const std::size_t mine = static_cast<std::size_t>(r) * n;
        Elems buf = make(P * n, "buf", mine, n, [r, mine, n](std::size_t i) {
          return i >= mine && i < mine + n ? std::pair{r, i - mine} : std::pair{-1, std::size_t{0}};
        });
        const auto blocks = equal_blocks(n, s_.ranks);
        find_algorithm(all_gather_algorithms(), s_.collective, s_.algorithm).run(comm, buf, blocks);
        break;
      }
      case Collective::ReduceScatter: {
        Elems buf = make(P * n, "buf", 0, P * n, own);
        const auto blocks = equal_blocks(n, s_.ranks);
        find_algorithm(reduce_scatter_algorithms(), s_.collective, s_.algorithm)
            .run(comm, buf, blocks, op);
        if (s_.op == ReduceOp::AVG)
          rec_.divide(buf.dtype, buf.slice(static_cast<std::size_t>(r) * n, n).bytes(), s_.ranks);
        break;
      }
      case Collective::AllToAll: {
        Elems send = make(P * n, "send", 0, P * n, own);
        Elems recv = make(P * n, "recv", 0, 0, nothing);
        const auto blocks = equal_blocks(n, s_.ranks);
        find_algorithm(all_to_all_algorithms(), s_.collective, s_.algorithm)
            .run(comm, send, blocks, recv, blocks);
        break;
      }
      case Collective::Barrier:
        find_algorithm(barrier_algorithms(), s_.collective, s_.algorithm).run(comm);
        break;
    }
  }

 private:
  // A user buffer of `count` elements; element i holds input(who(i)) (or 0
  // when who(i).first < 0); elements [input_offset, +input_count) are this
  // rank's input for provenance.
  template <typename Who>
  Elems make(std::size_t count, const char* name, std::size_t input_offset, std::size_t input_count,
             Who who) {
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
    rec_.name_buffer(buffer.span(), name, s_.dtype, input_offset, input_count);
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
