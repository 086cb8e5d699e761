// One frame of the GUI, Dear ImGui style: reads the state, draws it, and
// returns what the learner asked for (button presses, keys) as commands for
// the caller to apply. It changes nothing itself.
#pragma once

#include <vector>

#include "gui/fonts.hpp"
#include "gui/frame.hpp"
#include "gui/layout.hpp"
#include "gui/state.hpp"

namespace ringlab::gui {

// The frame and its layout as last drawn: rebuilt only when the recording,
// the cursor, the picked rank or the canvas changes (a ring of 16 ranks takes tens of
// milliseconds to lay out, too long for every frame of the window).
struct FrameCache {
  int revision = -1;
  int cursor = -1;
  int selected_rank = -2;
  Vec2 canvas{-1, -1};
  Vec2 canvas_min;  // where the canvas was drawn, in screen pixels
  FrameView view;
  RanksLayout layout;
};

std::vector<Command> draw_frame(const GuiState& state, const Fonts& fonts, FrameCache& cache);

}  // namespace ringlab::gui
