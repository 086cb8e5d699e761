// `ringlab sim --calibrate` (sim_calibrate.hpp).
//
// Two worlds of the tcp backend, whose ranks this command starts itself
// (2 ranks: sendrecv, ping-pong and every all_reduce algorithm; 4 ranks:
// every all_reduce algorithm). Rank 0 of each world hands its rows back to
// this process (backends::run_ranks_collecting), which fits, saves and
// prints.
#include "tools/sim_calibrate.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "backends/backends.hpp"
#include "bench/bench.hpp"
#include "ops/tensor.hpp"
#include "primitives/algorithms.hpp"
#include "simulator/model_file.hpp"

namespace ringlab::cli {

namespace {

using sim::Measurement;

constexpr int kRepeats = 5;

// Sizes x4 apart: 4 KiB .. 64 MiB.
std::vector<std::size_t> sizes(std::size_t from, std::size_t to) {
  std::vector<std::size_t> out;
  for (std::size_t b = from; b <= to; b *= 4) out.push_back(b);
  return out;
}

// Fewer timed calls for larger sizes: every size takes a comparable time.
bench::BenchOptions options_for(const std::string& op, const std::string& algorithm,
                                std::size_t bytes) {
  bench::BenchOptions o;
  o.op = op;
  o.algorithm = algorithm;
  o.min_bytes = o.max_bytes = bytes;
  o.warmup = bytes >= (16u << 20) ? 1 : 2;
  o.iters = bytes >= (16u << 20) ? 2 : bytes >= (1u << 20) ? 5 : 20;
  return o;
}

// The median of a few runs: on a machine shared with other work one lucky
// or unlucky run should not decide a row (docs/cost-model.md).
double median(std::vector<double> runs) {
  std::sort(runs.begin(), runs.end());
  const std::size_t n = runs.size();
  return n % 2 ? runs[n / 2] : (runs[n / 2 - 1] + runs[n / 2]) / 2;
}

// Ping-pong on ranks 0 and 1: rank 0 sends b bytes, rank 1 sends them
// back; half a round trip is one message's time one way, its latency
// included (the median of kRepeats runs of `iters` round trips).
double ping_pong(ProcessGroup& pg, std::size_t bytes) {
  Tensor t(DType::Float32, {static_cast<std::int64_t>(bytes / 4)});
  const int iters = bytes >= (4u << 20) ? 3 : bytes >= (256u << 10) ? 10 : 50;
  auto round = [&] {
    if (pg.rank() == 0) {
      pg.send(t, 1);
      pg.recv(t, 1);
    } else if (pg.rank() == 1) {
      pg.recv(t, 0);
      pg.send(t, 0);
    }
  };
  round();  // warm
  std::vector<double> runs;
  for (int repeat = 0; repeat < kRepeats; ++repeat) {
    pg.barrier();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) round();
    runs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
                   iters / 2);
  }
  return median(runs);
}

// What is measured: point-to-point sizes on 2 ranks (sendrecv and ping-pong
// each), and every all_reduce algorithm at these sizes on 2 and 4 ranks.
std::vector<std::size_t> point_to_point_sizes() {
  std::vector<std::size_t> out;
  for (std::size_t b = 4u << 10; b <= (16u << 20); b *= 2) out.push_back(b);
  return out;
}
std::vector<std::size_t> all_reduce_sizes() { return sizes(4u << 10, 64u << 20); }

std::size_t measurements(bool point_to_point) {
  return (point_to_point ? 2 * point_to_point_sizes().size() : 0) +
         algorithm_names(Collective::AllReduce).size() * all_reduce_sizes().size();
}

// A line on stderr after each group of measurements: how many are done, the
// time so far and, at this world's pace so far, the time left (a larger
// world is slower per measurement). Rank 0 of each world prints it (its lines
// reach this process's stderr as they come).
struct Progress {
  using Clock = std::chrono::steady_clock;
  Clock::time_point start = Clock::now();
  std::size_t done = 0, total = 0;

  void world_starts() {
    world_start = Clock::now();
    world_done = done;
  }
  void step(const ProcessGroup& pg, const std::string& what, std::size_t count) {
    done += count;
    if (pg.rank() != 0) return;
    const auto seconds = [](Clock::duration d) { return std::chrono::duration<double>(d).count(); };
    const double pace =
        seconds(Clock::now() - world_start) / static_cast<double>(done - world_done);
    std::fprintf(stderr,
                 "# calibrate: %3zu of %zu measured (%d ranks: %s), %.0f s so far, about %.0f s "
                 "left\n",
                 done, total, pg.size(), what.c_str(), seconds(Clock::now() - start),
                 pace * static_cast<double>(total - done));
  }

 private:
  Clock::time_point world_start = start;
  std::size_t world_done = 0;
};

