// `ringlab exercise list|start|check|show|solution`: the curriculum of
// exercises/ (catalog.hpp), the learner's workspace (workspace.hpp), and the
// GUI for `show`.
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "exercises/process.hpp"
#include "exercises/record.hpp"
#include "exercises/supervise.hpp"
#include "exercises/workspace.hpp"
#include "gui/state.hpp"
#include "simulator/cost.hpp"
#include "tools/commands.hpp"
#ifdef RINGLAB_HAVE_GUI
#include "gui/run.hpp"
#include "gui/window.hpp"
#endif

namespace ringlab::cli {

namespace {

namespace ex = ringlab::exercises;

struct ExerciseCommand {
  std::string name;
  std::string folder{ex::kDefaultWorkspace};
  std::string package;  // --ringlab-dir
  bool force = false;
  int timeout_ms = 5000;
  int case_seconds = ex::kDefaultCaseSeconds;
  int memory_mb = static_cast<int>(ex::kDefaultMemoryBytes >> 20);
  int ranks = 4, count = 0, root = 0, step = -1;
  std::string screenshot;
};

// This program, as the kernel knows it (the package is found beside it).
std::filesystem::path this_program() {
  char path[PATH_MAX];
  const ssize_t length = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (length <= 0) throw std::runtime_error("cannot tell where this ringlab program is");
  return std::string(path, static_cast<std::size_t>(length));
}

std::filesystem::path package_of(const ExerciseCommand& cmd) {
  if (!cmd.package.empty()) return std::filesystem::absolute(cmd.package);
  return ex::find_package_folder(this_program());
}

void list(const ExerciseCommand& cmd) {
  const ex::Workspace workspace{cmd.folder};
  for (const ex::Exercise& exercise : ex::all_exercises()) {
    std::string note;
    const ex::State state = ex::state_of(workspace, exercise, &note);
    std::printf("%-22s %-12s %d. %s%s\n", std::string(exercise.name).c_str(),
                std::string(ex::state_name(state)).c_str(), ex::position(exercise),
                std::string(exercise.title).c_str(),
                note.empty() ? "" : (" (" + note + ")").c_str());
  }
}

gui::Settings settings_for(const ex::Exercise& exercise, const sim::Run& run) {
  gui::Settings settings = gui::primitive_defaults(
      exercise.collective.empty() ? "all_reduce" : std::string(exercise.collective));
  settings.ranks = run.ranks;
  settings.elements = static_cast<int>(std::max<std::size_t>(1, run.count));
  settings.root = run.root;
  return settings;
}

gui::GuiState learner_state(const ExerciseCommand& cmd, const ex::Exercise& exercise) {
  ex::require_started(ex::Workspace{cmd.folder}, exercise);  // before the package is found
  const int count = cmd.count > 0 ? cmd.count : 2 * cmd.ranks;
  const auto file = ex::record(ex::Workspace{cmd.folder}, exercise, package_of(cmd), cmd.ranks,
                               exercise.shape == ex::Shape::Barrier ? 0 : count, cmd.root);
  std::ifstream in(file, std::ios::binary);
  sim::Run run = ex::read_recording(in);
  gui::Act act;
  act.title = "your " + std::string(exercise.name) + " (" + std::to_string(run.ranks) + " ranks)";
  act.prediction = sim::predict(run, gui::gui_cost_model());
  act.run = std::move(run);
  const gui::Settings settings = settings_for(exercise, act.run);
  std::vector<gui::Act> acts;
  acts.push_back(std::move(act));
  gui::GuiState state = gui::make_state(settings, std::move(acts));
  const int last = gui::frame_count(state) - 1;
  gui::apply(state, gui::JumpTo{cmd.step < 0 ? last : std::min(cmd.step, last)});
  return state;
}

// No display here: the same command under xvfb-run, for a screenshot.
bool screenshot_under_xvfb(const ExerciseCommand& cmd, int frame) {
  const char* path = std::getenv("PATH");
  bool found = false;
  std::istringstream folders(path ? path : "");
  for (std::string folder; std::getline(folders, folder, ':') && !found;)
    found = !folder.empty() && ::access((folder + "/xvfb-run").c_str(), X_OK) == 0;
  if (!found) return false;
  const std::string png =
      (std::filesystem::path(cmd.folder) / (cmd.name + "-frame-" + std::to_string(frame) + ".png"))
          .string();
  std::vector<std::string> argv{"xvfb-run",
                                "-a",
                                this_program().string(),
                                "exercise",
                                "show",
                                cmd.name,
                                "--dir",
                                cmd.folder,
                                "--ranks",
                                std::to_string(cmd.ranks),
                                "--root",
                                std::to_string(cmd.root),
                                "--step",
                                std::to_string(frame),
                                "--screenshot",
                                png};
  if (cmd.count > 0) argv.insert(argv.end(), {"--count", std::to_string(cmd.count)});
  if (!cmd.package.empty()) argv.insert(argv.end(), {"--ringlab-dir", cmd.package});
  const ex::ProgramResult shot = ex::run_program(argv, std::chrono::seconds(300));
  std::printf("%s", shot.output.c_str());
  return shot.ok();
}

// Shows the learner's run in the GUI, or renders one frame of it to a PNG;
// without a display, its log and a screenshot taken under xvfb-run.
void show(const ExerciseCommand& cmd) {
  const ex::Exercise& exercise = ex::find_exercise(cmd.name);
  gui::GuiState state = learner_state(cmd, exercise);
  const int last = gui::frame_count(state) - 1;
#ifdef RINGLAB_HAVE_GUI
  gui::WindowOptions options;
  options.title = "ringlab: your " + std::string(exercise.name);
  const std::string no_display = gui::missing_display_reason();
  if (no_display.empty()) {
    if (cmd.screenshot.empty()) return gui::run_interactive(state, options);
    gui::run_screenshot(state, options, cmd.screenshot);
    std::printf("wrote %s (frame %d of %d)\n", cmd.screenshot.c_str(), state.cursor, last);
    return;
  }
  std::printf("%s\n", no_display.c_str());
#else
  std::printf("this ringlab was built without the GUI (Dear ImGui, GLFW, OpenGL)\n");
#endif
  for (int frame = 0; frame <= last; ++frame)
    std::printf("%3d  %s\n", frame, state.recording.sentences[std::size_t(frame)].c_str());
  std::fflush(stdout);
#ifdef RINGLAB_HAVE_GUI
  if (screenshot_under_xvfb(cmd, state.cursor)) return;
#endif
  std::printf(
      "for a picture of frame K: xvfb-run -a ringlab exercise show %s --step K "
      "--screenshot %s.png\n",
      cmd.name.c_str(), cmd.name.c_str());
}

// Runs fn; when SIGINT or SIGTERM stopped it (everything it ran has ended
// by then), the command ends with 128 + the signal, as the shell expects.
bool stopped_by_signal(const std::function<bool()>& fn) {
  try {
    return fn();
  } catch (const ex::Interrupted& e) {
    std::fflush(stdout);
    throw ExitStatus{128 + e.signal_number};
  }
}

void add_folder_option(CLI::App& sub, ExerciseCommand& cmd) {
  sub.add_option("--dir", cmd.folder, "the workspace folder (default ./ringlab-exercises)");
}

void add_name(CLI::App& sub, ExerciseCommand& cmd) {
  std::vector<std::string> names;
  for (const ex::Exercise& e : ex::all_exercises()) names.emplace_back(e.name);
  sub.add_option("name", cmd.name, "the exercise (ringlab exercise list)")
      ->required()
      ->check(CLI::IsMember(names));
}

}  // namespace

void add_exercise_command(CLI::App& app) {
  auto cmd = std::make_shared<ExerciseCommand>();
  CLI::App* exercise = app.add_subcommand(
      "exercise", "write the algorithms yourself: list, start, check, show, solution");
  exercise->require_subcommand(1);

  CLI::App* list_cmd = exercise->add_subcommand("list", "every exercise, in order, with its state");
  add_folder_option(*list_cmd, *cmd);
  list_cmd->callback([cmd] { list(*cmd); });

  CLI::App* start = exercise->add_subcommand(
      "start", "write the exercise's file (the task, the cost to reach) and a CMake project");
  add_name(*start, *cmd);
  add_folder_option(*start, *cmd);
  start->add_flag("--force", cmd->force, "start over: overwrite the exercise's file");
  start->callback([cmd] {
    std::printf(
        "%s",
        ex::start(ex::Workspace{cmd->folder}, ex::find_exercise(cmd->name), cmd->force).c_str());
  });

  CLI::App* check = exercise->add_subcommand(
      "check",
      "build it and run it against the closed forms: the simulator, inproc, nccl_rules "
      "(where built) and tcp, world sizes 1 to 9");
  add_name(*check, *cmd);
  add_folder_option(*check, *cmd);
  check->add_option("--ringlab-dir", cmd->package, "the folder of ringlabConfig.cmake");
  check->add_option("--timeout-ms", cmd->timeout_ms, "limit of every wait inside the checks")
      ->check(whole_number(100, 600000, "a number of milliseconds"));
  check->add_option("--case-seconds", cmd->case_seconds,
                    "time each case may take before it is stopped and named (default 10)")
      ->check(whole_number(1, 3600, "a number of seconds"));
  check->add_option("--memory-mb", cmd->memory_mb,
                    "memory the exercise's program and all it starts may use (default 2048)")
      ->check(whole_number(64, 1 << 20, "a number of MiB"));
  check->callback([cmd] {
    const ex::Workspace workspace{cmd->folder};
    const ex::Exercise& chosen = ex::find_exercise(cmd->name);
    ex::require_started(workspace, chosen);  // before finding (or installing) the package
    ex::CheckOptions options;
    options.package = package_of(*cmd);
    options.timeout = std::chrono::milliseconds(cmd->timeout_ms);
    options.case_limit = std::chrono::seconds(cmd->case_seconds);
    options.memory_bytes = static_cast<std::uint64_t>(cmd->memory_mb) << 20;
    if (!stopped_by_signal([&] { return ex::check(workspace, chosen, options); }))
      throw std::runtime_error("exercise " + cmd->name + " is not passing yet (above)");
  });

  CLI::App* show_cmd = exercise->add_subcommand(
      "show", "step through your algorithm in the GUI (a screenshot, or its log, without one)");
  add_name(*show_cmd, *cmd);
  add_folder_option(*show_cmd, *cmd);
  show_cmd->add_option("--ringlab-dir", cmd->package, "the folder of ringlabConfig.cmake");
  show_cmd->add_option("--ranks,-n", cmd->ranks, "world size (default 4)")->check(CLI::Range(1, 9));
  show_cmd->add_option("--count", cmd->count, "elements per rank (default 2 per rank)")
      ->check(CLI::Range(1, 64));
  show_cmd->add_option("--root", cmd->root, "the root, where there is one")
      ->check(CLI::Range(0, 8));
  show_cmd->add_option("--step", cmd->step, "the frame to show first (default: the last)")
      ->check(whole_number(0, kMaxInt, "a frame number"));
  show_cmd->add_option("--screenshot", cmd->screenshot, "render that frame to this PNG and exit");
  show_cmd->callback([cmd] {
    stopped_by_signal([&] {
      show(*cmd);
      return true;
    });
  });

  CLI::App* solution = exercise->add_subcommand(
      "solution", "print a complete reference solution (> ringlab-exercises/NAME.cpp to use it)");
  add_name(*solution, *cmd);
  solution->callback([cmd] {
    const std::string_view text = ex::solution_file(ex::find_exercise(cmd->name));
    std::fwrite(text.data(), 1, text.size(), stdout);
  });
}

}  // namespace ringlab::cli
