// Colors and style shared by everything that draws. The ranks' colors and
// the ones they are drawn on are rank_colors.hpp's.
#pragma once

#include "gui/rank_colors.hpp"
#include "imgui.h"

namespace ringlab::gui {

constexpr ImU32 imgui_color(Rgb rgb, int alpha = 255) {
  return IM_COL32(rgb.r, rgb.g, rgb.b, alpha);
}

struct Colors {
  ImVec4 background{0.09f, 0.10f, 0.12f, 1.0f};
  ImU32 panel = imgui_color(kPanelRgb);
  ImU32 panel_border = IM_COL32(90, 98, 112, 255);
  ImU32 panel_active = IM_COL32(255, 210, 90, 255);  // border of a rank that sends or receives
  ImU32 text = imgui_color(kTextRgb);
  ImU32 dim_text = IM_COL32(160, 168, 180, 255);
  ImU32 missing = imgui_color(kMissingRgb);  // provenance slice of a rank not (yet) inside
  ImU32 cell_label = imgui_color(kCellLabelRgb, 215);  // backing behind a cell's value, ranks
  ImU32 arrow = imgui_color(kArrowRgb);
  ImU32 faint_arrow = imgui_color(kArrowRgb, 110);  // one of many crossing messages
  ImU32 lost_arrow = imgui_color(kLostRgb);  // a failed run's message that never arrived
  ImU32 arrow_label = IM_COL32(20, 22, 26, 235);
};
inline const Colors kColors{};

// Rank r's color (r >= 0; repeats after 16).
ImU32 rank_color(int rank);

// ImGui's dark style with larger spacing and this palette.
void apply_style();

}  // namespace ringlab::gui
