#include "gui/draw_side.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "gui/palette.hpp"
#include "gui/side_panel.hpp"
#include "imgui.h"

namespace ringlab::gui {

namespace {

void heading(const Fonts& fonts, const char* text) {
  ImGui::PushFont(fonts.heading);
  ImGui::TextUnformatted(text);
  ImGui::PopFont();
}

// ---- Settings ---------------------------------------------------------------

void primitive_and_algorithm(const Settings& settings, float width,
                             std::vector<Command>& commands) {
  ImGui::SetNextItemWidth(width);
  if (ImGui::BeginCombo("primitive", settings.primitive.c_str())) {
    for (const std::string& name : primitive_names())
      if (ImGui::Selectable(name.c_str(), name == settings.primitive))
        commands.push_back(SetPrimitive{name});
    ImGui::EndCombo();
  }
  const std::vector<std::string> algorithms = algorithm_names(settings.primitive);
  const std::string current =
      settings.algorithm.empty() && !algorithms.empty() ? algorithms.front() : settings.algorithm;
  ImGui::SetNextItemWidth(width);
  if (ImGui::BeginCombo("algorithm", current.c_str())) {
    for (const std::string& name : algorithms)
      if (ImGui::Selectable(name.c_str(), name == current)) commands.push_back(SetAlgorithm{name});
    ImGui::EndCombo();
  }
}

// The settings, one per line, at the top of the side panel: only those that
// mean something for the primitive (controls_for).
void draw_settings(const GuiState& state, std::vector<Command>& commands) {
  const Settings& settings = state.settings;
  const Controls controls = controls_for(settings);
  // Controls as wide as the panel leaves beside the longest label.
  const float width =
      std::max(110.0f, ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize("keys/server").x -
                           ImGui::GetStyle().ItemInnerSpacing.x - 4.0f);
  primitive_and_algorithm(settings, width, commands);
  int ranks = settings.ranks;
  ImGui::SetNextItemWidth(width);
  if (ImGui::SliderInt("ranks", &ranks, kMinRanks, kMaxRanks) && ranks != settings.ranks)
    commands.push_back(SetRanks{ranks});
  if (!controls.size_label.empty()) {
    int elements = settings.elements;
    ImGui::SetNextItemWidth(width);
    if (ImGui::InputInt(controls.size_label.c_str(), &elements) && elements != settings.elements)
      commands.push_back(SetElements{std::clamp(elements, 1, kMaxElements)});
  }
  if (controls.op) {
    ImGui::SetNextItemWidth(width);
    if (ImGui::BeginCombo("op", std::string(op_name(settings.op)).c_str())) {
      for (ReduceOp op : kAllReduceOps)
        if (ImGui::Selectable(std::string(op_name(op)).c_str(), op == settings.op))
          commands.push_back(SetOp{op});
      ImGui::EndCombo();
    }
  }
  if (controls.op) {  // the collectives: their element type
    const DType dtype = collective_dtype(settings);
    ImGui::SetNextItemWidth(width);
    if (ImGui::BeginCombo("dtype", std::string(dtype_name(dtype)).c_str())) {
      for (DType d : kAllDTypes)
        if (ImGui::Selectable(std::string(dtype_name(d)).c_str(), d == dtype))
          commands.push_back(SetDType{d});
      ImGui::EndCombo();
    }
  }
  if (controls.root) {
    int root = effective_root(settings);
    ImGui::SetNextItemWidth(width);
    if (ImGui::InputInt("root", &root) && root != effective_root(settings))
      commands.push_back(SetRoot{std::clamp(root, 0, settings.ranks - 1)});
  }
  if (!state.error.empty())
    ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1.0f), "refused: %s", state.error.c_str());
}

// ---- Cost -------------------------------------------------------------------

void draw_cost(const FrameView& view, const Fonts& fonts) {
  heading(fonts, "Cost model");
  const std::vector<std::string> lines = cost_lines(view);
  ImGui::PushTextWrapPos(0.0f);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i == 0)
      ImGui::TextDisabled("%s", lines[i].c_str());  // the model's constants
    else
      ImGui::TextUnformatted(lines[i].c_str());
  }
  ImGui::PopTextWrapPos();
  if (view.training) {
    // The real lesson of bucketing: how much of the communication the
    // backward pass hides.
    ImGui::Separator();
    heading(fonts, "Hidden behind backward");
    for (const std::string& line : view.overlap_lines) ImGui::TextWrapped("%s", line.c_str());
  }
}

