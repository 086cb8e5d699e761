// One frame of the GUI, Dear ImGui style: reads the state, draws it, and
// returns what the learner asked for (button presses, keys) as commands for
// the caller to apply. It changes nothing itself.
#pragma once

#include <vector>

#include "gui/fonts.hpp"
#include "gui/state.hpp"

namespace ringlab::gui {

std::vector<Command> draw_frame(const GuiState& state, const Fonts& fonts);

}  // namespace ringlab::gui
