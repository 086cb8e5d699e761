// `ringlab bench`'s input: sizes it cannot run are refused before any rank
// starts, with the form it accepts (issue 12, item 7), and a size that does
// not fit in memory is refused with how much it needs (issue 12, item 8).
#include <doctest/doctest.h>

#include <string>

#include "bench/bench.hpp"
#include "run_program.hpp"

using ringlab::testing::ProgramRun;
using ringlab::testing::run_ringlab;
using namespace ringlab;

namespace {

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The accepted form, as every refusal of a size states it.
constexpr const char* kAcceptedForm = "a whole number of bytes with an optional K, M or G";

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

}  // TEST_SUITE
