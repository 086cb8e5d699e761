#include "gui/fonts.hpp"

#include <filesystem>

#include "imgui.h"

namespace ringlab::gui {

namespace {

FontMetrics metrics_of(const ImFont& font, float scale) {
  FontMetrics metrics;
  metrics.size = font.FontSize * scale;
  metrics.advance.reserve(static_cast<std::size_t>(font.IndexAdvanceX.Size));
  for (float advance : font.IndexAdvanceX) metrics.advance.push_back(advance * scale);
  metrics.fallback = font.FallbackAdvanceX * scale;
  return metrics;
}

}  // namespace

// DejaVu (on nearly every Debian desktop) is far more readable at 1280x800
// than ImGui's built-in 13-pixel bitmap font.
Fonts load_fonts(ImGuiIO& io) {
  const char* sans = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
  const char* mono = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf";
  Fonts loaded;
  if (std::filesystem::exists(sans) && std::filesystem::exists(mono)) {
    loaded.ui = io.Fonts->AddFontFromFileTTF(sans, 17.0f);
    loaded.mono = io.Fonts->AddFontFromFileTTF(mono, 17.0f);
    loaded.heading = io.Fonts->AddFontFromFileTTF(sans, 21.0f);
  }
  if (loaded.ui == nullptr || loaded.mono == nullptr || loaded.heading == nullptr) {
    ImFontConfig config;
    config.SizePixels = 13.0f;
    loaded.ui = loaded.mono = loaded.heading = io.Fonts->AddFontDefault(&config);
    loaded.scale = 1.3f;
    io.FontGlobalScale = loaded.scale;
  }
  return loaded;
}

LayoutFonts layout_fonts(const Fonts& fonts) {
  return {metrics_of(*fonts.ui, fonts.scale), metrics_of(*fonts.mono, fonts.scale)};
}

}  // namespace ringlab::gui
