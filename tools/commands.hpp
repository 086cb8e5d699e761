// Subcommands of the ringlab command line. Each area has its own file in the
// ringlab executable (tools/CMakeLists.txt) with one add_*_command function,
// which main() calls in the order `ringlab --help` lists them (main.cpp).
#pragma once

#include <CLI/CLI.hpp>
#include <charconv>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "backends/traced_launch.hpp"

namespace ringlab::cli {

void add_lesson_commands(CLI::App& app);    // lesson_commands.cpp
void add_bench_command(CLI::App& app);      // bench_command.cpp
void add_run_command(CLI::App& app);        // run_command.cpp
void add_sim_command(CLI::App& app);        // sim_command.cpp
void add_replay_command(CLI::App& app);     // replay_command.cpp
void add_exercise_command(CLI::App& app);   // exercise_command.cpp

// Thrown by a command whose exit status is not simply 0 or 1, as `ringlab
// run` passing on its job's status as a shell would; main() returns `status`.
struct ExitStatus {
  int status;
};

// --trace FILE for a command whose ranks come from backends::run_ranks: it
// makes `session`, which the command hands to run_ranks; the tcp backend's
// ranks record their transport and the launcher merges their traces into FILE
// (tools/run_command.cpp).
void add_trace_option(CLI::App& sub, std::optional<backends::TraceSession>& session);

// horovodrun's `-np N` for `ringlab run`, which CLI11 would read as -n -p (a
// single dash takes one letter): rewritten in args (argv, the program's name
// first) as --nproc-per-node N, among ringlab run's own options only, never
// in the program's arguments (tools/run_command.cpp).
void spell_horovod_options(const CLI::App& app, std::vector<std::string>& args);

// The largest value of an int option (2147483647); also the longest timeout
// in milliseconds ringlab takes (transport/tcp/tcp.hpp, kMaxTimeout).
inline constexpr long long kMaxInt = std::numeric_limits<int>::max();

// Checks that an option is a whole number from `min` to `max`, and says so
// when it is not: "--iters: 0 is not allowed: give a number of timed runs from
// 1 to 2147483647". (CLI11's PositiveNumber printed its range as 0.000000 to
// the 309 digits of the largest double, and a number past the option's type
// got "Could not convert".) `what`: "a number of timed runs".
inline CLI::Validator whole_number(long long min, long long max, const std::string& what) {
  return CLI::Validator(
      [=](std::string& input) -> std::string {
        long long value = 0;
        const auto [end, error] = std::from_chars(input.data(), input.data() + input.size(), value);
        if (error == std::errc() && end == input.data() + input.size() && value >= min &&
            value <= max)
          return {};
        return input + " is not allowed: give " + what + " from " + std::to_string(min) + " to " +
               std::to_string(max);
      },
      std::to_string(min) + ".." + std::to_string(max));
}

}  // namespace ringlab::cli
