// `ringlab sim OP --algo A --ranks P --bytes N [--topology T --alpha US
//  --bandwidth GBPS --gamma NSPB | --model FILE] [--compare] [--path P]
//  [--bench] [--trace FILE]`
// `ringlab sim parameter_server --servers S --workers W --keys K ...`,
// `ringlab sim ddp --params N --bucket-mb B ...` (tools/sim_ddp_command.cpp)
// and `ringlab sim --calibrate` (tools/sim_calibrate.cpp).
//
// Which path answers (simulator/forecast.hpp): the recorded run when steps
// are shown (--steps, or a small case) or a trace is written; otherwise a
// prediction: the closed form where the algorithm has one on the fully
// connected topology, else the message-level path. --path picks one.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include "bench/bench.hpp"
#include "ops/atomic_file.hpp"
#include "primitives/collectives.hpp"
#include "simulator/closed_form.hpp"
#include "simulator/cost.hpp"
#include "simulator/forecast.hpp"
#include "simulator/model_file.hpp"
#include "simulator/param_server.hpp"
#include "simulator/record.hpp"
#include "simulator/trace.hpp"
#include "tools/commands.hpp"
#include "tools/option_checks.hpp"
#include "tools/run_printer.hpp"
#include "tools/sim_calibrate.hpp"
#include "tools/sim_compare.hpp"
#include "tools/sim_values.hpp"
#include "tools/sim_ddp.hpp"

