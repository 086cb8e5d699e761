// The GLFW + OpenGL 3 + Dear ImGui platform layer: opens a window (or a
// hidden one with an offscreen target for screenshots) and calls a frame
// function between ImGui::NewFrame() and ImGui::Render(). It knows nothing of
// what is drawn.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>

#include "gui/fonts.hpp"

namespace ringlab::gui {

struct WindowOptions {
  int width = 1280;  // the "readable at 1280x800"
  int height = 800;
  std::string title = "ringlab";
};

// Called once per frame with the seconds since the previous frame and the
// fonts the window loaded.
using FrameFn = std::function<void(float seconds, const Fonts& fonts)>;

// Thrown when there is no display, GLFW cannot start, or OpenGL 3 is missing;
// what() says which and what to do.
struct WindowError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Empty when DISPLAY or WAYLAND_DISPLAY is set; otherwise why a window cannot
// open here (and what to run instead).
std::string missing_display_reason();

// Runs frames until the window is closed.
void run_window(const WindowOptions& options, const FrameFn& frame);

// Draws `frames` frames (ImGui lays windows out over the first few) into an
// offscreen target of options.width x options.height and writes the last one
// as a PNG to png_path.
void render_png(const WindowOptions& options, const FrameFn& frame, const std::string& png_path,
                int frames = 4);

}  // namespace ringlab::gui