// One world: the rows its rank 0 measured (op algorithm ranks bytes seconds).
std::vector<Measurement> measure_world(int ranks, bool point_to_point, Progress progress) {
  ProcessGroupOptions group;
  group.check_arguments = false;  // time the collective, not the argument exchange
  const std::vector<std::string> answers = backends::run_ranks_collecting(
      "tcp", ranks,
      [&](ProcessGroup& pg) {
        std::ostringstream rows;
        auto record = [&](const std::string& op, const std::string& algorithm, std::size_t bytes) {
          std::vector<double> runs;
          std::size_t reported = bytes;
          for (int repeat = 0; repeat < kRepeats; ++repeat)
            for (const bench::Row& row : bench::run(pg, options_for(op, algorithm, bytes), false)) {
              runs.push_back(row.time_us * 1e-6);
              reported = row.bytes;
            }
          rows << op << ' ' << (algorithm.empty() ? "-" : algorithm) << ' ' << pg.size() << ' '
               << reported << ' ' << median(runs) << '\n';
        };
        // Connections and caches warm before the first timed row.
        bench::run(pg, options_for("all_reduce", "ring", 1u << 20), false);
        if (point_to_point) {
          for (std::size_t b : point_to_point_sizes()) {
            record("sendrecv", "", b);
            rows << "pingpong - 2 " << b << ' ' << ping_pong(pg, b) << '\n';
          }
          progress.step(pg, "sendrecv and ping-pong", 2 * point_to_point_sizes().size());
        }
        for (const std::string& algorithm : algorithm_names(Collective::AllReduce)) {
          for (std::size_t b : all_reduce_sizes()) record("all_reduce", algorithm, b);
          progress.step(pg, "all_reduce " + algorithm, all_reduce_sizes().size());
        }
        return pg.rank() == 0 ? rows.str() : std::string();
      },
      group);
  std::istringstream in(answers.at(0));
  std::vector<Measurement> rows;
  Measurement m;
  while (in >> m.op >> m.algorithm >> m.ranks >> m.bytes >> m.seconds) {
    if (m.algorithm == "-") m.algorithm.clear();
    rows.push_back(m);
  }
  if (rows.empty())
    throw std::runtime_error("rank 0 of the " + std::to_string(ranks) +
                             "-rank world handed back no measurements");
  return rows;
}

std::string size_text(std::size_t b) {
  if (b >= (1u << 20)) return std::to_string(b >> 20) + "M";
  return std::to_string(b >> 10) + "K";
}

// What the fit and the table notes say of this machine.
struct Machine {
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  double load = -1;  // the 1-minute load average; -1: unknown
};

Machine this_machine() {
  Machine machine;
  if (std::ifstream loadavg("/proc/loadavg"); loadavg) loadavg >> machine.load;
  return machine;
}

// Fitted on 2 ranks: sendrecv and ping-pong for alpha and beta (and the
// shape), every all_reduce algorithm from 64K for gamma (below that the
// reductions are lost in the latencies; one algorithm alone would let its
// own noise decide).
sim::CostModel fit_and_print(const std::vector<Measurement>& rows, const Machine& machine) {
  std::vector<Measurement> fitted;
  for (const Measurement& m : rows)
    if (m.op != "all_reduce" || m.bytes >= (64u << 10)) fitted.push_back(m);
  const sim::ModelFit fit = sim::fit_cost_model(fitted);
  sim::CostModel model = fit.model;
  model.cores = static_cast<int>(machine.cores);
  std::printf("\nfitted (weighted least squares, relative error; simulator/model_file.hpp):\n");
  std::printf("  alpha %.3f us, bandwidth %.3f GB/s (beta %.4f ns/B), gamma %.4f ns/B\n",
              model.alpha_s * 1e6, model.bandwidth_Bps / 1e9, model.beta() * 1e9,
              model.gamma_s_per_byte * 1e9);
  std::printf("  %s", model.full_duplex ? "full duplex"
                                        : "half duplex: a rank's sends and receives share its "
                                          "bandwidth (a sendrecv costs twice a one-way send)");
  if (model.cache_bytes > 0)
    std::printf("; buffers up to %s at %.3f GB/s (in cache)", size_text(model.cache_bytes).c_str(),
                model.cache_bandwidth_Bps / 1e9);
  std::printf("; %d cores (more ranks share them)", model.cores);
  std::printf(
      "\n  from %zu point-to-point rows (rms error %.1f%%) and %zu all_reduce rows >= 64K "
      "(rms error %.1f%%), 2 ranks\n",
      fit.sendrecv_rows, 100 * fit.sendrecv_rms, fit.all_reduce_rows, 100 * fit.all_reduce_rms);
  return model;
}

