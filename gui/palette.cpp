#include "gui/palette.hpp"

namespace ringlab::gui {

ImU32 rank_color(int rank) { return imgui_color(rank_rgb(rank)); }

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
