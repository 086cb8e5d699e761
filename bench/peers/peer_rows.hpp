// What the two peer harnesses (gloo_allreduce, mpi_allreduce) share with
// `ringlab bench`: the command-line options, the size list and the
// nccl-tests-style rows, printed in exactly the columns ringlab prints so that
// bench/compare.sh parses all three with one awk program.
//
// Timing follows ringlab's bench/bench.cpp: `warmup` untimed runs, a barrier,
// `iters` timed runs; a rank's time is its average, the row's time the
// slowest rank's. algbw = size / time; busbw = algbw * 2(n-1)/n (all_reduce).
// Inputs: rank r holds r + 1 in every element, so after a sum every element
// is n(n+1)/2 (exact in float32 for any n this harness will see); #wrong
// counts the elements, over all ranks, that differ from it.
#pragma once

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace peers {

struct Options {
  int rank = -1;              // -1: take it from the environment
  int size = -1;
  std::size_t min_bytes = 4 << 10;
  std::size_t max_bytes = 64 << 20;
  int warmup = 3;
  int iters = 10;
  int timeout_ms = 60000;
  std::string algorithms;     // comma separated; "" = every one the harness knows
  std::string store;          // gloo only: rendezvous directory
};

// "4K" -> 4096, "64M" -> 67108864; plain numbers are bytes.
inline std::size_t parse_size(const std::string& text) {
  std::size_t digits = 0;
  const unsigned long long value = std::stoull(text, &digits);
  const std::string suffix = text.substr(digits);
  std::size_t scale = 1;
  if (suffix == "K" || suffix == "k") scale = std::size_t{1} << 10;
  else if (suffix == "M" || suffix == "m") scale = std::size_t{1} << 20;
  else if (suffix == "G" || suffix == "g") scale = std::size_t{1} << 30;
  else if (!suffix.empty())
    throw std::invalid_argument("size '" + text + "': use a number with K, M or G (e.g. 4K, 64M)");
  return static_cast<std::size_t>(value) * scale;
}

inline int env_int(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::atoi(value) : fallback;
}

inline Options parse_options(int argc, char** argv, const char* usage) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value\n" + usage);
      return argv[++i];
    };
    if (arg == "--rank") o.rank = std::stoi(value());
    else if (arg == "--size") o.size = std::stoi(value());
    else if (arg == "--sizes") {
      const std::string range = value();
      const auto colon = range.find(':');
      o.min_bytes = parse_size(range.substr(0, colon));
      o.max_bytes = colon == std::string::npos ? o.min_bytes : parse_size(range.substr(colon + 1));
    } else if (arg == "--warmup") o.warmup = std::stoi(value());
    else if (arg == "--iters") o.iters = std::stoi(value());
    else if (arg == "--timeout-ms") o.timeout_ms = std::stoi(value());
    else if (arg == "--algorithms") o.algorithms = value();
    else if (arg == "--store") o.store = value();
    else if (arg == "-h" || arg == "--help") {
      std::printf("%s", usage);
      std::exit(0);
    } else {
      throw std::invalid_argument("unknown argument '" + arg + "'\n" + usage);
    }
  }
  if (o.iters < 1 || o.warmup < 0 || o.min_bytes < 4 || o.min_bytes > o.max_bytes)
    throw std::invalid_argument("need --iters >= 1, --warmup >= 0 and 4 <= MIN <= MAX in --sizes");
  return o;
}

inline std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    const auto end = comma == std::string::npos ? text.size() : comma;
    if (end > start) parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

// The expected element after a sum over ranks holding 1, 2, ..., n.
inline float expected_sum(int ranks) { return static_cast<float>(ranks * (ranks + 1) / 2); }

inline void print_header(const char* library, const std::string& algorithm, int ranks,
                         const char* transport) {
  std::printf("# %s bench: all_reduce, algorithm %s, %d ranks, backend %s\n", library,
              algorithm.c_str(), ranks, transport);
  std::printf("#%11s %12s %8s %6s %5s %10s %8s %8s %6s\n", "size", "count", "type", "redop",
              "root", "time", "algbw", "busbw", "#wrong");
  std::printf("#%11s %12s %8s %6s %5s %10s %8s %8s %6s\n", "(B)", "(elements)", "", "", "",
              "(us)", "(GB/s)", "(GB/s)", "");
  std::fflush(stdout);
}

inline void print_row(std::size_t bytes, int ranks, double time_us, long long wrong) {
  const double algbw = static_cast<double>(bytes) / (time_us * 1e3);
  const double busbw = algbw * 2.0 * (ranks - 1) / ranks;
  std::printf(" %11zu %12zu %8s %6s %5s %10.1f %8.3f %8.3f %6lld\n", bytes, bytes / sizeof(float),
              "float32", "sum", "-1", time_us, algbw, busbw, wrong);
  std::fflush(stdout);
}

}  // namespace peers