namespace ringlab::cli {

namespace {

using namespace ringlab::sim;

struct SimCommand {
  std::string op;  // required (but for --calibrate)
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
  std::string model_file;
  // Which of --alpha, --bandwidth, --gamma were given (they override --model).
  bool alpha_given = false, bandwidth_given = false, gamma_given = false;
  std::string path = "auto";
  bool show_empty = false;
  bool calibrate = false;
  CalibrateOptions calibration;
  bool compare = false;
  bool compare_values = false;
  std::string sizes = "1K:256M";
  bool bench = false;
  std::string trace;
  std::size_t trace_limit = sim::kTraceEventLimit;
  std::string engine = "fibers";
  int steps = -1;  // -1: auto; 0: no; 1: yes
  PsScenario ps;
  DdpSimOptions ddp;
};

// --model FILE's alpha, beta, gamma, or the flags' (a flag given wins).
CostModel model_of(const SimCommand& c) {
  CostModel m;
  if (!c.model_file.empty()) m = load_cost_model(c.model_file);
  if (c.model_file.empty() || c.alpha_given) m.alpha_s = c.alpha_us * 1e-6;
  if (c.model_file.empty() || c.bandwidth_given) m.bandwidth_Bps = c.bandwidth_GBps * 1e9;
  if (c.model_file.empty() || c.gamma_given) m.gamma_s_per_byte = c.gamma_ns * 1e-9;
  m.topology = parse_topology(c.topology);
  m.ranks_per_switch = c.ranks_per_switch;
  m.uplink_bandwidth_Bps = c.uplink_GBps * 1e9;
  return m;
}

// Elements per rank from an nccl-tests size (list ops: the whole buffer).
std::size_t count_for(Collective c, std::size_t bytes, DType dtype, int ranks) {
  return bytes / element_size(dtype) / collective_info(c).size_blocks(ranks);
}

// A rate readable at any size: "5.374 GB/s", "0.267 MB/s".
std::string rate(double GBps) {
  char buf[32];
  if (GBps >= 0.1 || GBps == 0)
    std::snprintf(buf, sizeof buf, "%.3f GB/s", GBps);
  else if (GBps >= 1e-4)
    std::snprintf(buf, sizeof buf, "%.3f MB/s", GBps * 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.3f KB/s", GBps * 1e6);
  return buf;
}

// What a prediction reports besides its steps' times.
struct Totals {
  Step steps = 0;
  std::uint64_t messages = 0;
  std::uint64_t most_sent = 0;  // by one rank
};

Totals totals_of(const Run& run) {
  Totals t{run.steps, run.messages.size(), 0};
  for (auto b : run.bytes_sent) t.most_sent = std::max<std::uint64_t>(t.most_sent, b);
  return t;
}

Totals totals_of(const Forecast& f) {
  Totals t{f.steps, f.messages, 0};
  for (auto b : f.bytes_sent) t.most_sent = std::max(t.most_sent, b);
  return t;
}

std::string path_line(const Forecast& f) {
  switch (f.path) {
    case PredictionPath::ClosedForm:
      return "the closed form (the algorithm's steps derived, no message simulated)";
    case PredictionPath::MessageLevel:
      return "the message-level path (the algorithm ran on data-free ranks: sizes and steps, "
             "no bytes)" +
             (f.why.empty() ? std::string() : "; " + f.why);
    case PredictionPath::Recorded:
      return "the recorded run (every message, buffer state and provenance)";
    case PredictionPath::Auto:
      break;
  }
  return "?";
}

// note: why the steps are as many as they are (segment_note), or "".
void print_prediction(const Totals& totals, const Prediction& p, const CostModel& m,
                      const std::string& note = {}) {
  std::printf("\nprediction: topology %s, alpha %.3g us, bandwidth %.3g GB/s, gamma %.3g ns/B\n",
              std::string(topology_name(m.topology)).c_str(), m.alpha_s * 1e6, m.bandwidth_Bps / 1e9,
              m.gamma_s_per_byte * 1e9);
  if (totals.steps <= 32) {
    std::printf("  %5s %12s %6s %12s  %s\n", "step", "time (us)", "msgs", "bytes", "bottleneck");
    for (const StepCost& s : p.steps)
      if (s.messages > 0 || s.seconds > 0)
        std::printf("  %5u %12.3f %6zu %12zu  %s\n", s.step, s.seconds * 1e6, s.messages, s.bytes,
                    s.bottleneck.c_str());
  }
  std::printf("  %u steps, %llu messages, at most %llu bytes sent by one rank\n", totals.steps,
              static_cast<unsigned long long>(totals.messages),
              static_cast<unsigned long long>(totals.most_sent));
  if (!note.empty()) std::printf("  why %u steps: %s\n", totals.steps, note.c_str());
  std::printf("  total %.3f us; size %zu B; algbw %s; busbw %s\n", p.total_s * 1e6, p.size_bytes,
              rate(p.algbw_GBps).c_str(), rate(p.busbw_GBps).c_str());
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
  s.execution = c.engine == "threads" ? RankExecution::Threads : RankExecution::Fibers;
  return s;
}

long peak_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

void write_trace_file(const SimCommand& c, const Run& run, const Prediction& p, const CostModel& m) {
  if (c.trace.empty()) return;
  TraceOptions options;
  options.max_events = c.trace_limit;
  write_file_atomically(c.trace, "trace file",
                        [&](std::ostream& out) { write_trace(run, p, m, out, options); });
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
  print_prediction(totals_of(run), p, model);
  write_trace_file(c, run, p, model);
  if (c.bench) std::printf("\nbench: recorded in %.3f s, peak RSS %ld MiB\n", seconds, peak_rss_kib() / 1024);
}

std::string operations_text() {
  std::string ops;
  for (const CollectiveInfo& row : collective_table()) ops += std::string(row.name) + ", ";
  return ops + "parameter_server or ddp";
}

// The recorded run, shown step by step where asked (or small), with its prediction.
void run_recorded(const SimCommand& c, const Scenario& s, const CostModel& model, bool show) {
  const auto start = std::chrono::steady_clock::now();
  const Run run = simulate(s);
  const auto recorded = std::chrono::steady_clock::now();
  const Prediction p = predict(run, model);
  const auto predicted = std::chrono::steady_clock::now();
  Forecast f;
  f.path = PredictionPath::Recorded;
  std::printf("# answered by %s\n", path_line(f).c_str());
  if (show) {
    if (!run.values_recorded) std::printf("# %s\n", run.values_note.c_str());
    StepPrinting how;
    how.show_empty = c.show_empty;
    print_steps(run, how);
  }
  print_prediction(totals_of(run), p, model, segment_note(s));
  write_trace_file(c, run, p, model);
  if (c.bench) {
    const long rss = peak_rss_kib();
    std::printf(
        "\nbench: record %.3f s, prediction %.3f s, peak RSS %ld MiB (%.0f bytes per message); "
        "%zu messages, %zu writes, %zu provenance runs, %zu rank sets\n",
        std::chrono::duration<double>(recorded - start).count(),
        std::chrono::duration<double>(predicted - recorded).count(), rss / 1024,
        run.messages.empty()
            ? 0.0
            : static_cast<double>(rss) * 1024 / static_cast<double>(run.messages.size()),
        run.messages.size(), run.writes.size(), run.prov_runs.size(), run.rank_sets.size());
  }
}

// What auto ran and how it relates to a ProcessGroup's auto (forecast.hpp).
void print_auto_choice(const Forecast& f, const CostModel& model) {
  if (f.rule.empty()) {
    if (f.runs_as != f.algorithm)
      std::printf("# %s ran %s at this size\n", f.algorithm.c_str(), f.runs_as.c_str());
    return;
  }
  std::printf(
      "# auto runs %s: the fastest predicted on the %s topology (the simulator's auto picks by "
      "prediction)\n",
      f.runs_as.c_str(), std::string(topology_name(model.topology)).c_str());
  if (f.rule == f.runs_as)
    std::printf(
        "# a ProcessGroup's auto runs %s too, by the rule measured on real hosts "
        "(all_reduce_auto_choice, primitives/all_reduce.cpp)\n",
        f.rule.c_str());
  else if (f.rule_s > 0)
    std::printf(
        "# a ProcessGroup's auto runs %s instead, by the rule measured on real hosts "
        "(all_reduce_auto_choice, primitives/all_reduce.cpp): predicted %.3f us here, %.2fx as "
        "long\n",
        f.rule.c_str(), f.rule_s * 1e6, f.rule_s / f.prediction.total_s);
  else
    std::printf(
        "# a ProcessGroup's auto runs %s instead, by the rule measured on real hosts "
        "(all_reduce_auto_choice, primitives/all_reduce.cpp)\n",
        f.rule.c_str());
  for (const std::string& line : f.unpriced) std::printf("# not priced: %s\n", line.c_str());
}

// The scenario the options describe, its size within what the simulator
// takes (an error names the option that set it).
Scenario scenario_from_options(const SimCommand& c, Collective collective) {
  const DType dtype = parse_dtype(c.dtype);
  std::size_t count = c.count;
  if (!c.bytes.empty()) {
    try {
      count = count_for(collective, bench::parse_size(c.bytes), dtype, c.ranks);
    } catch (const std::invalid_argument& error) {
      std::string what = error.what();
      if (what.starts_with("--sizes"))
        what.replace(0, 7, "--bytes");  // bench's parser says --sizes
      throw std::invalid_argument(what);
    }
  }
  Scenario s = scenario_of(c, collective, count);
  try {
    check_reported_bytes(s);
  } catch (const std::invalid_argument& error) {
    throw std::invalid_argument(
        (c.bytes.empty() ? "--count " + std::to_string(c.count) : "--bytes " + c.bytes) + ": " +
        error.what());
  }
  return s;
}

// --steps and --trace need the recorded run.
void check_recorded_options(const SimCommand& c, const Scenario& s, PredictionPath path) {
  if (c.steps != 1 && c.trace.empty()) return;
  const std::string what = c.steps == 1 ? "--steps" : "--trace";
  if (path != PredictionPath::Auto && path != PredictionPath::Recorded)
    throw std::invalid_argument(what +
                                " needs the recorded run: leave --path out or use --path recorded");
  const int limit = max_ranks(PredictionPath::Recorded);
  if (s.ranks > limit)
    throw std::invalid_argument(what + " needs the recorded run, which takes up to " +
                                std::to_string(limit) + " ranks, not " + std::to_string(s.ranks) +
                                ": leave it out for a prediction");
}

void print_scenario(const Scenario& s, const std::string& algorithm) {
  const CollectiveInfo& row = collective_info(s.collective);
  const std::string name(collective_name(s.collective));
  if (row.input == Shape::None)  // the barrier: no data, no op
    std::printf("# ringlab sim: %s, algorithm %s, %d ranks (no data)\n", name.c_str(),
                algorithm.c_str(), s.ranks);
  else
    std::printf("# ringlab sim: %s, algorithm %s, %d ranks, %zu x %s per rank (%zu bytes)%s%s\n",
                name.c_str(), algorithm.c_str(), s.ranks, s.count,
                std::string(dtype_name(s.dtype)).c_str(), s.count * element_size(s.dtype),
                row.reduces ? (", op " + std::string(op_name(s.op))).c_str() : "",
                row.rooted ? (", root " + std::to_string(s.root)).c_str() : "");
}

void run_collective(const SimCommand& c, Collective collective, const CostModel& model) {
  Scenario s = scenario_from_options(c, collective);
  const PredictionPath path = parse_path(c.path);
  if (c.compare) {
    s.algorithm.clear();
    return run_compare(s, c.sizes, path, model);
  }
  if (c.compare_values) return run_compare_values(s);
  check_recorded_options(c, s, path);
  const bool small =
      s.ranks <= 16 && s.count * collective_info(collective).size_blocks(s.ranks) <= 64;
  const bool show = c.steps == 1 || (c.steps == -1 && small);
  const bool record = path == PredictionPath::Recorded ||
                      (path == PredictionPath::Auto && (show || !c.trace.empty()));
  print_scenario(s, check_scenario(s, record ? PredictionPath::Recorded : path));
  if (record) {
    if (is_all_reduce_auto(s)) {  // record what auto picks by prediction
      const Forecast pick = forecast(s, model, PredictionPath::Auto);
      print_auto_choice(pick, model);
      s.algorithm = pick.runs_as;
    }
    if (c.bench) s.values = ValueMode::Off;  // what the benchmark measures: the record itself
    return run_recorded(c, s, model, show);
  }
  if (s.execution == RankExecution::Threads)
    throw std::invalid_argument(
        "--engine threads runs the recorded path: add --steps or --path recorded");
  const auto start = std::chrono::steady_clock::now();
  const Forecast f = forecast(s, model, path);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("# answered by %s\n", path_line(f).c_str());
  print_auto_choice(f, model);
  Scenario ran = s;
  ran.algorithm = f.runs_as;
  print_prediction(totals_of(f), f.prediction, model, segment_note(ran));
  if (c.bench)
    std::printf("\nbench: %s prediction %.3f s, peak RSS %ld MiB; %llu messages\n",
                std::string(path_name(f.path)).c_str(), seconds, peak_rss_kib() / 1024,
                static_cast<unsigned long long>(f.messages));
}

void run_sim_command(SimCommand& c) {
  if (c.calibrate) return run_calibration(c.calibration);
  if (c.op.empty())
    throw std::invalid_argument(
        "ringlab sim: name the operation to simulate, e.g. `ringlab sim "
        "all_reduce --ranks 4`; one of " +
        operations_text());
  if (c.op == "parameter_server" || c.op == "ps") return run_parameter_server_command(c);
  if (c.op == "ddp") return run_sim_ddp(c.ddp, c.ranks, c.algorithm, model_of(c), c.compare);
  run_collective(c, parse_collective(c.op), model_of(c));
}

// `sim parameter_server`'s scenario.
void add_parameter_server_options(CLI::App& sub, PsScenario& ps) {
  sub.add_option("--servers", ps.servers, "parameter_server: servers");
  sub.add_option("--workers", ps.workers, "parameter_server: workers");
  sub.add_option("--keys", ps.keys, "parameter_server: length of the parameter vector");
  sub.add_option("--push", ps.push_per_worker, "parameter_server: keys each worker pushes");
  sub.add_option("--pull", ps.pull_per_worker, "parameter_server: keys each worker pulls");
  sub.add_option("--iterations", ps.iterations, "parameter_server: push/pull rounds");
  sub.add_option("--lr", ps.learning_rate, "parameter_server: learning rate");
  sub.add_option("--seed", ps.seed, "parameter_server: which keys are picked");
}

}  // namespace

void add_sim_command(CLI::App& app) {
  auto cmd = std::make_shared<SimCommand>();
  CLI::App* sub = app.add_subcommand(
      "sim", "simulate a collective on virtual ranks: every message and buffer, a cost model");
  sub->add_option("op", cmd->op, operations_text() + " (required, but for --calibrate)");
  sub->add_option("--algo,--algorithm", cmd->algorithm,
                  "algorithm name (default: the op's first; all_reduce's auto runs the fastest "
                  "predicted for the --topology)");
  sub->add_option("--ranks,-n", cmd->ranks,
                  "virtual ranks: up to 1024 recorded (--steps, --trace), 8192 message-level, "
                  "65536 by a closed form")
      ->check(whole_number(1, kMaxPredictionRanks, "a number of virtual ranks"));
  sub->add_option("--bytes", cmd->bytes,
                  "size as nccl-tests counts it (list ops: the whole buffer), e.g. 4M");
  sub->add_option("--count", cmd->count, "elements per rank instead of --bytes (default 4)");
  sub->add_option("--dtype", cmd->dtype, "element type: " + dtype_choices());
  sub->add_option("--redop", cmd->redop, "sum, avg, prod, min, max, band, bor, bxor");
  sub->add_option("--root", cmd->root, "root of rooted ops");
  sub->add_option("--topology", cmd->topology,
                  "fully_connected (default: a private link between every pair of ranks), ring "
                  "(the ranks wired in a ring, Horovod's setting, where the ring algorithm wins) "
                  "or switch");
  // Costs are never negative (`--alpha -1` predicted 0 us), as NaN is
  // refused (issue 33).
  sub->add_option_function<double>(
         "--alpha", [cmd](double v) { cmd->alpha_us = v, cmd->alpha_given = true; },
         "latency per message, microseconds (default 5)")
      ->check(real_number(0, 1e9, "a latency in microseconds"));
  sub->add_option_function<double>(
         "--bandwidth", [cmd](double v) { cmd->bandwidth_GBps = v, cmd->bandwidth_given = true; },
         "per link, GB/s (default 12.5)")
      ->check(positive_number(1e9, "a bandwidth in GB/s"));
  sub->add_option_function<double>(
         "--gamma", [cmd](double v) { cmd->gamma_ns = v, cmd->gamma_given = true; },
         "time per reduced byte, ns (default 0)")
      ->check(real_number(0, 1e9, "a time per reduced byte in ns"));
  sub->add_option("--model", cmd->model_file,
                  "alpha, bandwidth and gamma from a file that --calibrate wrote (flags given "
                  "as well win)");
  sub->add_option("--ranks-per-switch", cmd->ranks_per_switch,
                  "switch topology: ranks under one uplink")
      ->check(whole_number(1, kMaxPredictionRanks, "a number of ranks"));
  sub->add_option("--uplink-bandwidth", cmd->uplink_GBps, "switch topology: uplink GB/s (default: --bandwidth)")
      ->check(real_number(0, 1e9, "an uplink bandwidth in GB/s"));
  sub->add_option("--path", cmd->path,
                  "how to predict: auto (default), recorded, messages (data-free ranks) or closed "
                  "(closed form)")
      ->check(CLI::IsMember({"auto", "recorded", "messages", "closed"}));
  sub->add_flag("--compare", cmd->compare,
                "every algorithm of the op side by side across --sizes, on the --topology given "
                "(e.g. --compare --topology ring)");
  sub->add_option("--sizes", cmd->sizes, "--compare: MIN:MAX bytes, x4 apart (default 1K:256M)");
  sub->add_flag("--compare-values", cmd->compare_values,
                "every algorithm of a reducing op on the same inputs: where their results differ "
                "(float16, bfloat16: each hop rounds), the element, each one's value and the exact "
                "sum")
      ->excludes("--compare");
  sub->add_flag("--bench", cmd->bench, "time the simulation and report peak memory");
  sub->add_option("--trace", cmd->trace, "write a Chrome trace JSON (Perfetto, chrome://tracing)")
      ->check(file_to_write("trace file"));
  sub->add_option("--trace-limit", cmd->trace_limit, "events in the trace before aggregating");
  sub->add_option("--engine", cmd->engine, "fibers (default) or threads")
      ->check(CLI::IsMember({"fibers", "threads"}));
  sub->add_flag_callback("--steps", [cmd] { cmd->steps = 1; }, "print every step (default: small cases only)");
  sub->add_flag_callback("--no-steps", [cmd] { cmd->steps = 0; }, "print the prediction only");
  sub->add_flag("--show-empty", cmd->show_empty,
                "with the steps, also the messages that carry 0 bytes (empty chunks)");
  sub->add_flag("--calibrate", cmd->calibrate,
                "measure this machine over TCP, fit alpha, beta and gamma, save them (--save) and "
                "compare predictions with measurements");
  sub->add_option("--save", cmd->calibration.save,
                  "--calibrate: where to write the model (default cost-model.json)")
      ->check(file_to_write("cost model file"));
  add_parameter_server_options(*sub, cmd->ps);
  add_ddp_sim_options(*sub, cmd->ddp);
  sub->callback([cmd] { run_sim_command(*cmd); });
}

}  // namespace ringlab::cli
