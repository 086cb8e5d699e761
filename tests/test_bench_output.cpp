// `ringlab bench`'s rows as a reader meets them: a legend line under the
// header says what algbw and busbw are and what the op's bus factor is
// (nccl-tests' definitions: busbw = algbw x 2(P-1)/P for all_reduce,
// (P-1)/P for all_gather, 1 for broadcast and point to point), and an op
// without a root shows "-" in the root column, not -1.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "run_program.hpp"

using ringlab::testing::run_ringlab;

namespace {

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The first line that does not start with '#' (a row), split in columns:
// size count type redop root time algbw busbw #wrong.
std::vector<std::string> first_row(const std::string& output) {
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line.front() == '#') continue;
    std::istringstream words(line);
    std::vector<std::string> columns;
    for (std::string w; words >> w;) columns.push_back(w);
    return columns;
  }
  return {};
}

// The line after the two header lines.
std::string legend(const std::string& output) {
  std::istringstream lines(output);
  std::string line;
  for (int i = 0; i < 4 && std::getline(lines, line); ++i) {
  }
  return line;
}

}  // namespace

TEST_CASE("bench explains algbw, busbw's factor for the op, and an absent root") {
  struct Case {
    const char* op;
    int ranks;
    const char* factor;  // the bus factor at that many ranks, 2 decimals
    const char* root;    // the root column
  };
  // 2(4-1)/4 = 1.5; (4-1)/4 = 0.75; 1.
  for (const Case& c : {Case{"all_reduce", 4, "1.50", "-"}, Case{"all_gather", 4, "0.75", "-"},
                        Case{"broadcast", 2, "1.00", "0"}, Case{"sendrecv", 2, "1.00", "-"}}) {
    CAPTURE(c.op);
    const auto run = run_ringlab(std::string("bench --backend inproc --op ") + c.op + " -n " +
                                 std::to_string(c.ranks) + " --sizes 4K:4K --iters 2 --warmup 1");
    CAPTURE(run.output);
    REQUIRE(run.status == 0);
    const std::string line = legend(run.output);
    CHECK(has(line, "# algbw = size / time; busbw = algbw x " + std::string(c.factor)));
    CHECK(has(line, std::string(c.op) + "'s factor"));
    CHECK(has(line, "P = " + std::to_string(c.ranks)));
    CHECK(has(line, c.root == std::string("-") ? "root - = this op has none" : "root = the rank"));
    const auto row = first_row(run.output);
    REQUIRE(row.size() == 9);
    CHECK(row[4] == c.root);
  }
}

// `bench --op loopback`: the machine's ceiling in the same rows. -n is the
// number of plain connections; algbw is one connection's, busbw all of them
// together (n x algbw), and what arrived is checked (#wrong).
TEST_CASE("bench --op loopback: one row per size, busbw = connections x algbw, no root") {
  const auto run = run_ringlab("bench --op loopback -n 3 --sizes 4K:16K --iters 2 --warmup 1");
  CAPTURE(run.output);
  REQUIRE(run.status == 0);
  CHECK(has(run.output, "3 plain TCP connections over 127.0.0.1"));
  std::istringstream lines(run.output);
  std::vector<std::string> sizes;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line.front() == '#') continue;
    std::istringstream words(line);
    std::vector<std::string> row;
    for (std::string w; words >> w;) row.push_back(w);
    REQUIRE(row.size() == 9);
    sizes.push_back(row[0]);
    CHECK(row[4] == "-");
    CHECK(row[8] == "0");
    // Printed to three decimals each: 3 x algbw and busbw differ by rounding only.
    CHECK(std::abs(std::stod(row[7]) - 3 * std::stod(row[6])) <= 0.0025);
  }
  CHECK(sizes == std::vector<std::string>{"4096", "8192", "16384"});

  const auto none = run_ringlab("bench --op loopback -n 0 --sizes 4K:4K");
  CAPTURE(none.output);
  CHECK(none.status != 0);
  CHECK(has(none.output, "--ranks: Value 0 not in range"));
}
