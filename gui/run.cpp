#include "gui/run.hpp"

#include "gui/draw.hpp"

namespace ringlab::gui {

void run_interactive(GuiState& state, const WindowOptions& options) {
  FrameCache cache;
  run_window(options, [&state, &cache](float seconds, const Fonts& fonts) {
    apply(state, Tick{seconds});
    for (const Command& command : draw_frame(state, fonts, cache)) apply(state, command);
  });
}

void run_screenshot(const GuiState& state, const WindowOptions& options, const std::string& png_path) {
  // The commands a screenshot frame returns are dropped: nothing clicks.
  FrameCache cache;
  render_png(
      options,
      [&state, &cache](float, const Fonts& fonts) { (void)draw_frame(state, fonts, cache); },
      png_path);
}

}  // namespace ringlab::gui
