// `ringlab sim` as a first-time user meets it (README's "Using it"): the
// README example prints the article's sums, messages that carry nothing stay
// out of the way, the operation must be named, errors about the scenario
// name no rank, the output says which prediction path answered, and a
// calibrated model file is read back.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "run_program.hpp"

using ringlab::testing::run_ringlab;

namespace {

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("ringlab-test-sim-cli-" + name)).string();
}

}  // namespace

TEST_CASE("README's sim example prints the article's int64 sums on every rank") {
  const std::string command = "sim all_reduce --algo ring --ranks 4 --count 4 --dtype int64";
  CHECK(has(read_file(RINGLAB_SOURCE_DIR "/README.md"), "$ringlab " + command));
  const auto run = run_ringlab(command);
  CAPTURE(run.output);
  REQUIRE(run.status == 0);
  // Rank r starts with [1+2r, ..., 4+2r]: the sums are 4(1+i) + 2(0+1+2+3).
  for (int r = 0; r < 4; ++r)
    CHECK(has(run.output, "Rank " + std::to_string(r) + " has data tensor([16, 20, 24, 28])"));
  CHECK(has(run.output, "4 x int64 per rank"));
  CHECK_FALSE(has(run.output, "(unnamed memory)"));
  CHECK_FALSE(has(run.output, "(0 bytes"));
  CHECK_FALSE(has(run.output, " 0.000 GB/s"));
  CHECK(has(run.output, "answered by the recorded run"));
}

TEST_CASE("messages of 0 bytes are hidden unless asked, and empty chunks are named") {
  // 2 elements on 4 ranks: blocks 2 and 3 of the ring are empty.
  const auto hidden = run_ringlab("sim all_reduce --algo ring --ranks 4 --count 2");
  CAPTURE(hidden.output);
  REQUIRE(hidden.status == 0);
  CHECK(has(hidden.output, "12 of 24 messages carry 0 bytes"));
  CHECK(has(hidden.output, "--show-empty"));
  CHECK_FALSE(has(hidden.output, "(0 bytes"));
  CHECK(has(hidden.output, "(and 2 empty messages)"));
  CHECK(has(hidden.output, "MB/s"));  // 8 bytes in microseconds: not "0.000 GB/s"
  CHECK_FALSE(has(hidden.output, " 0.000 GB/s"));

  const auto shown = run_ringlab("sim all_reduce --algo ring --ranks 4 --count 2 --show-empty");
  CAPTURE(shown.output);
  REQUIRE(shown.status == 0);
  CHECK(has(shown.output, "rank 0 -> rank 1: buf[2:2] -> scratch#0[0:0] (0 bytes, inputs -)"));
  CHECK_FALSE(has(shown.output, "(unnamed memory)"));

  // The barrier moves nothing but tokens: they are what it shows.
  const auto barrier = run_ringlab("sim barrier --ranks 4");
  CAPTURE(barrier.output);
  CHECK(has(barrier.output, "rank 0 -> rank 1: (an empty token) -> (an empty token) (0 bytes"));
}

TEST_CASE("sim without an operation says what to name instead of running all_reduce") {
  const auto run = run_ringlab("sim --ranks 4");
  CAPTURE(run.output);
  CHECK(run.status != 0);
  CHECK(has(run.output, "name the operation"));
  CHECK(has(run.output, "all_reduce"));
  CHECK(has(run.output, "parameter_server"));
  CHECK_FALSE(has(run.output, "# ringlab sim: all_reduce"));
}

TEST_CASE("errors about the scenario name no rank and come before any output") {
  const auto algorithm = run_ringlab("sim all_reduce --algo nope --ranks 4");
  CAPTURE(algorithm.output);
  CHECK(algorithm.status != 0);
  CHECK(has(algorithm.output, "unknown all_reduce algorithm 'nope': use one of ring"));
  CHECK_FALSE(has(algorithm.output, "rank 0"));
  CHECK_FALSE(has(algorithm.output, "# ringlab sim:"));

  const auto root = run_ringlab("sim broadcast --ranks 4 --root 9");
  CAPTURE(root.output);
  CHECK(root.status != 0);
  CHECK(has(root.output, "root = 9 is not a rank of 0..3"));
  CHECK_FALSE(has(root.output, "rank 0:"));

  const auto op = run_ringlab("sim all_reduce --ranks 4 --redop band --dtype float32");
  CAPTURE(op.output);
  CHECK(op.status != 0);
  CHECK_FALSE(has(op.output, "rank 0:"));

  const auto big = run_ringlab("sim all_reduce --ranks 2000 --steps");
  CAPTURE(big.output);
  CHECK(big.status != 0);
  CHECK(has(big.output, "--steps needs the recorded run, which takes up to 1024 ranks"));
}