// "predicted/measured=ratio", in us with `decimals` decimals.
std::string cell(const Measurement& row, const sim::CostModel& model, int decimals,
                 bool mark = false) {
  const double predicted = sim::predicted_seconds(row, model);
  char text[64];
  std::snprintf(text, sizeof text, "%.*f/%.*f=%.2f%s", decimals, predicted * 1e6, decimals,
                row.seconds * 1e6, predicted / row.seconds, mark ? "!" : "");
  return text;
}

void print_point_to_point(const std::vector<Measurement>& rows, const sim::CostModel& model) {
  std::printf(
      "\npoint to point, 2 ranks, us (sendrecv: b bytes each way at once; ping-pong: "
      "half a round trip of b bytes)\n%10s %22s %22s\n",
      "bytes", "sendrecv", "ping-pong");
  for (const Measurement& m : rows) {
    if (m.op != "sendrecv") continue;
    auto one_way = std::find_if(rows.begin(), rows.end(), [&](const Measurement& o) {
      return o.op == "pingpong" && o.bytes == m.bytes;
    });
    std::printf("%10s %22s %22s\n", size_text(m.bytes).c_str(), cell(m, model, 1).c_str(),
                one_way == rows.end() ? "-" : cell(*one_way, model, 1).c_str());
  }
}

// Every all_reduce row beside its prediction, 2 and 4 ranks; returns how many
// cells are outside +-30% where the goal holds (2 ranks, >= 64K) and of how
// many.
std::pair<std::size_t, std::size_t> print_all_reduce(const std::vector<Measurement>& rows,
                                                     const sim::CostModel& model,
                                                     const Machine& machine) {
  std::size_t outside = 0, judged = 0;
  for (int ranks : {2, 4}) {
    std::printf("\n%d ranks%s\n%-19s", ranks,
                ranks > static_cast<int>(machine.cores) ? " (more ranks than cores: oversubscribed)"
                                                        : "",
                "algorithm");
    for (std::size_t b : sizes(4u << 10, 64u << 20)) std::printf(" %22s", size_text(b).c_str());
    std::printf("\n");
    for (const std::string& algorithm : algorithm_names(Collective::AllReduce)) {
      std::printf("%-19s", algorithm.c_str());
      for (std::size_t b : sizes(4u << 10, 64u << 20)) {
        auto it = std::find_if(rows.begin(), rows.end(), [&](const Measurement& m) {
          return m.op == "all_reduce" && m.algorithm == algorithm && m.ranks == ranks &&
                 m.bytes == b;
        });
        if (it == rows.end()) {
          std::printf(" %22s", "-");
          continue;
        }
        const bool goal = ranks == 2 && b >= (64u << 10);
        const bool off = std::abs(sim::predicted_seconds(*it, model) / it->seconds - 1) > 0.3;
        judged += goal;
        outside += goal && off;
        std::printf(" %22s", cell(*it, model, 0, goal && off).c_str());
      }
      std::printf("\n");
    }
  }
  return {outside, judged};
}

}  // namespace

void run_calibration(const CalibrateOptions& options) {
  const Machine machine = this_machine();
  std::printf(
      "# ringlab sim --calibrate: tcp backend on this machine (%u cores, load average %.2f)\n",
      machine.cores, machine.load);
  Progress progress;
  progress.total = measurements(true) + measurements(false);
  std::printf(
      "# %zu measurements, each the median of %d runs: this takes a few minutes (2 to 5 on a "
      "2-core machine, docs/cost-model.md); progress on stderr\n",
      progress.total, kRepeats);
  std::printf(
      "# measuring 2 ranks: sendrecv and ping-pong 4K..16M, every all_reduce "
      "algorithm 4K..64M ...\n");
  std::fflush(stdout);
  progress.world_starts();
  std::vector<Measurement> rows = measure_world(2, true, progress);
  progress.done = measurements(true);
  progress.world_starts();
  std::printf("# measuring 4 ranks: every all_reduce algorithm 4K..64M ...\n");
  std::fflush(stdout);
  const std::vector<Measurement> four = measure_world(4, false, progress);

  const sim::CostModel model = fit_and_print(rows, machine);
  char note[256];
  std::snprintf(note, sizeof note,
                "ringlab sim --calibrate: tcp backend, 2 ranks, %u cores, load average %.2f",
                machine.cores, machine.load);
  sim::save_cost_model(options.save, model, note);
  std::printf("  saved to %s (use it: ringlab sim all_reduce --model %s ...)\n",
              options.save.c_str(), options.save.c_str());

  print_point_to_point(rows, model);
  rows.insert(rows.end(), four.begin(), four.end());
  std::printf(
      "\npredicted (fitted model) and measured all_reduce time, us; ratio = "
      "predicted / measured\n");
  const auto [outside, judged] = print_all_reduce(rows, model, machine);
  std::printf(
      "\n# cells: predicted/measured=ratio; ! = outside +-30%% where the goal holds "
      "(2 ranks, >= 64K): %zu of %zu\n",
      outside, judged);
}

}  // namespace ringlab::cli
