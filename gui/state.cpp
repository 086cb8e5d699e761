#include "gui/state.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "gui/frame.hpp"
#include "gui/training_walk.hpp"

namespace ringlab::gui {

Recording record(const Settings& settings) { return record(record_acts(settings)); }

Recording record(std::vector<Act> acts) {
  Recording recording;
  recording.acts = std::move(acts);
  for (std::size_t a = 0; a < recording.acts.size(); ++a) {
    const sim::Run& run = recording.acts[a].run;
    // A training step's frames are its ticks (training_walk.hpp).
    const sim::Step last =
        recording.acts[a].training
            ? static_cast<sim::Step>(recording.acts[a].training->ticks.size() - 1)
            : run.steps;
    recording.frames.push_back({static_cast<int>(a), 0});
    for (sim::Step k = 1; k <= last; ++k) recording.frames.push_back({static_cast<int>(a), k});
  }
  for (const FrameRef& frame : recording.frames)
    recording.sentences.push_back(frame_sentence(recording, frame));
  return recording;
}

GuiState make_state(const Settings& settings) {
  GuiState state;
  state.settings = settings;
  state.recording = record(settings);
  return state;
}

GuiState make_state(const Settings& settings, std::vector<Act> acts) {
  GuiState state;
  state.settings = settings;
  state.recording = record(std::move(acts));
  return state;
}

GuiState make_state(const std::string& scenario, int ranks) {
  return make_state(scenario_settings(scenario, ranks));
}

const FrameRef& current_frame(const GuiState& state) {
  return state.recording.frames.at(static_cast<std::size_t>(state.cursor));
}

int frame_count(const GuiState& state) {
  return static_cast<int>(state.recording.frames.size());
}

namespace {

void move_cursor(GuiState& state, int frame) {
  state.cursor = std::clamp(frame, 0, frame_count(state) - 1);
}

// Re-records with new settings; on failure keeps the old run and says why.
void change_settings(GuiState& state, const Settings& settings) {
  try {
    Recording recording = record(settings);
    const int old_cursor = state.cursor;
    state.settings = settings;
    state.recording = std::move(recording);
    ++state.revision;
    move_cursor(state, old_cursor);
    if (state.selected_rank >= settings.ranks) state.selected_rank = -1;
  } catch (const std::exception& e) {
    state.error = e.what();
    state.playing = false;
  }
}

// Playback: as many steps as `seconds` holds at the chosen speed, stopping at the last frame.
void tick(GuiState& state, float seconds, int last) {
  if (!state.playing) return;
  state.seconds_since_step += seconds;
  const float period = 1.0f / state.steps_per_second;
  while (state.seconds_since_step >= period && state.playing) {
    state.seconds_since_step -= period;
    move_cursor(state, state.cursor + 1);
    if (state.cursor == last) state.playing = false;
  }
}

void select_rank(GuiState& state, int rank) {
  if (rank < -1 || rank >= state.settings.ranks)
    state.error = "rank " + std::to_string(rank) + " is not a rank of this " +
                  std::to_string(state.settings.ranks) + "-rank world: pick 0 to " +
                  std::to_string(state.settings.ranks - 1);
  else
    state.selected_rank = rank;
}

}  // namespace

void apply(GuiState& state, const Command& command) {
  if (!std::holds_alternative<Tick>(command) && !std::holds_alternative<LogScrolled>(command))
    state.error.clear();
  const int last = frame_count(state) - 1;
  std::visit(
      [&](const auto& c) {
        using C = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<C, StepForward>) {
          move_cursor(state, state.cursor + 1);
        } else if constexpr (std::is_same_v<C, StepBack>) {
          move_cursor(state, state.cursor - 1);
        } else if constexpr (std::is_same_v<C, JumpToStart>) {
          move_cursor(state, 0);
        } else if constexpr (std::is_same_v<C, JumpToEnd>) {
          move_cursor(state, last);
        } else if constexpr (std::is_same_v<C, JumpTo>) {
          move_cursor(state, c.frame);
        } else if constexpr (std::is_same_v<C, TogglePlay>) {
          state.playing = !state.playing;
          state.seconds_since_step = 0;
          // Play from the start when already at the end.
          if (state.playing && state.cursor == last) state.cursor = 0;
        } else if constexpr (std::is_same_v<C, SetSpeed>) {
          state.steps_per_second = std::clamp(c.steps_per_second, 0.1f, 20.0f);
        } else if constexpr (std::is_same_v<C, Tick>) {
          tick(state, c.seconds, last);
        } else if constexpr (std::is_same_v<C, SetPrimitive>) {
          Settings settings = primitive_defaults(c.primitive);
          // Keep the world size the learner chose, where the primitive allows it.
          settings.ranks = state.settings.ranks;
          if (c.primitive == kParameterServer) settings.ranks = std::max(settings.ranks, 3);
          change_settings(state, settings);
        } else if constexpr (std::is_same_v<C, SetAlgorithm>) {
          Settings settings = state.settings;
          settings.algorithm = c.algorithm;
          change_settings(state, settings);
        } else if constexpr (std::is_same_v<C, SetRanks>) {
          Settings settings = state.settings;
          settings.ranks = c.ranks;
          if (settings.root >= settings.ranks) settings.root = -1;
          change_settings(state, settings);
        } else if constexpr (std::is_same_v<C, SetElements>) {
          Settings settings = state.settings;
          settings.elements = c.elements;
          change_settings(state, settings);
        } else if constexpr (std::is_same_v<C, SetOp>) {
          Settings settings = state.settings;
          settings.op = c.op;
          change_settings(state, settings);
        } else if constexpr (std::is_same_v<C, SetDType>) {
          Settings settings = state.settings;
          settings.dtype = c.dtype;
          change_settings(state, settings);
        } else if constexpr (std::is_same_v<C, SetRoot>) {
          Settings settings = state.settings;
          settings.root = c.root;
          change_settings(state, settings);
        } else if constexpr (std::is_same_v<C, SelectRank>) {
          select_rank(state, c.rank);
        } else if constexpr (std::is_same_v<C, LogScrolled>) {
          state.log_scrolled_to = c.frame;
        } else if constexpr (std::is_same_v<C, LoadScenario>) {
          try {
            change_settings(state, scenario_settings(c.name, c.ranks));
          } catch (const std::exception& e) {
            state.error = e.what();
          }
        }
      },
      command);
}

}  // namespace ringlab::gui
