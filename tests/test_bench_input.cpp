// `ringlab bench`'s input: sizes it cannot run are refused before any rank
// starts, with the form it accepts (issue 12, item 7), and a size that does
// not fit in memory is refused with how much it needs (issue 12, item 8).
#include <doctest/doctest.h>

#include <string>

#include "bench/bench.hpp"
#include "run_program.hpp"

using ringlab::testing::kCleanEnvironment;
using ringlab::testing::ProgramRun;
using ringlab::testing::run_ringlab;
using ringlab::testing::run_shell;
using namespace ringlab;

namespace {

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The accepted form, as every refusal of a size states it.
constexpr const char* kAcceptedForm = "a whole number of bytes with an optional K, M or G";

// `ringlab ARGUMENTS` under an address-space limit of `limit_kib` (ulimit -v).
ProgramRun run_limited(std::size_t limit_kib, const std::string& arguments) {
  return run_shell("ulimit -v " + std::to_string(limit_kib) + " && " + kCleanEnvironment +
                   RINGLAB_EXE + " " + arguments);
}

// The size in "(--sizes X fits)", or "".
std::string suggested_sizes(const std::string& output) {
  const std::string before = "(--sizes ";
  const auto at = output.find(before);
  if (at == std::string::npos) return "";
  const auto end = output.find(" fits)", at);
  return end == std::string::npos ? ""
                                  : output.substr(at + before.size(), end - at - before.size());
}

constexpr std::size_t kGiB = std::size_t{1} << 30;

}  // namespace

