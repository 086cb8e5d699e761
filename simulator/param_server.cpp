#include "simulator/param_server.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <unordered_map>

#include "simulator/build_record.hpp"
#include "simulator/fiber_world.hpp"
#include "simulator/recording_transport.hpp"
#include "transport/inproc.hpp"

namespace ringlab::sim {

namespace {

// Message phases, in the low byte of the tag (iteration above it).
enum Phase : Tag { PushHeader = 0, PushKeys = 1, PushValues = 2, PullHeader = 3, PullKeys = 4, PullValues = 5 };
Tag ps_tag(int iteration, Phase phase) { return (static_cast<Tag>(iteration) << 8) | phase; }

std::uint64_t splitmix(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// `how_many` distinct keys of 0..K-1, sorted (partial Fisher-Yates). The
// list of all K keys is virtual: `moved` holds the positions a swap changed
// (position i holds key i otherwise), so a draw costs its own size, not K,
// and draws the keys the whole list would.
std::vector<std::size_t> pick_keys(std::size_t K, std::size_t how_many, std::uint64_t& state) {
  std::unordered_map<std::size_t, std::size_t> moved;
  const auto at = [&](std::size_t i) {
    const auto found = moved.find(i);
    return found == moved.end() ? i : found->second;
  };
  how_many = std::min(how_many, K);
  std::vector<std::size_t> drawn(how_many);
  for (std::size_t i = 0; i < how_many; ++i) {
    const std::size_t j = i + splitmix(state) % (K - i);
    drawn[i] = at(j);
    moved[j] = at(i);
  }
  std::sort(drawn.begin(), drawn.end());
  return drawn;
}

// Within kMaxPsKeysMoved and kMaxPsMessages (ranks, iterations and keys
// are checked first, so no product overflows).
void check_traffic(const PsScenario& s) {
  const std::string shape = std::to_string(s.iterations) + " iteration(s) x " +
                            std::to_string(s.workers) + " worker(s) x ";
  const auto iterations = static_cast<std::uint64_t>(s.iterations);
  const auto workers = static_cast<std::uint64_t>(s.workers);
  const std::uint64_t push = std::min(s.push_per_worker, s.keys);
  const std::uint64_t pull = std::min(s.pull_per_worker, s.keys);
  const std::uint64_t moved = iterations * workers * (push + pull);
  if (moved > kMaxPsKeysMoved)
    throw std::invalid_argument(
        "parameter server: " + shape + "(" + std::to_string(push) + " pushed + " +
        std::to_string(pull) + " pulled) = " + std::to_string(moved) +
        " keys moved, more than the simulator takes: at most " + std::to_string(kMaxPsKeysMoved) +
        " (kMaxPsKeysMoved): lower --iterations, --workers, --push or --pull");
  const std::uint64_t messages = iterations * workers * static_cast<std::uint64_t>(s.servers) * 6;
  if (messages > kMaxPsMessages)
    throw std::invalid_argument(
        "parameter server: " + shape + std::to_string(s.servers) + " server(s) send up to " +
        std::to_string(messages) +
        " messages (6 per iteration, worker and server), more than the simulator takes: at most " +
        std::to_string(kMaxPsMessages) + " (kMaxPsMessages): lower --iterations, --workers or "
        "--servers");
}

void validate(const PsScenario& s) {
  if (s.servers < 1 || s.workers < 1 || s.servers + s.workers > 1024)
    throw std::invalid_argument("parameter server: need at least 1 server and 1 worker, at most "
                                "1024 ranks in all (got " + std::to_string(s.servers) +
                                " servers, " + std::to_string(s.workers) + " workers)");
  if (s.keys < 1) throw std::invalid_argument("parameter server: keys must be at least 1");
  if (s.keys > kMaxPsKeys)
    throw std::invalid_argument("parameter server: --keys " + std::to_string(s.keys) +
                                " is more than the simulator takes: at most " +
                                std::to_string(kMaxPsKeys) +
                                " keys (kMaxPsKeys), whose values the recorded run keeps");
  if (!is_floating(s.dtype))
    throw std::invalid_argument("parameter server: parameters are floating (float16, bfloat16, "
                                "float32 or float64), not " +
                                std::string(dtype_name(s.dtype)));
  if (s.iterations < 1 || s.iterations > 1 << 20)
    throw std::invalid_argument("parameter server: iterations must be 1 .. 2^20");
  check_traffic(s);
}

// A buffer in transport memory, named for the recorder (a no-op elsewhere).
struct Named {
  Buffer buffer;
  std::size_t count = 0;
  DType dtype = DType::Float32;
  std::byte* at(std::size_t i) const { return buffer.storage.get() + i * element_size(dtype); }
  MutBytes bytes(std::size_t first, std::size_t n) const { return {at(first), n * element_size(dtype)}; }
  MutBytes all() const { return bytes(0, count); }
};
Named named(Transport& t, std::size_t count, DType dtype, const std::string& name, bool is_input) {
  Named n{t.allocate(count * element_size(dtype)), count, dtype};
  name_buffer(t, n.all(), name, dtype, is_input);
  return n;
}
template <typename T> void fill(const Named& n, const std::vector<T>& values) {
  std::memcpy(n.buffer.storage.get(), values.data(), values.size() * sizeof(T));
}
template <typename T> void store(const Named& n, std::size_t i, double v) {
  T x = static_cast<T>(v);
  std::memcpy(n.at(i), &x, sizeof x);
}

// Runs of consecutive keys: (index of the first in `keys`, length).
std::vector<std::pair<std::size_t, std::size_t>> consecutive_runs(const std::int64_t* keys, std::size_t n) {
  std::vector<std::pair<std::size_t, std::size_t>> runs;
  for (std::size_t i = 0; i < n; ++i) {
    if (!runs.empty() && keys[i] == keys[i - 1] + 1) ++runs.back().second;
    else runs.push_back({i, 1});
  }
  return runs;
}

void run_server(Transport& t, const PsScenario& s, const PsPlan& plan) {
  const int server = t.rank();
  const Chunk range = plan.key_ranges[static_cast<std::size_t>(server)];
  const DType dt = s.dtype;
  Named params = named(t, range.count, dt, "params", true);
  for (std::size_t k = 0; k < range.count; ++k)
    visit_dtype(dt, [&]<typename T>() { store<T>(params, k, plan.initial_params[range.offset + k]); });
  name_buffer(t, params.all(), "params", dt, true);  // again: the recorder keeps the filled values
  // Buffers and errors name workers by role ("worker 0"), not by rank.
  auto worker_name = [&](int rank) { return "worker " + std::to_string(rank - s.servers); };
  auto header_of = [&](int worker, Tag tag) {
    Named header = named(t, 1, DType::Int64, "header from " + worker_name(worker), false);
    t.recv(worker, tag, header.all());
    std::int64_t n = 0;
    std::memcpy(&n, header.at(0), sizeof n);
    if (n < 0 || static_cast<std::size_t>(n) > range.count)
      throw CommError("server " + std::to_string(server) + ": " + worker_name(worker) + " (rank " +
                      std::to_string(worker) + ") announced " + std::to_string(n) +
                      " keys, but this server owns only " + std::to_string(range.count));
    return static_cast<std::size_t>(n);
  };
  for (int it = 0; it < s.iterations; ++it) {
    for (int w = 0; w < s.workers; ++w) {  // push: apply each worker's update
      const int worker = s.servers + w;
      const std::size_t n = header_of(worker, ps_tag(it, PushHeader));
      if (n == 0) continue;
      Named keys = named(t, n, DType::Int64, "keys from " + worker_name(worker), false);
      Named update = named(t, n, dt, "update from " + worker_name(worker), false);
      t.recv(worker, ps_tag(it, PushKeys), keys.all());
      t.recv(worker, ps_tag(it, PushValues), update.all());
      const auto* k = reinterpret_cast<const std::int64_t*>(keys.at(0));
      for (auto [first, len] : consecutive_runs(k, n))
        t.reduce(dt, ReduceOp::SUM, params.bytes(static_cast<std::size_t>(k[first]), len),
                 update.bytes(first, len));
    }
    for (int w = 0; w < s.workers; ++w) {  // pull: answer with the asked values
      const int worker = s.servers + w;
      const std::size_t n = header_of(worker, ps_tag(it, PullHeader));
      if (n == 0) continue;
      Named keys = named(t, n, DType::Int64, "pull keys from " + worker_name(worker), false);
      t.recv(worker, ps_tag(it, PullKeys), keys.all());
      Named reply = named(t, n, dt, "reply to " + worker_name(worker), false);
      const auto* k = reinterpret_cast<const std::int64_t*>(keys.at(0));
      for (auto [first, len] : consecutive_runs(k, n))
        t.copy(reply.bytes(first, len), params.bytes(static_cast<std::size_t>(k[first]), len));
      t.send(worker, ps_tag(it, PullValues), reply.all());
    }
  }
}

void run_worker(Transport& t, const PsScenario& s, const PsPlan& plan) {
  const int w = t.rank() - s.servers;
  const auto uw = static_cast<std::size_t>(w);
  const DType dt = s.dtype;
  const auto iterations = static_cast<std::size_t>(s.iterations);
  // update: every iteration's -lr * gradient, one after the other; pulled:
  // every iteration's pull set values.
  std::size_t pushed = 0, pulled_total = 0;
  for (std::size_t it = 0; it < iterations; ++it) {
    pushed += plan.push_keys[it][uw].size();
    pulled_total += plan.pull_keys[it][uw].size();
  }
  Named update = named(t, pushed, dt, "update", false);
  {
    std::size_t i = 0;
    for (std::size_t it = 0; it < iterations; ++it)
      for (double g : plan.gradients[it][uw])
        visit_dtype(dt, [&]<typename T>() { store<T>(update, i++, -s.learning_rate * g); });
  }
  name_buffer(t, update.all(), "update", dt, true);  // its values are this worker's input
  Named pulled = named(t, pulled_total, dt, "pulled", false);

  // Keys of `keys` in server s's range, local to it.
  auto local_keys = [&](const std::vector<std::size_t>& keys, const Chunk& range) {
    std::vector<std::int64_t> local;
    for (std::size_t k : keys)
      if (k >= range.offset && k < range.end()) local.push_back(static_cast<std::int64_t>(k - range.offset));
    return local;
  };
  auto send_keys = [&](int server, int it, Phase header_phase, Phase keys_phase,
                       const std::vector<std::int64_t>& local, const char* what) {
    Named header = named(t, 1, DType::Int64,
                         std::string(what) + " header to server " + std::to_string(server), false);
    fill(header, std::vector<std::int64_t>{static_cast<std::int64_t>(local.size())});
    name_buffer(t, header.all(), std::string(what) + " header to server " + std::to_string(server),
                DType::Int64, true);
    t.send(server, ps_tag(it, header_phase), header.all());
    if (local.empty()) return;
    Named keys = named(t, local.size(), DType::Int64,
                       std::string(what) + " keys to server " + std::to_string(server), false);
    fill(keys, local);
    name_buffer(t, keys.all(), std::string(what) + " keys to server " + std::to_string(server),
                DType::Int64, true);
    t.send(server, ps_tag(it, keys_phase), keys.all());
  };

  std::size_t update_at = 0, pulled_at = 0;
  for (int it = 0; it < s.iterations; ++it) {
    const auto uit = static_cast<std::size_t>(it);
    for (int server = 0; server < s.servers; ++server) {
      const auto local = local_keys(plan.push_keys[uit][uw], plan.key_ranges[static_cast<std::size_t>(server)]);
      send_keys(server, it, PushHeader, PushKeys, local, "push");
      if (local.empty()) continue;
      t.send(server, ps_tag(it, PushValues), update.bytes(update_at, local.size()));
      update_at += local.size();
    }
    for (int server = 0; server < s.servers; ++server) {
      const auto local = local_keys(plan.pull_keys[uit][uw], plan.key_ranges[static_cast<std::size_t>(server)]);
      send_keys(server, it, PullHeader, PullKeys, local, "pull");
      if (local.empty()) continue;
      t.recv(server, ps_tag(it, PullValues), pulled.bytes(pulled_at, local.size()));
      pulled_at += local.size();
    }
  }
}

}  // namespace

PsPlan plan_parameter_server(const PsScenario& s) {
  validate(s);
  PsPlan plan;
  plan.key_ranges = split_even(s.keys, s.servers);
  for (std::size_t k = 0; k < s.keys; ++k) plan.initial_params.push_back(100.0 + static_cast<double>(k));
  std::uint64_t state = s.seed;
  const auto W = static_cast<std::size_t>(s.workers);
  for (int it = 0; it < s.iterations; ++it) {
    plan.push_keys.emplace_back(W);
    plan.pull_keys.emplace_back(W);
    plan.gradients.emplace_back(W);
    for (std::size_t w = 0; w < W; ++w) {
      plan.push_keys.back()[w] = pick_keys(s.keys, s.push_per_worker, state);
      plan.pull_keys.back()[w] = pick_keys(s.keys, s.pull_per_worker, state);
      // Small integers: every update is exact in float32.
      for (std::size_t j = 0; j < plan.push_keys.back()[w].size(); ++j)
        plan.gradients.back()[w].push_back(static_cast<double>(1 + w + (j % 3)));
    }
  }
  return plan;
}

void run_parameter_server(Transport& transport, const PsScenario& scenario, const PsPlan& plan) {
  if (transport.size() != scenario.servers + scenario.workers)
    throw std::invalid_argument("parameter server: the world has " + std::to_string(transport.size()) +
                                " ranks but the scenario needs " + std::to_string(scenario.servers) +
                                " servers + " + std::to_string(scenario.workers) + " workers");
  if (transport.memory() != MemoryKind::Host)
    throw std::invalid_argument("parameter server: servers read the pushed keys, so it needs a "
                                "transport with host memory");
  if (transport.rank() < scenario.servers) run_server(transport, scenario, plan);
  else run_worker(transport, scenario, plan);
}

Run simulate_parameter_server(const PsScenario& scenario) {
  const PsPlan plan = plan_parameter_server(scenario);
  const int P = scenario.servers + scenario.workers;
  RecordOptions options;
  options.values = true;
  options.scratch_dtype = scenario.dtype;
  std::vector<RankLog> logs(static_cast<std::size_t>(P));
  auto body = [&](Transport& inner) {
    RecordingTransport recording(inner, options);
    run_parameter_server(recording, scenario, plan);
    logs[static_cast<std::size_t>(inner.rank())] = recording.take_log();
  };
  if (scenario.execution == RankExecution::Fibers) {
    FiberWorld world(P, true);
    world.run(body);
  } else {
    run_world(P, body);
  }
  RunInfo info;
  info.operation = "parameter_server";
  info.algorithm = "sparse push/pull";
  for (int r = 0; r < P; ++r)
    info.roles.push_back(r < scenario.servers ? "server " + std::to_string(r)
                                              : "worker " + std::to_string(r - scenario.servers));
  info.dtype = scenario.dtype;
  info.op = ReduceOp::SUM;
  info.count = scenario.keys;
  info.values_recorded = true;
  return build_run(std::move(logs), std::move(info));
}

PsTraffic parameter_server_traffic(const Run& run, const PsScenario& scenario) {
  PsTraffic t;
  for (const Message& m : run.messages) {
    switch (static_cast<Phase>(m.tag & 0xFF)) {
      case PushHeader:
      case PullHeader: t.header_bytes += m.bytes; break;
      case PushKeys:
      case PullKeys: t.key_bytes += m.bytes; break;
      case PushValues: t.push_bytes += m.bytes; break;
      case PullValues: t.pull_bytes += m.bytes; break;
    }
    t.total_bytes += m.bytes;
  }
  // The dense alternative: every worker all-reduces the whole vector (ring).
  Scenario dense;
  dense.collective = Collective::AllReduce;
  dense.algorithm = "ring";
  dense.ranks = scenario.workers;
  dense.count = scenario.keys;
  dense.dtype = scenario.dtype;
  dense.values = ValueMode::Off;
  t.dense_all_reduce_bytes = static_cast<std::size_t>(scenario.iterations) * simulate(dense).total_bytes();
  return t;
}

}  // namespace ringlab::sim
