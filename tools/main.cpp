// ringlab: the command line. Subcommands register themselves (commands.hpp).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "tools/commands.hpp"
#include "tools/option_checks.hpp"

namespace ringlab::cli {

namespace {
std::vector<AddCommand>& registry() {
  static std::vector<AddCommand> commands;
  return commands;
}
}  // namespace

CommandRegistrar::CommandRegistrar(AddCommand add) { registry().push_back(add); }

void add_registered_commands(CLI::App& app) {
  for (AddCommand add : registry()) add(app);
}

}  // namespace ringlab::cli

int main(int argc, char** argv) {
  CLI::App app{"ringlab: run, step through and check collective communication"};
  app.require_subcommand(1);
  ringlab::cli::add_registered_commands(app);
  ringlab::cli::refuse_non_finite_numbers(app);
  // horovodrun's -np for ringlab run, before CLI11 reads it (commands.hpp).
  std::vector<std::string> args(argv, argv + argc);
  ringlab::cli::spell_horovod_options(app, args);
  std::vector<const char*> spelt;
  for (const std::string& arg : args) spelt.push_back(arg.c_str());
  try {
    app.parse(static_cast<int>(spelt.size()), spelt.data());
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ringlab: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
