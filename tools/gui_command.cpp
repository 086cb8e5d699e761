// `ringlab gui [--scenario NAME] [--ranks P] [--step K] [--rank R]
//              [--screenshot FILE.png] [--width W] [--height H]`
// `ringlab gui --trace FILE [--walkthrough K|NAME] ...`
// Opens the walkthrough window; with --screenshot, renders that one frame to a
// PNG and exits (under `xvfb-run -a` where there is no display). With
// --trace, the window steps through a real run's collectives (the trace's
// walkthroughs, simulator/real_run.hpp), each an act, as it steps through a
// simulated one; changing a setting records the simulator's run for it, as
// always.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "gui/run.hpp"
#include "gui/state.hpp"
#include "gui/walkthrough.hpp"
#include "simulator/real_run.hpp"
#include "simulator/trace_folder.hpp"
#include "tools/commands.hpp"

namespace ringlab::gui {

namespace {

struct GuiCommand {
  std::string scenario = "ring_allreduce";
  int ranks = 0;   // 0: the scenario's default
  std::optional<DType> dtype;  // --dtype: the collectives' element type
  int step = 0;    // frame index: 0 is "before step 1"
  int rank = -1;   // the rank shown in detail (-1: the one the step follows)
  std::string trace;        // a real run's trace: its walkthroughs
  std::string walkthrough;  // with trace: only this one (number from 1, or name)
  std::string screenshot;
  int width = WindowOptions{}.width;
  int height = WindowOptions{}.height;
};

// Why the window cannot show one walkthrough of a real run ("" where it can).
std::string cannot_show(const sim::RealWalkthrough& w, const std::string& file) {
  const std::string which = "walkthrough '" + w.name + "' of " + file;
  if (!w.kept)
    return which + " was not kept in the trace (its limit, --trace-limit)";
  if (w.ranks < kMinRanks || w.ranks > kMaxRanks)
    return which + " has " + std::to_string(w.ranks) + " ranks; the window shows " +
           std::to_string(kMinRanks) + " to " + std::to_string(kMaxRanks) +
           ": `ringlab replay " + file + "` prints it";
  if (w.mark.count > static_cast<std::size_t>(kMaxElements))
    return which + " has " + std::to_string(w.mark.count) +
           " elements per rank; the window draws at most " + std::to_string(kMaxElements) +
           ": `ringlab replay " + file + "` prints it";
  return "";
}

Act real_act(const sim::RealWalkthrough& w) {
  Act act;
  act.title = w.name + ": " + std::string(collective_name(w.mark.collective)) + " (" +
              w.mark.algorithm + "), a real run";
  act.prediction = sim::predict(w.run, gui_cost_model());
  act.run = w.run;
  return act;
}

// A real run's walkthroughs (all, or the one --walkthrough names) as acts;
// the controls show the first one's settings.
GuiState real_run_state(const GuiCommand& cmd) {
  const auto all = sim::real_walkthroughs(sim::read_run_walkthroughs(cmd.trace));
  std::vector<Act> acts;
  const sim::RealWalkthrough* first = nullptr;
  std::string why;
  for (std::size_t i : sim::pick_walkthroughs(all, cmd.walkthrough, cmd.trace)) {
    why = cannot_show(all[i], cmd.trace);
    if (!why.empty() && !cmd.walkthrough.empty()) throw std::invalid_argument(why);
    if (!why.empty()) {
      std::fprintf(stderr, "ringlab gui: left out: %s\n", why.c_str());
      continue;
    }
    acts.push_back(real_act(all[i]));
    if (!first) first = &all[i];
  }
  if (!first)
    throw std::invalid_argument("no walkthrough of " + cmd.trace + " can be shown (" + why + ")");
  Settings settings;
  settings.primitive = std::string(collective_name(first->mark.collective));
  settings.algorithm = first->mark.algorithm;
  settings.ranks = first->ranks;
  settings.elements = static_cast<int>(std::max<std::size_t>(first->mark.count, 1));
  settings.op = first->mark.op;
  settings.root = first->mark.root;
  return make_state(settings, std::move(acts));
}

// A scenario's walkthrough, its collectives in --dtype where one is given.
GuiState scenario_state(const GuiCommand& cmd) {
  Settings settings = scenario_settings(cmd.scenario, cmd.ranks);
  if (cmd.dtype && (is_training_step(settings.primitive) || settings.primitive == kParameterServer))
    throw std::invalid_argument("--dtype: " + cmd.scenario +
                                " keeps its float32 (gradients, parameters); --dtype is for the "
                                "collectives' walkthroughs");
  settings.dtype = cmd.dtype;
  return make_state(settings);
}

void run_gui_command(const GuiCommand& cmd) {
  if (cmd.dtype && !cmd.trace.empty())
    throw std::invalid_argument("--dtype: a real run's walkthroughs (--trace) keep the dtype "
                                "they ran in");
  GuiState state = cmd.trace.empty() ? scenario_state(cmd) : real_run_state(cmd);
  const std::string shown = cmd.trace.empty() ? cmd.scenario : cmd.trace;
  if (cmd.step < 0 || cmd.step >= frame_count(state))
    throw std::invalid_argument("--step " + std::to_string(cmd.step) + " is not a frame of " +
                                shown + ": pick 0 (before step 1) to " +
                                std::to_string(frame_count(state) - 1));
  apply(state, JumpTo{cmd.step});
  if (cmd.rank >= state.settings.ranks)
    throw std::invalid_argument("--rank " + std::to_string(cmd.rank) + " is not a rank of " +
                                shown + "'s " + std::to_string(state.settings.ranks) +
                                "-rank world: pick 0 to " +
                                std::to_string(state.settings.ranks - 1));
  if (cmd.rank >= 0) apply(state, SelectRank{cmd.rank});
  WindowOptions options;
  options.width = cmd.width;
  options.height = cmd.height;
  options.title = "ringlab: " + shown;
  if (!cmd.screenshot.empty()) {
    run_screenshot(state, options, cmd.screenshot);
    std::printf("wrote %s (%dx%d, %s, frame %d of %d)\n", cmd.screenshot.c_str(), cmd.width,
                cmd.height, shown.c_str(), cmd.step,
                frame_count(state) - 1);
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
  auto* scenario = gui->add_option("--scenario", cmd->scenario, "what to walk through")
      ->check(CLI::IsMember(scenario_names()));
  auto* ranks = gui->add_option("--ranks,-n", cmd->ranks, "world size (default: the scenario's)")
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
  auto* trace = gui->add_option("--trace", cmd->trace,
                                 "a real run's trace (lesson/run --trace, RINGLAB_TRACE), or the "
                                 "folder of its rank files: step through its collectives "
                                 "(`ringlab replay FILE --list`)");
  gui->add_option("--walkthrough", cmd->walkthrough,
                  "with --trace: only this collective, its number (from 1) or its name")
      ->needs(trace);
  trace->excludes(scenario)->excludes(ranks);
  gui->add_option("--screenshot", cmd->screenshot, "render that frame to this PNG file and exit");
  gui->add_option("--width", cmd->width, "window width in pixels")->check(CLI::Range(320, 8192));
  gui->add_option("--height", cmd->height, "window height in pixels")->check(CLI::Range(240, 8192));
  gui->callback([cmd] { run_gui_command(*cmd); });
}

}  // namespace ringlab::gui
