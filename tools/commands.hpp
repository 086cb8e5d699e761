// Subcommands of the ringlab command line. Each area adds its own file to the
// ringlab executable (target_sources in its CMakeLists.txt) and registers its
// subcommand with a CommandRegistrar at namespace scope:
//
//   static ringlab::cli::CommandRegistrar registrar(add_sim_command);
#pragma once

#include <CLI/CLI.hpp>

namespace ringlab::cli {

using AddCommand = void (*)(CLI::App& app);

struct CommandRegistrar {
  explicit CommandRegistrar(AddCommand add);
};

// Adds every registered subcommand, in registration order.
void add_registered_commands(CLI::App& app);

// --trace FILE for a command whose ranks come from backends::run_ranks: the
// tcp backend's ranks record their transport and the launcher merges their
// traces into FILE (tools/run_command.cpp).
void add_trace_option(CLI::App& sub);

}  // namespace ringlab::cli
