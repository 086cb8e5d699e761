// Colors and style shared by everything that draws. Rank colors are chosen to
// stay distinct from each other and from the dark background for up to 16
// ranks (the GUI's largest world).
#pragma once

#include "imgui.h"

namespace ringlab::gui {

struct Colors {
  ImVec4 background{0.09f, 0.10f, 0.12f, 1.0f};
  ImU32 panel = IM_COL32(34, 38, 46, 255);
  ImU32 panel_border = IM_COL32(90, 98, 112, 255);
  ImU32 panel_active = IM_COL32(255, 210, 90, 255);  // border of a rank that sends or receives
  ImU32 text = IM_COL32(235, 238, 242, 255);
  ImU32 dim_text = IM_COL32(160, 168, 180, 255);
  ImU32 missing = IM_COL32(58, 62, 70, 255);  // provenance slice of a rank not (yet) inside
  ImU32 cell_label = IM_COL32(16, 18, 22, 215);  // backing behind a cell's value
  ImU32 arrow = IM_COL32(255, 210, 90, 255);
  ImU32 arrow_label = IM_COL32(20, 22, 26, 235);
};
inline const Colors kColors{};

// Rank r's color (r >= 0; repeats after 16).
ImU32 rank_color(int rank);

// ImGui's dark style with larger spacing and this palette.
void apply_style();

}  // namespace ringlab::gui