// A square of a rank's color at the cursor, then the text beside it.
void swatch(ImU32 color) {
  const ImVec2 at = ImGui::GetCursorScreenPos();
  const float line = ImGui::GetTextLineHeight();
  ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(at.x, at.y + line * 0.15f),
                                            ImVec2(at.x + line * 0.8f, at.y + line * 0.95f), color,
                                            2.0f);
  ImGui::Dummy(ImVec2(line * 0.8f, line));
  ImGui::SameLine(0, 5);
}

// ---- Messages and bytes -----------------------------------------------------

// The step's messages, then the bytes each rank sent, in `height` pixels:
// each scrolls on its own when it holds more than its share.
void draw_traffic(const FrameView& view, float height, const Fonts& fonts) {
  const ImGuiStyle& style = ImGui::GetStyle();
  const float row = ImGui::GetTextLineHeightWithSpacing();
  const int ranks = static_cast<int>(view.ranks.size());
  heading(fonts, "Messages in this step");
  const float room = std::max(0.0f, height - ImGui::GetItemRectSize().y - 2 * style.ItemSpacing.y);
  // What each wants: every message line, the table's header and a row per
  // rank. The table gets at most 60% of the room; the messages what is left,
  // no more than they need.
  float messages_need = ImGui::GetTextLineHeightWithSpacing();  // "none"
  if (!view.message_lines.empty()) messages_need = 0;
  for (const std::string& line : view.message_lines)
    messages_need += ImGui::CalcTextSize(line.c_str(), nullptr, false,
                                         ImGui::GetContentRegionAvail().x - style.ScrollbarSize)
                         .y +
                     style.ItemSpacing.y;
  const float table_need = row * static_cast<float>(ranks + 1) + 2 * style.CellPadding.y + 2;
  const float table_h =
      std::clamp(std::min(table_need, std::max(room * 0.6f, room - messages_need)),
                 std::min(2 * row, room), room);
  // (A child of height 0 would take all the height left: 1 at least.)
  ImGui::BeginChild("messages", ImVec2(0, std::max(1.0f, std::min(messages_need, room - table_h))),
                    false);
  if (view.message_lines.empty()) ImGui::TextDisabled("none");
  for (const std::string& line : view.message_lines) ImGui::TextWrapped("%s", line.c_str());
  ImGui::EndChild();
  const CostView& cost = view.cost;
  if (!ImGui::BeginTable("bytes", 4, ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingStretchProp,
                         ImVec2(0, std::max(1.0f, table_h))))
    return;
  ImGui::TableSetupScrollFreeze(0, 1);
  const float weights[4] = {1.6f, 1.0f, 1.0f, 1.0f};
  for (int c = 0; c < 4; ++c)
    ImGui::TableSetupColumn(kBytesColumns[c], ImGuiTableColumnFlags_WidthStretch, weights[c]);
  ImGui::TableHeadersRow();
  auto at = [](const std::vector<std::size_t>& per_rank, int r) {
    return r < static_cast<int>(per_rank.size()) ? per_rank[static_cast<std::size_t>(r)]
                                                 : std::size_t{0};
  };
  for (int r = 0; r < ranks; ++r) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    swatch(rank_color(r));
    ImGui::TextUnformatted(view.ranks[static_cast<std::size_t>(r)].role.c_str());
    for (const std::vector<std::size_t>* column :
         {&cost.step_bytes_sent, &cost.bytes_sent_so_far, &cost.total_bytes_sent}) {
      ImGui::TableNextColumn();
      ImGui::Text("%zu", at(*column, r));
    }
  }
  ImGui::EndTable();
}

// ---- Legend -----------------------------------------------------------------

const char* legend_intro(const FrameView& view) {
  return view.training ? "Cells: colors and labels name whose batches made them."
                       : "Cells: colors and labels name whose inputs they hold.";
}
const char* legend_missing(const FrameView& view) {
  return view.training ? "no batch in it (parameters, empty slots)"
                       : "no input yet (empty / scratch)";
}
constexpr const char* kLegendArrows =
    "Arrows: this step's messages; \"+\": the receiver reduces it into its own.";
