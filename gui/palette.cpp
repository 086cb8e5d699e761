#include "gui/palette.hpp"

namespace ringlab::gui {

namespace {

// Kelly-style maximally distinct hues, bright enough for a dark background.
constexpr ImU32 kRankColors[16] = {
    IM_COL32(86, 180, 233, 255),  IM_COL32(230, 159, 0, 255),   IM_COL32(0, 190, 140, 255),
    IM_COL32(235, 95, 135, 255),  IM_COL32(170, 130, 240, 255), IM_COL32(240, 228, 66, 255),
    IM_COL32(213, 94, 0, 255),    IM_COL32(120, 200, 80, 255),  IM_COL32(0, 114, 178, 255),
    IM_COL32(255, 150, 200, 255), IM_COL32(150, 110, 70, 255),  IM_COL32(100, 230, 230, 255),
    IM_COL32(200, 60, 200, 255),  IM_COL32(190, 190, 190, 255), IM_COL32(255, 120, 90, 255),
    IM_COL32(90, 140, 255, 255)};

}  // namespace

ImU32 rank_color(int rank) { return kRankColors[rank % 16]; }

void apply_style() {
  ImGui::StyleColorsDark();
  ImGuiStyle& style = ImGui::GetStyle();
  style.WindowPadding = ImVec2(10, 8);
  style.FramePadding = ImVec2(8, 4);
  style.ItemSpacing = ImVec2(8, 6);
  style.WindowRounding = 4.0f;
  style.FrameRounding = 3.0f;
  style.WindowBorderSize = 1.0f;
  style.Colors[ImGuiCol_WindowBg] = kColors.background;
  style.Colors[ImGuiCol_Text] = ImGui::ColorConvertU32ToFloat4(kColors.text);
  style.Colors[ImGuiCol_TextDisabled] = ImGui::ColorConvertU32ToFloat4(kColors.dim_text);
}

}  // namespace ringlab::gui
