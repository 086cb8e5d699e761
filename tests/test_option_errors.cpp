// Numeric options out of range (issue 12, item 10): `--timeout-ms 0` and
// `--iters 0` printed "Value 0 not in range 0.000000 to 1797..." with the
// 309 digits of the largest double. Each option now says, in a few words,
// the whole numbers it takes, and a number too large for it is refused the
// same way rather than with "Could not convert".
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "run_program.hpp"

namespace {

using ringlab::testing::run_ringlab;

// `ringlab ARGUMENTS` fails, and its message holds every piece: the option,
// the value given, and the range allowed.
void refused(const std::string& arguments, const std::vector<std::string>& pieces) {
  const auto run = run_ringlab(arguments);
  INFO("ringlab " << arguments << " printed:\n" << run.output);
  CHECK(run.status != 0);
  for (const std::string& piece : pieces) CHECK(run.output.find(piece) != std::string::npos);
  CHECK(run.output.find("is not allowed: give") != std::string::npos);
  CHECK(run.output.find("0.000000") == std::string::npos);
  CHECK(run.output.find("1797") == std::string::npos);
  CHECK(run.output.find("Could not convert") == std::string::npos);
}

}  // namespace

TEST_CASE("numeric options out of range say which whole numbers they take") {
  const std::string ms = "is not allowed: give a number of milliseconds from ";
  refused("lesson reduce --timeout-ms 0", {"--timeout-ms: 0 " + ms + "1 to 2147483647"});
  refused("lesson reduce --timeout-ms 99999999999",
          {"--timeout-ms: 99999999999 " + ms + "1 to 2147483647"});
  refused("tour --timeout-ms -5", {"--timeout-ms: -5 " + ms + "1 to 2147483647"});
  refused("bench --timeout-ms 0", {"--timeout-ms: 0 " + ms + "1 to 2147483647"});
  refused("bench --iters 0",
          {"--iters: 0 is not allowed: give a number of timed runs from 1 to 2147483647"});
  refused("bench --warmup -1",
          {"--warmup: -1 is not allowed: give a number of untimed runs from 0 to 2147483647"});
  refused("sim all_reduce --topology switch --ranks-per-switch 0",
          {"--ranks-per-switch: 0 is not allowed: give a number of ranks from 1 to 65536"});
  refused("sim all_reduce --ranks 65537",
          {"--ranks: 65537 is not allowed: give a number of virtual ranks from 1 to 65536"});
  refused("gui --step -1", {"--step: -1 is not allowed: give a step number from 0 to "});
  // ringlab run's options: the option, the value, the unit and the largest.
  for (const char* option :
       {"--timeout-ms", "--stop-after-ms", "--kill-after-ms", "--time-limit-ms"})
    refused(std::string("run ") + option + " -1 -- true",
            {std::string(option) + ": ", "-1", "milliseconds", "2147483647"});
  refused("run --trace-limit 0 -- true", {"--trace-limit: ", "0", "events", "2147483647"});
}