TEST_SUITE("bench_input") {
  TEST_CASE("sizes the benchmark cannot run are refused before any rank starts, naming the form") {
    // Each of these used to exit 0 with an empty table (or, nan:nan, die
    // with "cannot create std::vector larger than max_size()").
    for (const char* sizes :
         {"0:0", "3:3", "inf:inf", "1e30:1e30", "99999999999999999999:1", "nan:nan", "-4K:4K",
          "4K:", ":4K", "4X", "0x10", " 4K", "1.5.5K", "4K:64M:1G", "1e3"}) {
      const std::string text = sizes;
      const ProgramRun run =
          run_ringlab("bench --op all_reduce -n 2 --warmup 0 --iters 1 --sizes '" + text + "'");
      INFO("--sizes " << text << " printed:\n" << run.output);
      CHECK(run.status != 0);
      CHECK(run.output.find("--sizes") != std::string::npos);
      CHECK(count_of(run.output, "ringlab: error:") == 1);  // once, not once per rank
      CHECK(run.output.find("# ringlab bench") == std::string::npos);
      CHECK(run.output.find("max_size") == std::string::npos);
      if (text == "3:3")
        CHECK(run.output.find("4 bytes") != std::string::npos);  // one float32 element
      else
        CHECK(run.output.find(kAcceptedForm) != std::string::npos);
    }
  }

  TEST_CASE("the sizes it accepts are read exactly") {
    CHECK(bench::parse_size("4K") == 4096);
    CHECK(bench::parse_size("64M") == std::size_t{64} << 20);
    CHECK(bench::parse_size("1G") == std::size_t{1} << 30);
    CHECK(bench::parse_size("1GiB") == std::size_t{1} << 30);
    CHECK(bench::parse_size("1.5K") == 1536);
    CHECK(bench::parse_size("17") == 17);
    CHECK(bench::parse_size("17B") == 17);
    CHECK(bench::parse_size("8k") == 8192);
    using Range = std::pair<std::size_t, std::size_t>;
    CHECK(bench::parse_size_range("4K:64M") == Range{4096, std::size_t{64} << 20});
    CHECK(bench::parse_size_range("1M") == Range{1 << 20, 1 << 20});
    CHECK_THROWS_WITH_AS(bench::parse_size_range("64M:4K"), doctest::Contains("runs backwards"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(bench::parse_size("0.3K"),
                         doctest::Contains("not a whole number of bytes"), std::invalid_argument);
    // The largest accepted size, and one byte more.
    CHECK(bench::parse_size(std::to_string(bench::kMaxBenchBytes)) == bench::kMaxBenchBytes);
    CHECK_THROWS_WITH_AS(bench::parse_size(std::to_string(bench::kMaxBenchBytes + 1)),
                         doctest::Contains("too large"), std::invalid_argument);
  }

  TEST_CASE(
      "a range that holds at least one element runs; the same range below one element does not") {
    const ProgramRun ok =
        run_ringlab("bench --backend inproc --op all_reduce -n 2 --warmup 0 --iters 1 --sizes 3:4");
    INFO(ok.output);
    CHECK(ok.status == 0);
    CHECK(ok.output.find("\n           4            1  float32") != std::string::npos);
    const ProgramRun refused = run_ringlab(
        "bench --backend inproc --op all_reduce -n 2 --warmup 0 --iters 1 --sizes 3:7 --dtype "
        "float64");
    INFO(refused.output);
    CHECK(refused.status != 0);
    CHECK(refused.output.find("8 bytes") != std::string::npos);
  }

  // Issue 12, item 8: `--sizes 8G` under a memory limit ended in a bare
  // std::bad_alloc from a rank.
  TEST_CASE("a size that does not fit under an address-space limit is refused with what it needs") {
    for (const char* backend : {"tcp", "inproc"}) {
      CAPTURE(backend);
      const std::string common = std::string("bench --backend ") + backend +
                                 " --op all_reduce -n 2 --warmup 0 --iters 1 --sizes ";
      const ProgramRun run = run_limited(2 << 20, common + "8G");  // 2 GiB
      INFO(run.output);
      CHECK(run.status != 0);
      CHECK(count_of(run.output, "ringlab: error:") == 1);
      // An all_reduce rank holds its tensor and as much scratch: 2 x 8 GiB.
      CHECK(
          run.output.find("all_reduce of 8G on 2 ranks needs about 16.0 GiB of memory per rank") !=
          std::string::npos);
      CHECK(run.output.find("ulimit -v, RLIMIT_AS") != std::string::npos);
      CHECK(run.output.find("bad_alloc") == std::string::npos);
      CHECK(run.output.find("# ringlab bench") == std::string::npos);
      // What it suggests does run under the same limit.
      const std::string fits = suggested_sizes(run.output);
      REQUIRE(!fits.empty());
      const ProgramRun smaller = run_limited(2 << 20, common + fits);
      INFO(smaller.output);
      CHECK(smaller.status == 0);
      CHECK(smaller.output.find("# ringlab bench") != std::string::npos);
    }
  }

  TEST_CASE("the memory check counts every rank that shares the limit, and names the limit") {
    bench::BenchOptions o;
    o.op = "all_reduce";
    o.min_bytes = 4096;
    o.max_bytes = 4 * kGiB;
    // Tensor and scratch of 4 GiB each on each rank.
    CHECK(bench::memory_per_rank(o, 2) == 8 * kGiB);
    bench::MemoryLimits limits;
    limits.available = 10 * kGiB;
    const bench::RankPlacement processes{2, 1, 2};
    CHECK_THROWS_WITH_AS(
        bench::check_memory(o, processes, limits),
        doctest::Contains("needs about 8.0 GiB of memory per rank (16.0 GiB for 2 "
                          "ranks) for its tensors and their scratch, but the memory "
                          "available on this machine (MemAvailable in "
                          "/proc/meminfo) leaves 10.0 GiB: use a smaller maximum "
                          "size (--sizes 4K:2G fits) or fewer ranks"),
        std::runtime_error);
    limits.available = 17 * kGiB;
    CHECK_NOTHROW(bench::check_memory(o, processes, limits));
    // One rank per process: 8 GiB of address space each is enough (and some
    // room for the threads); as threads of one process it is not.
    limits.address_space_left = 9 * kGiB;
    CHECK_NOTHROW(bench::check_memory(o, processes, limits));
    CHECK_THROWS_WITH_AS(bench::check_memory(o, {2, 2, 2}, limits),
                         doctest::Contains("(16.0 GiB for 2 ranks) for its tensors and their "
                                           "scratch, but the address-space limit of each process"),
                         std::runtime_error);
    limits.address_space_left.reset();
    limits.cgroup_left = 3 * kGiB;
    limits.cgroup_file = "/sys/fs/cgroup/test/memory.max";
    CHECK_THROWS_WITH_AS(bench::check_memory(o, processes, limits),
                         doctest::Contains("the memory limit of this cgroup "
                                           "(/sys/fs/cgroup/test/memory.max) leaves 3.0 GiB: use a "
                                           "smaller maximum size (--sizes 4K:512M fits)"),
                         std::runtime_error);
    // all_gather of 4 GiB on 4 ranks: blocks of 1 GiB; the tensor, 4 outputs
    // and a packed list of 4.
    o.op = "all_gather";
    CHECK(bench::memory_per_rank(o, 4) == 9 * kGiB);
  }


  // The dtypes of ops/dtype.hpp: every one's rows run and find every element
  // right; a narrow integer's sum over many ranks wraps as the reduction's
  // does (int8: 1 + 2 + ... + 17 = 153 is -103), and is counted right too.
  TEST_CASE("every dtype benchmarks, and its results check clean") {
    for (DType dtype : kAllDTypes) {
      const std::string name(dtype_name(dtype));
      CAPTURE(name);
      const ProgramRun run = run_ringlab(
          "bench --backend inproc --op all_reduce -n 3 --warmup 0 --iters 1 --sizes 64:256 "
          "--dtype " + name + (is_floating(dtype) ? " --redop avg" : ""));
      INFO(run.output);
      CHECK(run.status == 0);
      CHECK(count_of(run.output, " " + name + " ") == 3);  // 64, 128 and 256 bytes
      CHECK(count_of(run.output, "      0\n") == 3);     // #wrong
    }
    const ProgramRun wraps = run_ringlab(
        "bench --backend inproc --op all_reduce -n 17 --warmup 0 --iters 1 --sizes 64 --dtype int8");
    INFO(wraps.output);
    CHECK(wraps.status == 0);
    CHECK(count_of(wraps.output, "      0\n") == 1);
  }
}  // TEST_SUITE
