// ringlab: the command line. Each area adds its subcommand here.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "tools/commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"ringlab: run, step through and check collective communication"};
  app.require_subcommand(1);
  ringlab::cli::add_lesson_commands(app);
  ringlab::cli::add_bench_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ringlab: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