TEST_CASE("the output says which path answered") {
  const auto closed = run_ringlab("sim all_reduce --algo ring --ranks 65536 --bytes 1G");
  CAPTURE(closed.output);
  REQUIRE(closed.status == 0);
  CHECK(has(closed.output, "answered by the closed form"));
  CHECK(has(closed.output, "131070 steps, 8589803520 messages"));

  const auto messages = run_ringlab("sim reduce --algo gloo_ring --ranks 64 --count 4096");
  CAPTURE(messages.output);
  REQUIRE(messages.status == 0);
  CHECK(has(messages.output, "answered by the message-level path"));
  CHECK(has(messages.output, "no closed form for reduce gloo_ring"));

  const auto ring_topology = run_ringlab("sim all_reduce --ranks 64 --count 4096 --topology ring");
  CAPTURE(ring_topology.output);
  REQUIRE(ring_topology.status == 0);
  CHECK(has(ring_topology.output, "answered by the message-level path"));

  const auto compare = run_ringlab("sim all_reduce --compare --ranks 4096 --sizes 1K:4K");
  CAPTURE(compare.output);
  REQUIRE(compare.status == 0);
  CHECK(has(compare.output, "# answered by: ring by the closed form"));

  const auto recorded = run_ringlab("sim all_reduce --ranks 64 --count 4096 --path recorded");
  CAPTURE(recorded.output);
  REQUIRE(recorded.status == 0);
  CHECK(has(recorded.output, "answered by the recorded run"));
}

TEST_CASE("--model reads a calibrated file; flags given as well win; a bad file is named") {
  const std::string path = temp_path("model.json");
  {
    std::ofstream out(path);
    // Written by hand, not by save_cost_model: what the command reads.
    out << R"({"format": "ringlab cost model", "version": 1, "alpha_s": 2e-05,
               "bandwidth_Bps": 2000000000.0, "gamma_s_per_byte": 5e-10, "note": "test"})";
  }
  // ring, 4 ranks, 4096 float32 (16384 bytes): 2(P-1) alpha + 2(P-1)/P n beta
  // + (P-1)/P n gamma = 120 + 12.288 + 6.144 us.
  const auto run = run_ringlab("sim all_reduce --algo ring --ranks 4 --count 4096 --model " + path);
  CAPTURE(run.output);
  REQUIRE(run.status == 0);
  CHECK(has(run.output, "alpha 20 us, bandwidth 2 GB/s, gamma 0.5 ns/B"));
  CHECK(has(run.output, "total 138.432 us"));
  const auto flag =
      run_ringlab("sim all_reduce --algo ring --ranks 4 --count 4096 --alpha 1 --model " + path);
  CAPTURE(flag.output);
  CHECK(has(flag.output, "alpha 1 us, bandwidth 2 GB/s"));

  {
    std::ofstream out(path);
    out << R"({"format": "ringlab cost model", "version": 1, "alpha_s": -1,
               "bandwidth_Bps": 2e9, "gamma_s_per_byte": 0})";
  }
  const auto bad = run_ringlab("sim all_reduce --ranks 4 --model " + path);
  CAPTURE(bad.output);
  CHECK(bad.status != 0);
  CHECK(has(bad.output, path));
  CHECK(has(bad.output, "\"alpha_s\" is -1"));
  std::filesystem::remove(path);
  const auto missing = run_ringlab("sim all_reduce --ranks 4 --model " + path);
  CHECK(missing.status != 0);
  CHECK(has(missing.output, "ringlab sim --calibrate --save"));
}
