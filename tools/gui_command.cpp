// `ringlab gui [--scenario NAME] [--ranks P] [--step K] [--rank R]
//              [--screenshot FILE.png] [--width W] [--height H]`
// Opens the walkthrough window; with --screenshot, renders that one frame to a
// PNG and exits (under `xvfb-run -a` where there is no display).
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "gui/run.hpp"
#include "gui/state.hpp"
#include "gui/walkthrough.hpp"
#include "tools/commands.hpp"

namespace ringlab::gui {

namespace {

struct GuiCommand {
  std::string scenario = "ring_allreduce";
  int ranks = 0;   // 0: the scenario's default
  std::optional<DType> dtype;  // --dtype: the collectives' element type
  int step = 0;    // frame index: 0 is "before step 1"
  int rank = -1;   // the rank shown in detail (-1: the one the step follows)
  std::string screenshot;
  int width = WindowOptions{}.width;
  int height = WindowOptions{}.height;
};

void run_gui_command(const GuiCommand& cmd) {
  Settings settings = scenario_settings(cmd.scenario, cmd.ranks);
  if (cmd.dtype && (is_training_step(settings.primitive) || settings.primitive == kParameterServer))
    throw std::invalid_argument("--dtype: " + cmd.scenario +
                                " keeps its float32 (gradients, parameters); --dtype is for the "
                                "collectives' walkthroughs");
  settings.dtype = cmd.dtype;
  GuiState state = make_state(settings);
  if (cmd.step < 0 || cmd.step >= frame_count(state))
    throw std::invalid_argument("--step " + std::to_string(cmd.step) + " is not a frame of " +
                                cmd.scenario + ": pick 0 (before step 1) to " +
                                std::to_string(frame_count(state) - 1));
  apply(state, JumpTo{cmd.step});
  if (cmd.rank >= state.settings.ranks)
    throw std::invalid_argument("--rank " + std::to_string(cmd.rank) + " is not a rank of " +
                                cmd.scenario + "'s " + std::to_string(state.settings.ranks) +
                                "-rank world: pick 0 to " +
                                std::to_string(state.settings.ranks - 1));
  if (cmd.rank >= 0) apply(state, SelectRank{cmd.rank});
  WindowOptions options;
  options.width = cmd.width;
  options.height = cmd.height;
  options.title = "ringlab: " + cmd.scenario;
  if (!cmd.screenshot.empty()) {
    run_screenshot(state, options, cmd.screenshot);
    std::printf("wrote %s (%dx%d, %s, frame %d of %d)\n", cmd.screenshot.c_str(), cmd.width,
                cmd.height, cmd.scenario.c_str(), cmd.step, frame_count(state) - 1);
    return;
  }
  run_interactive(state, options);
}

}  // namespace

void add_gui_command(CLI::App& app) {
  auto cmd = std::make_shared<GuiCommand>();
  CLI::App* gui = app.add_subcommand(
      "gui",
      "step through a collective, the parameter server or a DDP / Horovod training step, every "
      "rank's buffers on screen");
  gui->add_option("--scenario", cmd->scenario, "what to walk through")
      ->check(CLI::IsMember(scenario_names()));
  gui->add_option("--ranks,-n", cmd->ranks, "world size (default: the scenario's)")
      ->check(CLI::Range(kMinRanks, kMaxRanks));
  gui->add_option_function<std::string>(
         "--dtype", [cmd](const std::string& name) { cmd->dtype = parse_dtype(name); },
         "the collectives' element type (default: the articles' int64; float32 for avg): " +
             dtype_choices())
      ->type_name("DTYPE");
  gui->add_option("--step", cmd->step, "frame to show first (0: before step 1)")
      ->check(cli::whole_number(0, cli::kMaxInt, "a step number"));
  gui->add_option("--rank", cmd->rank,
                  "rank to show in detail where the ranks are too many to show whole (default: "
                  "the one the step follows; in the window: click a rank, or [ and ])")
      ->check(cli::whole_number(0, kMaxRanks - 1, "a rank"));
  gui->add_option("--screenshot", cmd->screenshot, "render that frame to this PNG file and exit");
  gui->add_option("--width", cmd->width, "window width in pixels")->check(CLI::Range(320, 8192));
  gui->add_option("--height", cmd->height, "window height in pixels")->check(CLI::Range(240, 8192));
  gui->callback([cmd] { run_gui_command(*cmd); });
}

}  // namespace ringlab::gui
