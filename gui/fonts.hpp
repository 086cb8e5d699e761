// The fonts the window draws with, loaded into Dear ImGui's atlas, and their
// metrics as plain numbers for the layout (layout.hpp). Needs only Dear
// ImGui (no window), so tests load the very same fonts.
#pragma once

#include "gui/font_metrics.hpp"

struct ImFont;
struct ImGuiIO;

namespace ringlab::gui {

struct Fonts {
  ImFont* ui = nullptr;
  ImFont* mono = nullptr;  // tensors, as the articles print them
  ImFont* heading = nullptr;
  float scale = 1.0f;  // drawn at the font's size times this
};

// Adds DejaVu Sans and Sans Mono (fonts-dejavu-core) to io.Fonts, or ImGui's
// built-in font scaled up where they are missing.
Fonts load_fonts(ImGuiIO& io);

// The metrics of the loaded fonts; the atlas must be built (the renderer
// builds it on its first frame; tests call io.Fonts->Build()).
LayoutFonts layout_fonts(const Fonts& fonts);

}  // namespace ringlab::gui
