// The GUI's state: the settings, the recorded run and the cursor, in one
// plain struct that only apply(Command) changes. Frames read it and draw; the
// headless tests drive it with the same commands the buttons send.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "gui/walkthrough.hpp"

namespace ringlab::gui {

// One position of the cursor: act `act` before anything ran (step 0) or after
// its step `step` (1..steps).
struct FrameRef {
  int act = 0;
  sim::Step step = 0;
  bool operator==(const FrameRef&) const = default;
};

struct Recording {
  std::vector<Act> acts;
  std::vector<FrameRef> frames;       // every cursor position, in order
  std::vector<std::string> sentences;  // per frame: what happens (the log)
};

struct GuiState {
  Settings settings;
  Recording recording;
  int cursor = 0;                 // index into recording.frames
  bool playing = false;
  float steps_per_second = 1.0f;  // play speed
  float seconds_since_step = 0;   // play: time accumulated towards the next step
  std::string error;              // why the last settings change was refused
  int log_scrolled_to = -1;       // the frame the step log last scrolled to show
  int revision = 0;               // counts the recordings: a new one, a new number
  // The rank the canvas shows in detail where the ranks are too many to show
  // whole (layout.hpp); -1 follows the step (the rank its sentence speaks of).
  int selected_rank = -1;
};

// ---- Commands (what the controls send).
struct StepForward {};
struct StepBack {};
struct JumpToStart {};
struct JumpToEnd {};
struct JumpTo { int frame = 0; };
struct TogglePlay {};
struct SetSpeed { float steps_per_second = 1.0f; };
struct Tick { float seconds = 0; };  // time passed; advances while playing
struct SetPrimitive { std::string primitive; };  // also resets to its defaults
struct SetAlgorithm { std::string algorithm; };
struct SetRanks { int ranks = 4; };
struct SetElements { int elements = 2; };
struct SetOp { ReduceOp op = ReduceOp::SUM; };
struct SetRoot { int root = -1; };
struct SetDType { DType dtype = DType::Int64; };
struct LoadScenario { std::string name; int ranks = 0; };  // 0: its default
// Picks the rank shown in detail (-1: follow the step again).
struct SelectRank {
  int rank = -1;
};
// The step log scrolled to show this frame (it follows the cursor once per move).
struct LogScrolled {
  int frame = 0;
};

using Command = std::variant<StepForward, StepBack, JumpToStart, JumpToEnd, JumpTo, TogglePlay,
                             SetSpeed, Tick, SetPrimitive, SetAlgorithm, SetRanks, SetElements,
                             SetOp, SetRoot, SetDType, LoadScenario, SelectRank, LogScrolled>;

// A state with the settings recorded (throws std::invalid_argument for
// settings that cannot run).
GuiState make_state(const Settings& settings);
GuiState make_state(const std::string& scenario, int ranks = 0);
// A state showing acts recorded elsewhere (`ringlab exercise show`: the
// learner's own algorithm); the settings only fill the controls, and changing
// one records ringlab's own run for it, as always.
GuiState make_state(const Settings& settings, std::vector<Act> acts);

// Applies one command. Settings that cannot run leave the recording as it was
// and set state.error; the learner's next command clears it (the passing of
// time and the log's scrolling do not). The cursor keeps its
// step number when the run changes, clamped to the new run, and the picked
// rank where the new world still has it.
void apply(GuiState& state, const Command& command);

// Convenience for tests and the frame: the frame under the cursor.
const FrameRef& current_frame(const GuiState& state);
int frame_count(const GuiState& state);

// Records the acts of these settings and everything the log shows.
Recording record(const Settings& settings);
// The frames and the log of acts already recorded.
Recording record(std::vector<Act> acts);

}  // namespace ringlab::gui
