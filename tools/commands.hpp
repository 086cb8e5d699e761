// Subcommands of the ringlab command line, one function per area.
#pragma once

#include <CLI/CLI.hpp>

namespace ringlab::cli {

// `ringlab tour`, `ringlab lesson NAME`.
void add_lesson_commands(CLI::App& app);
// `ringlab bench`.
void add_bench_command(CLI::App& app);

}  // namespace ringlab::cli
