// `ringlab sim --calibrate` (sim_calibrate.hpp).
//
// The tcp backend starts every world's ranks as copies of this very command
// (backends/tcp.cpp), and only the copies measure: rank 0 of each world
// writes its rows to a file in a directory this process made and names in
// RINGLAB_CALIBRATION_DIR, which the copies inherit. After the two worlds
// (2 ranks: sendrecv and every all_reduce algorithm; 4 ranks: every
// all_reduce algorithm), this process reads the rows, fits, saves and
// prints.
#include "tools/sim_calibrate.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "backends/backends.hpp"
#include "bench/bench.hpp"
#include "primitives/algorithms.hpp"
#include "simulator/closed_form.hpp"
#include "simulator/model_file.hpp"

namespace ringlab::cli {

namespace {

using sim::Measurement;

constexpr const char* kDirVariable = "RINGLAB_CALIBRATION_DIR";

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
  o.warmup = bytes >= (16u << 20) ? 1 : 3;
  o.iters = bytes >= (16u << 20) ? 4 : bytes >= (1u << 20) ? 10 : 50;
  return o;
}

// One world: what its rank 0 writes, one row per line: op algorithm ranks bytes seconds.
void measure_world(int ranks, const std::string& file, bool sendrecv) {
  ProcessGroupOptions group;
  group.check_arguments = false;  // time the collective, not the argument exchange
  backends::run_ranks(
      "tcp", ranks,
      [&](ProcessGroup& pg) {
        std::ostringstream rows;
        auto record = [&](const std::string& op, const std::string& algorithm, std::size_t bytes) {
          const auto measured = bench::run(pg, options_for(op, algorithm, bytes), false);
          for (const bench::Row& row : measured)
            rows << op << ' ' << (algorithm.empty() ? "-" : algorithm) << ' ' << pg.size() << ' '
                 << row.bytes << ' ' << row.time_us * 1e-6 << '\n';
        };
        // Connections and caches warm before the first timed row.
        bench::run(pg, options_for("all_reduce", "ring", 1u << 20), false);
        if (sendrecv)
          for (std::size_t b : sizes(4u << 10, 16u << 20)) record("sendrecv", "", b);
        for (const std::string& algorithm : algorithm_names(Collective::AllReduce))
          for (std::size_t b : sizes(4u << 10, 64u << 20)) record("all_reduce", algorithm, b);
        if (pg.rank() == 0) {
          std::ofstream out(file);
          out << rows.str();
          if (!out) throw std::runtime_error("cannot write the measurements to " + file);
        }
      },
      group);
}

std::vector<Measurement> read_rows(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error("the benchmark left no measurements in " + file);
  std::vector<Measurement> rows;
  Measurement m;
  while (in >> m.op >> m.algorithm >> m.ranks >> m.bytes >> m.seconds) {
    if (m.algorithm == "-") m.algorithm.clear();
    rows.push_back(m);
  }
  return rows;
}

std::string size_text(std::size_t b) {
  if (b >= (1u << 20)) return std::to_string(b >> 20) + "M";
  return std::to_string(b >> 10) + "K";
}

}  // namespace

void run_calibration(const CalibrateOptions& options) {
  // The directory: made here, inherited by the ranks' copies.
  std::string dir;
  if (const char* given = std::getenv(kDirVariable)) {
    dir = given;
  } else {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "ringlab-calibrate-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot make a temporary directory");
    dir = pattern;
    setenv(kDirVariable, dir.c_str(), 1);
  }
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  double load = -1;
  if (std::ifstream loadavg("/proc/loadavg"); loadavg) loadavg >> load;
  std::printf(
      "# ringlab sim --calibrate: tcp backend on this machine (%u cores, load average %.2f)\n",
      cores, load);
  std::printf("# measuring 2 ranks: sendrecv 4K..16M, every all_reduce algorithm 4K..64M ...\n");
  std::fflush(stdout);
  measure_world(2, dir + "/world2.txt", true);
  std::printf("# measuring 4 ranks: every all_reduce algorithm 4K..64M ...\n");
  std::fflush(stdout);
  measure_world(4, dir + "/world4.txt", false);

  std::vector<Measurement> rows = read_rows(dir + "/world2.txt");
  const std::vector<Measurement> four = read_rows(dir + "/world4.txt");
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  unsetenv(kDirVariable);

  // Fitted on 2 ranks: sendrecv for alpha and beta, the ring all_reduce for
  // gamma (its reductions are on the critical path at every size).
  std::vector<Measurement> fitted;
  for (const Measurement& m : rows)
    if (m.op == "sendrecv" || (m.algorithm == "ring" && m.bytes >= (64u << 10)))
      fitted.push_back(m);
  const sim::ModelFit fit = sim::fit_cost_model(fitted);
  std::printf("\nfitted (weighted least squares, relative error; simulator/model_file.hpp):\n");
  std::printf("  alpha %.3f us, bandwidth %.3f GB/s (beta %.4f ns/B), gamma %.4f ns/B\n",
              fit.model.alpha_s * 1e6, fit.model.bandwidth_Bps / 1e9, fit.model.beta() * 1e9,
              fit.model.gamma_s_per_byte * 1e9);
  std::printf(
      "  from %zu sendrecv rows (rms error %.1f%%) and %zu ring all_reduce rows >= 64K "
      "(rms error %.1f%%), 2 ranks\n",
      fit.sendrecv_rows, 100 * fit.sendrecv_rms, fit.all_reduce_rows, 100 * fit.all_reduce_rms);
  char note[256];
  std::snprintf(note, sizeof note,
                "ringlab sim --calibrate: tcp backend, 2 ranks, %u cores, load average %.2f", cores,
                load);
  sim::save_cost_model(options.save, fit.model, note);
  std::printf("  saved to %s (use it: ringlab sim all_reduce --model %s ...)\n",
              options.save.c_str(), options.save.c_str());

  rows.insert(rows.end(), four.begin(), four.end());
  std::printf(
      "\npredicted (closed form, fitted model) and measured all_reduce time, us; ratio = "
      "predicted / measured\n");
  std::size_t outside = 0, judged = 0;
  for (int ranks : {2, 4}) {
    std::printf("\n%d ranks%s\n%-19s", ranks,
                ranks > static_cast<int>(cores) ? " (more ranks than cores: oversubscribed)" : "",
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
        const double predicted = sim::predicted_seconds(*it, fit.model);
        const double ratio = predicted / it->seconds;
        const bool goal = ranks == 2 && b >= (64u << 10);
        const bool off = std::abs(ratio - 1) > 0.3;
        judged += goal;
        outside += goal && off;
        char cell[64];
        std::snprintf(cell, sizeof cell, "%.0f/%.0f=%.2f%s", predicted * 1e6, it->seconds * 1e6,
                      ratio, goal && off ? "!" : "");
        std::printf(" %22s", cell);
      }
      std::printf("\n");
    }
  }
  std::printf(
      "\n# cells: predicted/measured=ratio; ! = outside +-30%% where the goal holds "
      "(2 ranks, >= 64K): %zu of %zu\n",
      outside, judged);
}

}  // namespace ringlab::cli
