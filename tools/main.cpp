// ringlab: the command line, one subcommand per file (commands.hpp).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "tools/commands.hpp"
#include "tools/option_checks.hpp"

#ifdef RINGLAB_HAVE_GUI
namespace ringlab::gui {
void add_gui_command(CLI::App& app);  // gui_command.cpp
}
#endif

int main(int argc, char** argv) {
  CLI::App app{"ringlab: run, step through and check collective communication"};
  app.require_subcommand(1);
  ringlab::cli::add_lesson_commands(app);
  ringlab::cli::add_bench_command(app);
  ringlab::cli::add_run_command(app);
  ringlab::cli::add_sim_command(app);
  ringlab::cli::add_replay_command(app);
  ringlab::cli::add_exercise_command(app);
#ifdef RINGLAB_HAVE_GUI
  ringlab::gui::add_gui_command(app);
#endif
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
  } catch (const ringlab::cli::ExitStatus& e) {
    return e.status;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ringlab: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