// Where the step has a message that never arrived (a real run that failed).
constexpr const char* kLegendLost = "Dashed, red, with a cross: it never arrived (the run failed).";
bool has_lost(const FrameView& view) {
  return std::any_of(view.arrows.begin(), view.arrows.end(),
                     [](const ArrowView& arrow) { return arrow.lost; });
}

// The rank entries in equal columns, as many as fit the width.
struct LegendGrid {
  float entry_width = 0;
  int columns = 1;
  int rows = 0;
};
LegendGrid legend_grid(const FrameView& view, float width) {
  LegendGrid grid;
  const float swatch_w = ImGui::GetTextLineHeight() * 0.8f + 5;
  for (const std::string& entry : view.legend)
    grid.entry_width = std::max(grid.entry_width, swatch_w + ImGui::CalcTextSize(entry.c_str()).x);
  const float gap = ImGui::GetStyle().ItemSpacing.x * 2;
  grid.columns = std::max(1, static_cast<int>((width + gap) / (grid.entry_width + gap)));
  const int n = static_cast<int>(view.legend.size());
  grid.rows = (n + grid.columns - 1) / grid.columns;
  return grid;
}

// The legend's height at `width`: its heading, two wrapped texts and a line
// of entries per grid row plus the "missing" one, each with item spacing.
float legend_height(const FrameView& view, float width, const Fonts& fonts) {
  const float spacing = ImGui::GetStyle().ItemSpacing.y;
  auto wrapped = [&](const char* text) {
    return ImGui::CalcTextSize(text, nullptr, false, width).y + spacing;
  };
  const float line = ImGui::GetTextLineHeight() + spacing;
  const float heading_h = fonts.heading->FontSize * fonts.scale + spacing;
  return heading_h + wrapped(legend_intro(view)) +
         line * static_cast<float>(legend_grid(view, width).rows + 1) + wrapped(kLegendArrows) +
         (has_lost(view) ? wrapped(kLegendLost) : 0.0f);
}

void draw_legend(const FrameView& view, const Fonts& fonts) {
  heading(fonts, "Legend");
  ImGui::TextWrapped("%s", legend_intro(view));
  const LegendGrid grid = legend_grid(view, ImGui::GetContentRegionAvail().x);
  const float left = ImGui::GetCursorPosX();
  const float gap = ImGui::GetStyle().ItemSpacing.x * 2;
  for (std::size_t r = 0; r < view.legend.size(); ++r) {
    const int column = static_cast<int>(r) % grid.columns;
    if (column > 0) ImGui::SameLine(left + static_cast<float>(column) * (grid.entry_width + gap));
    swatch(rank_color(static_cast<int>(r)));
    ImGui::TextUnformatted(view.legend[r].c_str());
  }
  swatch(kColors.missing);
  ImGui::TextUnformatted(legend_missing(view));
  ImGui::TextWrapped("%s", kLegendArrows);
  if (has_lost(view)) ImGui::TextWrapped("%s", kLegendLost);
}

}  // namespace

void draw_side(const GuiState& state, const FrameView& view, std::vector<Command>& commands,
               const Fonts& fonts) {
  heading(fonts, "Walkthrough");
  draw_settings(state, commands);
  ImGui::Separator();
  draw_cost(view, fonts);
  ImGui::Separator();
  // The legend goes to the bottom, whole; the messages and the bytes table
  // take the height between.
  const float width = ImGui::GetContentRegionAvail().x;
  const float legend_h = std::ceil(legend_height(view, width, fonts)) + 4;
  const float spacing = ImGui::GetStyle().ItemSpacing.y;
  const float traffic_h = ImGui::GetContentRegionAvail().y - legend_h - 2 * spacing;
  // Its heading, a message, the table's header and a rank, at least.
  const float least = 4 * ImGui::GetTextLineHeightWithSpacing() + 4;
  ImGui::BeginChild("traffic", ImVec2(0, std::max(traffic_h, least)), false,
                    ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  draw_traffic(view, std::max(traffic_h, least), fonts);
  ImGui::EndChild();
  ImGui::Separator();
  ImGui::BeginChild("legend", ImVec2(0, legend_h), false,
                    ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  draw_legend(view, fonts);
  ImGui::EndChild();
}

}  // namespace ringlab::gui
