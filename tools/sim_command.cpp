// `ringlab sim OP --algo A --ranks P --bytes N [--topology T --alpha US
//  --bandwidth GBPS --gamma NSPB] [--compare] [--bench] [--trace FILE]`
// `ringlab sim parameter_server --servers S --workers W --keys K ...` and
// `ringlab sim ddp --params N --bucket-mb B ...` (tools/sim_ddp_command.cpp).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include "bench/bench.hpp"
#include "primitives/collectives.hpp"
#include "simulator/cost.hpp"
#include "simulator/param_server.hpp"
#include "simulator/record.hpp"
#include "simulator/trace.hpp"
#include "tools/commands.hpp"
#include "tools/sim_ddp.hpp"

namespace ringlab::cli {

namespace {

using namespace ringlab::sim;

struct SimCommand {
  std::string op = "all_reduce";
  std::string algorithm;
  int ranks = 4;
  std::string bytes;     // nccl-tests size; "" = --count
  std::size_t count = 4;
  std::string dtype = "float32";
  std::string redop = "sum";
  int root = 0;
  std::string topology = "fully_connected";
  double alpha_us = 5;
  double bandwidth_GBps = 12.5;
  double gamma_ns = 0;
  int ranks_per_switch = 8;
  double uplink_GBps = 0;
  bool compare = false;
  std::string sizes = "1K:256M";
  bool bench = false;
  std::string trace;
  std::size_t trace_limit = 200000;
  std::string engine = "fibers";
  int steps = -1;  // -1: auto; 0: no; 1: yes
  PsScenario ps;
  DdpSimOptions ddp;
};

CostModel model_of(const SimCommand& c) {
  CostModel m;
  m.alpha_s = c.alpha_us * 1e-6;
  m.bandwidth_Bps = c.bandwidth_GBps * 1e9;
  m.gamma_s_per_byte = c.gamma_ns * 1e-9;
  m.topology = parse_topology(c.topology);
  m.ranks_per_switch = c.ranks_per_switch;
  m.uplink_bandwidth_Bps = c.uplink_GBps * 1e9;
  return m;
}

// Elements per rank from an nccl-tests size (list ops: the whole buffer).
std::size_t count_for(Collective c, std::size_t bytes, DType dtype, int ranks) {
  return bytes / element_size(dtype) / collective_info(c).size_blocks(ranks);
}

std::string human_bytes(double b) {
  const char* units[] = {"B", "K", "M", "G", "T"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, b == static_cast<long long>(b) ? "%.0f%s" : "%.1f%s", b, units[u]);
  return buf;
}

std::string where(const Run& run, const Location& l) {
  if (l.region < 0) return "(unnamed memory)";
  const Region& r = run.regions[static_cast<std::size_t>(l.region)];
  return r.name + "[" + std::to_string(l.offset) + ":" + std::to_string(l.offset + l.count) + "]";
}

std::string provenance_line(const Run& run, const Replay& replay, int region) {
  std::string out;
  for (const ProvRun& p : replay.provenance(region)) {
    if (!out.empty()) out += " | ";
    out += "[" + std::to_string(p.offset) + ":" + std::to_string(p.offset + p.count) + "] " +
           run.set(p.set).to_string();
  }
  return out;
}

// only: the region names to show (empty: every user buffer).
void print_buffers(const Run& run, const Replay& replay, const std::vector<std::string>& only = {}) {
  for (int r = 0; r < run.ranks; ++r) {
    std::vector<int> shown;
    for (int id : run.regions_of(r)) {
      const Region& region = run.regions[static_cast<std::size_t>(id)];
      const bool wanted = only.empty() || std::find(only.begin(), only.end(), region.name) != only.end();
      if (region.kind == RegionKind::User && region.count > 0 && wanted) shown.push_back(id);
    }
    for (int id : shown) {
      const Region& region = run.regions[static_cast<std::size_t>(id)];
      const std::string what = shown.size() == 1 ? "data" : region.name;
      std::printf("%s has %s %s\n", run.roles[static_cast<std::size_t>(r)] == "rank " + std::to_string(r)
                                        ? ("Rank " + std::to_string(r)).c_str()
                                        : run.roles[static_cast<std::size_t>(r)].c_str(),
                  what.c_str(), replay.tensor(id).to_string().c_str());
      std::printf("        inputs in it: %s\n", provenance_line(run, replay, id).c_str());
    }
  }
}

void print_steps(const Run& run) {
  Replay replay(run);
  replay.seek(0);
  std::printf("before the first message (step 0):\n");
  print_buffers(run, replay);
  for (Step k = 1; k <= run.steps; ++k) {
    std::printf("\nstep %u:\n", k);
    for (const Message& m : run.messages_in(k)) {
      std::string carries = m.payload.count ? run.set(run.runs(m.payload)[0].set).to_string() : "-";
      if (m.payload.count > 1) carries += ", ...";
      std::printf("  rank %d -> rank %d: %s -> %s (%zu bytes, inputs %s)", m.src, m.dst,
                  where(run, m.from).c_str(), where(run, m.to).c_str(), m.bytes, carries.c_str());
      if (m.reduced)
        std::printf(", then %s into %s", std::string(op_name(m.reduce_op)).c_str(),
                    where(run, run.writes[static_cast<std::size_t>(m.reduced_by_write)].dst).c_str());
      std::printf("\n");
    }
    replay.seek(k);
    std::printf("after step %u:\n", k);
    print_buffers(run, replay);
  }
}

void print_prediction(const Run& run, const Prediction& p, const CostModel& m) {
  std::printf("\nprediction: topology %s, alpha %.3g us, bandwidth %.3g GB/s, gamma %.3g ns/B\n",
              std::string(topology_name(m.topology)).c_str(), m.alpha_s * 1e6, m.bandwidth_Bps / 1e9,
              m.gamma_s_per_byte * 1e9);
  if (run.steps <= 32) {
    std::printf("  %5s %12s %6s %12s  %s\n", "step", "time (us)", "msgs", "bytes", "bottleneck");
    for (const StepCost& s : p.steps)
      if (s.messages > 0 || s.seconds > 0)
        std::printf("  %5u %12.3f %6zu %12zu  %s\n", s.step, s.seconds * 1e6, s.messages, s.bytes,
                    s.bottleneck.c_str());
  }
  std::size_t most_sent = 0, messages = 0;
  for (std::size_t r = 0; r < run.bytes_sent.size(); ++r) {
    most_sent = std::max(most_sent, run.bytes_sent[r]);
    messages += run.messages_sent[r];
  }
  std::printf("  %u steps, %zu messages, at most %zu bytes sent by one rank\n", run.steps, messages,
              most_sent);
  std::printf("  total %.3f us; size %zu B; algbw %.3f GB/s; busbw %.3f GB/s\n", p.total_s * 1e6,
              p.size_bytes, p.algbw_GBps, p.busbw_GBps);
}

Scenario scenario_of(const SimCommand& c, Collective collective, std::size_t count) {
  Scenario s;
  s.collective = collective;
  s.algorithm = c.algorithm;
  s.ranks = c.ranks;
  s.count = count;
  s.dtype = parse_dtype(c.dtype);
  s.op = parse_op(c.redop);
  s.root = c.root;
  s.engine = c.engine == "threads" ? Engine::Threads : Engine::Fibers;
  return s;
}

void run_compare(const SimCommand& c, Collective collective, const CostModel& model) {
  const auto [min_bytes, max_bytes] = bench::parse_size_range(c.sizes);
  const auto names = algorithm_names(collective);
  const DType dtype = parse_dtype(c.dtype);
  std::printf("# ringlab sim --compare: %s on %d ranks, %s, topology %s, alpha %.3g us, "
              "bandwidth %.3g GB/s, gamma %.3g ns/B\n",
              std::string(collective_name(collective)).c_str(), c.ranks,
              std::string(dtype_name(dtype)).c_str(), c.topology.c_str(), c.alpha_us,
              c.bandwidth_GBps, c.gamma_ns);
  std::printf("# predicted time in us; * = fastest\n%10s", "size");
  for (const auto& n : names) std::printf(" %20s", n.c_str());
  std::printf("\n");
  std::string previous_best;
  std::vector<std::string> crossovers;
  for (std::size_t bytes = std::max<std::size_t>(min_bytes, element_size(dtype)); bytes <= max_bytes;
       bytes *= 4) {
    std::vector<double> times;
    for (const auto& n : names) {
      Scenario s = scenario_of(c, collective, count_for(collective, bytes, dtype, c.ranks));
      s.algorithm = n;
      s.values = ValueMode::Off;
      times.push_back(predict(simulate(s), model).total_s * 1e6);
    }
    const auto best = static_cast<std::size_t>(std::min_element(times.begin(), times.end()) - times.begin());
    std::printf("%10s", human_bytes(static_cast<double>(bytes)).c_str());
    for (std::size_t i = 0; i < times.size(); ++i)
      std::printf(" %19.2f%s", times[i], i == best ? "*" : " ");
    std::printf("\n");
    if (!previous_best.empty() && previous_best != names[best])
      crossovers.push_back("from " + human_bytes(static_cast<double>(bytes)) + ": " + names[best] +
                           " beats " + previous_best);
    previous_best = names[best];
  }
  if (crossovers.empty()) std::printf("# no crossover: %s is fastest at every size\n", previous_best.c_str());
  for (const auto& line : crossovers) std::printf("# crossover %s\n", line.c_str());
  std::printf("# small messages are latency-bound (alpha x steps), large ones bandwidth-bound "
              "(bytes x beta on the busiest port or link)\n");
}

long peak_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

void write_trace_file(const SimCommand& c, const Run& run, const Prediction& p, const CostModel& m) {
  if (c.trace.empty()) return;
  std::ofstream out(c.trace);
  if (!out) throw std::runtime_error("cannot write the trace to '" + c.trace + "'");
  TraceOptions options;
  options.max_events = c.trace_limit;
  write_trace(run, p, m, out, options);
  std::printf("\ntrace written to %s (open it in https://ui.perfetto.dev or chrome://tracing)\n",
              c.trace.c_str());
}

void run_parameter_server_command(SimCommand& c) {
  const CostModel model = model_of(c);
  c.ps.dtype = parse_dtype(c.dtype);
  const auto start = std::chrono::steady_clock::now();
  const Run run = simulate_parameter_server(c.ps);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const PsPlan plan = plan_parameter_server(c.ps);
  std::printf("# ringlab sim parameter_server: %d servers, %d workers, %zu keys, each worker pushes "
              "%zu and pulls %zu keys per iteration, %d iteration(s), lr %g\n",
              c.ps.servers, c.ps.workers, c.ps.keys, c.ps.push_per_worker, c.ps.pull_per_worker,
              c.ps.iterations, c.ps.learning_rate);
  for (int s = 0; s < c.ps.servers; ++s) {
    const Chunk range = plan.key_ranges[static_cast<std::size_t>(s)];
    std::printf("server %d owns keys %zu..%zu\n", s, range.offset, range.end() - 1);
  }
  for (int it = 0; it < c.ps.iterations; ++it)
    for (int w = 0; w < c.ps.workers; ++w) {
      std::printf("iteration %d worker %d pushes keys", it, w);
      for (auto k : plan.push_keys[static_cast<std::size_t>(it)][static_cast<std::size_t>(w)]) std::printf(" %zu", k);
      std::printf("; pulls");
      for (auto k : plan.pull_keys[static_cast<std::size_t>(it)][static_cast<std::size_t>(w)]) std::printf(" %zu", k);
      std::printf("\n");
    }
  const bool show = c.steps == 1 || (c.steps == -1 && run.ranks <= 16 && c.ps.keys <= 64);
  if (show) {
    Replay replay(run);
    replay.seek(0);
    const std::vector<std::string> names{"params", "update", "pulled"};
    std::printf("\nbefore:\n");
    print_buffers(run, replay, names);
    replay.seek(run.steps);
    std::printf("\nafter step %u (the last):\n", run.steps);
    print_buffers(run, replay, names);
  }
  const PsTraffic t = parameter_server_traffic(run, c.ps);
  std::printf("\nbytes moved: %zu (updates %zu, pulled values %zu, keys %zu, headers %zu)\n",
              t.total_bytes, t.push_bytes, t.pull_bytes, t.key_bytes, t.header_bytes);
  std::printf("a dense ring all_reduce of the %zu-key vector among the %d workers moves %zu bytes "
              "(%.1fx)\n",
              c.ps.keys, c.ps.workers, t.dense_all_reduce_bytes,
              t.total_bytes ? static_cast<double>(t.dense_all_reduce_bytes) / static_cast<double>(t.total_bytes) : 0.0);
  const Prediction p = predict(run, model);
  print_prediction(run, p, model);
  write_trace_file(c, run, p, model);
  if (c.bench) std::printf("\nbench: recorded in %.3f s, peak RSS %ld MiB\n", seconds, peak_rss_kib() / 1024);
}

void run_sim_command(SimCommand& c) {
  if (c.op == "parameter_server" || c.op == "ps") return run_parameter_server_command(c);
  if (c.op == "ddp") return run_sim_ddp(c.ddp, c.ranks, c.algorithm, model_of(c), c.compare);
  const Collective collective = parse_collective(c.op);
  const CostModel model = model_of(c);
  if (c.compare) return run_compare(c, collective, model);
  const DType dtype = parse_dtype(c.dtype);
  const std::size_t count =
      c.bytes.empty() ? c.count : count_for(collective, bench::parse_size(c.bytes), dtype, c.ranks);
  Scenario s = scenario_of(c, collective, count);
  if (c.bench) s.values = ValueMode::Off;  // what the benchmark measures: the record itself

  const auto start = std::chrono::steady_clock::now();
  const Run run = simulate(s);
  const auto recorded = std::chrono::steady_clock::now();
  const Prediction p = predict(run, model);
  const auto predicted = std::chrono::steady_clock::now();

  std::printf(
      "# ringlab sim: %s, algorithm %s, %d ranks, %zu x %s per rank (%zu bytes), op %s%s\n",
      run.operation.c_str(), run.algorithm.c_str(), run.ranks, run.count,
      std::string(dtype_name(run.dtype)).c_str(), run.count * element_size(run.dtype),
      std::string(op_name(run.op)).c_str(),
      collective_info(collective).rooted ? (", root " + std::to_string(run.root)).c_str() : "");
  const bool small =
      run.ranks <= 16 && run.count * collective_info(collective).size_blocks(run.ranks) <= 64;
  const bool show = c.steps == 1 || (c.steps == -1 && small);
  if (show) {
    if (!run.values_recorded) std::printf("# %s\n", run.values_note.c_str());
    print_steps(run);
  }
  print_prediction(run, p, model);
  write_trace_file(c, run, p, model);
  if (c.bench) {
    std::size_t runs = 0;
    for (const auto& w : run.writes) runs += w.before.count + w.after.count;
    std::printf("\nbench: record %.3f s, prediction %.3f s, peak RSS %ld MiB; %zu messages, %zu writes, "
                "%zu provenance runs, %zu rank sets\n",
                std::chrono::duration<double>(recorded - start).count(),
                std::chrono::duration<double>(predicted - recorded).count(), peak_rss_kib() / 1024,
                run.messages.size(), run.writes.size(), run.prov_runs.size(), run.rank_sets.size());
  }
}

void add_sim_command(CLI::App& app) {
  auto cmd = std::make_shared<SimCommand>();
  CLI::App* sub = app.add_subcommand(
      "sim", "simulate a collective on virtual ranks: every message and buffer, a cost model");
  std::string ops;
  for (const CollectiveInfo& row : collective_table()) ops += std::string(row.name) + ", ";
  sub->add_option("op", cmd->op,
                  ops + "parameter_server, or ddp (how much all_reduce hides behind backward)");
  sub->add_option("--algo,--algorithm", cmd->algorithm, "algorithm name (default: the op's)");
  sub->add_option("--ranks,-n", cmd->ranks, "virtual ranks")->check(CLI::Range(1, 1024));
  sub->add_option("--bytes", cmd->bytes,
                  "size as nccl-tests counts it (list ops: the whole buffer), e.g. 4M");
  sub->add_option("--count", cmd->count, "elements per rank instead of --bytes (default 4)");
  sub->add_option("--dtype", cmd->dtype, "float32, float64, int32, int64");
  sub->add_option("--redop", cmd->redop, "sum, avg, prod, min, max, band, bor, bxor");
  sub->add_option("--root", cmd->root, "root of rooted ops");
  sub->add_option("--topology", cmd->topology, "fully_connected, ring or switch");
  sub->add_option("--alpha", cmd->alpha_us, "latency per message, microseconds (default 5)");
  sub->add_option("--bandwidth", cmd->bandwidth_GBps, "per link, GB/s (default 12.5)");
  sub->add_option("--gamma", cmd->gamma_ns, "time per reduced byte, ns (default 0)");
  sub->add_option("--ranks-per-switch", cmd->ranks_per_switch,
                  "switch topology: ranks under one uplink")
      ->check(whole_number(1, 1024, "a number of ranks"));
  sub->add_option("--uplink-bandwidth", cmd->uplink_GBps, "switch topology: uplink GB/s (default: --bandwidth)");
  sub->add_flag("--compare", cmd->compare, "every algorithm of the op side by side across --sizes");
  sub->add_option("--sizes", cmd->sizes, "--compare: MIN:MAX bytes, x4 apart (default 1K:256M)");
  sub->add_flag("--bench", cmd->bench, "time the recording and report peak memory");
  sub->add_option("--trace", cmd->trace, "write a Chrome trace JSON (Perfetto, chrome://tracing)");
  sub->add_option("--trace-limit", cmd->trace_limit, "events in the trace before aggregating");
  sub->add_option("--engine", cmd->engine, "fibers (default) or threads")
      ->check(CLI::IsMember({"fibers", "threads"}));
  sub->add_flag_callback("--steps", [cmd] { cmd->steps = 1; }, "print every step (default: small cases only)");
  sub->add_flag_callback("--no-steps", [cmd] { cmd->steps = 0; }, "print the prediction only");
  sub->add_option("--servers", cmd->ps.servers, "parameter_server: servers");
  sub->add_option("--workers", cmd->ps.workers, "parameter_server: workers");
  sub->add_option("--keys", cmd->ps.keys, "parameter_server: length of the parameter vector");
  sub->add_option("--push", cmd->ps.push_per_worker, "parameter_server: keys each worker pushes");
  sub->add_option("--pull", cmd->ps.pull_per_worker, "parameter_server: keys each worker pulls");
  sub->add_option("--iterations", cmd->ps.iterations, "parameter_server: push/pull rounds");
  sub->add_option("--lr", cmd->ps.learning_rate, "parameter_server: learning rate");
  sub->add_option("--seed", cmd->ps.seed, "parameter_server: which keys are picked");
  add_ddp_sim_options(*sub, cmd->ddp);
  sub->callback([cmd] { run_sim_command(*cmd); });
}

const CommandRegistrar registrar(add_sim_command);

}  // namespace

}  // namespace ringlab::cli
