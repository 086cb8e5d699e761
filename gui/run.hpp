// Ties the state to the window: each frame applies the time that passed and
// the commands the drawing returned.
#pragma once

#include <string>

#include "gui/state.hpp"
#include "gui/window.hpp"

namespace ringlab::gui {

// Until the window closes. Throws WindowError when none can open.
void run_interactive(GuiState& state, const WindowOptions& options);

// Renders the state's current frame to a PNG (no interaction).
void run_screenshot(const GuiState& state, const WindowOptions& options, const std::string& png_path);

}  // namespace ringlab::gui
