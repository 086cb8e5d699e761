// The GUI's entry point for other commands (`ringlab start` opens it when a
// display is present). Always declared and linked (target ringlab_gui); when
// ringlab was built without Dear ImGui/GLFW/OpenGL, try_open() says so.
#pragma once

#include <string>

namespace ringlab::gui {

struct OpenOptions {
  std::string scenario = "ring_allreduce";  // a walkthrough name (see walkthrough.hpp)
  int ranks = 4;
  int step = 0;
};

// Whether this build has the GUI at all.
bool built_with_gui();

// Opens the GUI window and returns true once the user has closed it. Returns
// false without opening anything, and sets `reason` (one sentence saying what
// was missing and what to do), when no window can open here: no DISPLAY or
// WAYLAND_DISPLAY, GLFW or OpenGL failed to start, or built without the GUI.
// Other errors (a bad scenario name) throw std::invalid_argument.
bool try_open(std::string& reason, const OpenOptions& options = {});

}  // namespace ringlab::gui
