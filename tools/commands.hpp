// Subcommands of the ringlab command line. Each area adds its own file to the
// ringlab executable (target_sources in its CMakeLists.txt) and registers its
// subcommand with a CommandRegistrar at namespace scope:
//
//   static ringlab::cli::CommandRegistrar registrar(add_sim_command);
#pragma once

#include <CLI/CLI.hpp>
#include <charconv>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "backends/traced_launch.hpp"

namespace ringlab::cli {

using AddCommand = void (*)(CLI::App& app);

struct CommandRegistrar {
  explicit CommandRegistrar(AddCommand add);
};

// Adds every registered subcommand, in registration order.
void add_registered_commands(CLI::App& app);

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
