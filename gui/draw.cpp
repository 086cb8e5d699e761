// Layout at the default 1280x800 (window_layout() scales the fixed parts):
//   +----------------------------------------------------------+-----------+
//   | |< < play > >|  speed   frame slider                       | settings, |
//   | title; step k of N: the sentence                          | cost      |
//   | the canvas: rank boxes, arrows for the step's messages    | model,    |
//   |   (layout_ranks computes it, paint_ranks paints it)       | bytes,    |
//   |                                                           | legend,   |
//   | log of every step (click one to jump there)               | messages  |
//   +----------------------------------------------------------+-----------+
#include "gui/draw.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "gui/frame.hpp"
#include "gui/frame_words.hpp"
#include "gui/layout.hpp"
#include "gui/paint.hpp"
#include "gui/palette.hpp"
#include "imgui.h"
#include "primitives/collectives.hpp"

namespace ringlab::gui {

namespace {

// ---- Controls -------------------------------------------------------------

bool is_rooted(const std::string& primitive) {
  const CollectiveInfo* collective = find_collective(primitive);
  return (collective && collective->rooted) || primitive == kScatterGather;
}
bool is_reducing(const std::string& primitive) {
  const CollectiveInfo* collective = find_collective(primitive);
  return collective && collective->reduces;
}

// The settings, one per line, at the top of the side panel.
void draw_settings(const GuiState& state, std::vector<Command>& commands) {
  const Settings& settings = state.settings;
  // Controls as wide as the panel leaves beside the longest label.
  const float width =
      std::max(110.0f, ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize("keys/server").x -
                           ImGui::GetStyle().ItemInnerSpacing.x - 4.0f);
  ImGui::SetNextItemWidth(width);
  if (ImGui::BeginCombo("primitive", settings.primitive.c_str())) {
    for (const std::string& name : primitive_names())
      if (ImGui::Selectable(name.c_str(), name == settings.primitive))
        commands.push_back(SetPrimitive{name});
    ImGui::EndCombo();
  }
  const std::vector<std::string> algorithms = algorithm_names(settings.primitive);
  const std::string current_algorithm =
      settings.algorithm.empty() && !algorithms.empty() ? algorithms.front() : settings.algorithm;
  ImGui::SetNextItemWidth(width);
  if (ImGui::BeginCombo("algorithm", current_algorithm.c_str())) {
    for (const std::string& name : algorithms)
      if (ImGui::Selectable(name.c_str(), name == current_algorithm))
        commands.push_back(SetAlgorithm{name});
    ImGui::EndCombo();
  }
  int ranks = settings.ranks;
  ImGui::SetNextItemWidth(width);
  if (ImGui::SliderInt("ranks", &ranks, kMinRanks, kMaxRanks) && ranks != settings.ranks)
    commands.push_back(SetRanks{ranks});
  int elements = settings.elements;
  ImGui::SetNextItemWidth(width);
  const char* elements_label = settings.primitive == kParameterServer ? "keys/server"
                               : settings.primitive == kDdpStep       ? "bucket cap"
                               : settings.primitive == kHorovodStep   ? "threshold"
                                                                      : "elements";
  if (ImGui::InputInt(elements_label, &elements) && elements != settings.elements)
    commands.push_back(SetElements{std::clamp(elements, 1, kMaxElements)});
  if (is_reducing(settings.primitive)) {
    ImGui::SetNextItemWidth(width);
    if (ImGui::BeginCombo("op", std::string(op_name(settings.op)).c_str())) {
      for (ReduceOp op : kAllReduceOps)
        if (ImGui::Selectable(std::string(op_name(op)).c_str(), op == settings.op))
          commands.push_back(SetOp{op});
      ImGui::EndCombo();
    }
  }
  if (is_rooted(settings.primitive)) {
    int root = effective_root(settings);
    ImGui::SetNextItemWidth(width);
    if (ImGui::InputInt("root", &root) && root != effective_root(settings))
      commands.push_back(SetRoot{std::clamp(root, 0, settings.ranks - 1)});
  }
  if (!state.error.empty())
    ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1.0f), "refused: %s", state.error.c_str());
}

// Step controls: one row above the picture (two where the window is narrow).
void draw_controls(const GuiState& state, std::vector<Command>& commands) {
  const int last = frame_count(state) - 1;
  if (ImGui::Button("|< start")) commands.push_back(JumpToStart{});
  ImGui::SameLine();
  if (ImGui::Button("< back")) commands.push_back(StepBack{});
  ImGui::SameLine();
  if (ImGui::Button(state.playing ? "pause" : "play", ImVec2(70, 0)))
    commands.push_back(TogglePlay{});
  ImGui::SameLine();
  if (ImGui::Button("forward >")) commands.push_back(StepForward{});
  ImGui::SameLine();
  if (ImGui::Button("end >|")) commands.push_back(JumpToEnd{});
  ImGui::SameLine();
  float speed = state.steps_per_second;
  ImGui::SetNextItemWidth(130);
  if (ImGui::SliderFloat("##speed", &speed, 0.25f, 8.0f, "%.2f steps/s"))
    commands.push_back(SetSpeed{speed});
  // The frame slider wants room to be dragged: on a line of its own when the
  // window is narrow.
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  if (right - ImGui::GetItemRectMax().x > 150) ImGui::SameLine();
  int cursor = state.cursor;
  const std::string format = "frame %d of " + std::to_string(std::max(last, 0));
  ImGui::SetNextItemWidth(-1);
  if (ImGui::SliderInt("##frame", &cursor, 0, std::max(last, 0), format.c_str()) &&
      cursor != state.cursor)
    commands.push_back(JumpTo{cursor});

  // Keyboard: arrows step, space plays, Home/End jump (not while typing).
  if (!ImGui::GetIO().WantTextInput) {
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_RightArrow))) commands.push_back(StepForward{});
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_LeftArrow))) commands.push_back(StepBack{});
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Space), false)) commands.push_back(TogglePlay{});
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Home), false)) commands.push_back(JumpToStart{});
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_End), false)) commands.push_back(JumpToEnd{});
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

// ---- Side panel and log -----------------------------------------------------

void draw_side(const GuiState& state, const FrameView& view, std::vector<Command>& commands,
               const Fonts& fonts) {
  const CostView& cost = view.cost;
  const int ranks = static_cast<int>(view.ranks.size());
  ImGui::PushFont(fonts.heading);
  ImGui::TextUnformatted("Walkthrough");
  ImGui::PopFont();
  draw_settings(state, commands);
  ImGui::Separator();
  const sim::CostModel model = gui_cost_model();
  ImGui::PushFont(fonts.heading);
  ImGui::TextUnformatted("Cost model");
  ImGui::PopFont();
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextDisabled("alpha %s per message, %.1f GB/s links", seconds_text(model.alpha_s).c_str(),
                      model.bandwidth_Bps / 1e9);
  ImGui::PopTextWrapPos();
  if (cost.has_step) {
    ImGui::Text("this step:   %s", seconds_text(cost.step_seconds).c_str());
    ImGui::Text("so far:      %s", seconds_text(cost.elapsed_seconds).c_str());
  } else if (view.training) {
    // A compute step: the communication so far stays on the clock.
    ImGui::Text("this step:   (no messages)");
    if (cost.elapsed_seconds > 0)
      ImGui::Text("so far:      %s", seconds_text(cost.elapsed_seconds).c_str());
  } else {
    ImGui::Text("this step:   (nothing sent yet)");
  }
  ImGui::Text("total:       %s", seconds_text(cost.total_seconds).c_str());
  if (!cost.bottleneck.empty()) ImGui::TextWrapped("bottleneck: %s", cost.bottleneck.c_str());
  if (view.training) {
    // The real lesson of bucketing: how much of the communication the
    // backward pass hides.
    ImGui::Separator();
    ImGui::PushFont(fonts.heading);
    ImGui::TextUnformatted("Hidden behind backward");
    ImGui::PopFont();
    for (const std::string& line : view.overlap_lines) ImGui::TextWrapped("%s", line.c_str());
  } else {
    ImGui::Text("size %zu B   algbw %.4f GB/s", cost.size_bytes, cost.algbw_GBps);
    ImGui::Text("busbw %.4f GB/s", cost.busbw_GBps);
  }
  // What changes from step to step comes before what does not (the legend):
  // the side panel scrolls when the window is short.
  ImGui::Separator();
  ImGui::PushFont(fonts.heading);
  ImGui::TextUnformatted("Messages in this step");
  ImGui::PopFont();
  if (view.message_lines.empty()) ImGui::TextDisabled("none");
  for (const std::string& line : view.message_lines) ImGui::TextWrapped("%s", line.c_str());
  ImGui::Spacing();
  const float row = ImGui::GetTextLineHeightWithSpacing();
  if (ImGui::BeginTable("bytes", 3, ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingStretchProp,
                        ImVec2(0, std::min(row * static_cast<float>(ranks + 1) + 6, 8 * row)))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("bytes sent", ImGuiTableColumnFlags_WidthStretch, 1.6f);
    ImGui::TableSetupColumn("this step", ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableSetupColumn("in total", ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableHeadersRow();
    for (int r = 0; r < ranks; ++r) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      swatch(rank_color(r));
      ImGui::TextUnformatted(view.ranks[r].role.c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%zu", cost.step_bytes_sent[r]);
      ImGui::TableNextColumn();
      ImGui::Text("%zu", r < static_cast<int>(cost.total_bytes_sent.size())
                             ? cost.total_bytes_sent[r]
                             : std::size_t{0});
    }
    ImGui::EndTable();
  }
  ImGui::Separator();
  ImGui::PushFont(fonts.heading);
  ImGui::TextUnformatted("Legend");
  ImGui::PopFont();
  ImGui::TextWrapped(view.training ? "Each cell is striped with the colors of the ranks whose "
                                     "batches it was computed from:"
                                   : "Each cell is striped with the colors of the ranks whose "
                                     "inputs it contains:");
  // As many entries to a line as fit.
  const float right = ImGui::GetCursorScreenPos().x + ImGui::GetContentRegionAvail().x;
  const float spacing = ImGui::GetStyle().ItemSpacing.x;
  for (int r = 0; r < ranks; ++r) {
    const std::string& entry = view.legend[static_cast<std::size_t>(r)];
    const float entry_w =
        ImGui::GetTextLineHeight() * 0.8f + 5 + ImGui::CalcTextSize(entry.c_str()).x;
    if (r > 0) {
      ImGui::SameLine(0, spacing * 2);
      if (ImGui::GetCursorScreenPos().x + entry_w > right) ImGui::NewLine();
    }
    swatch(rank_color(r));
    ImGui::TextUnformatted(entry.c_str());
  }
  swatch(kColors.missing);
  ImGui::TextUnformatted(view.training ? "no batch in it (parameters, empty slots)"
                                       : "no input yet (empty / scratch)");
  ImGui::TextWrapped(
      "Arrows: this step's messages, labelled with the chunk and whose inputs it "
      "carries; \"+\": the receiver reduces it into its own.");
}

void draw_log(const GuiState& state, std::vector<Command>& commands) {
  ImGui::BeginChild("log", ImVec2(0, 0), true);
  const auto& sentences = state.recording.sentences;
  for (std::size_t i = 0; i < sentences.size(); ++i) {
    const bool current = static_cast<int>(i) == state.cursor;
    ImGui::PushID(static_cast<int>(i));
    if (ImGui::Selectable(sentences[i].c_str(), current))
      commands.push_back(JumpTo{static_cast<int>(i)});
    ImGui::PopID();
  }
  // Keep the current step in view once after each move (stepping, playing,
  // a click), and leave the learner's own scrolling alone otherwise.
  if (state.log_scrolled_to != state.cursor) {
    const float line = ImGui::GetTextLineHeightWithSpacing();
    ImGui::SetScrollY(std::max(0.0f, line * static_cast<float>(state.cursor) -
                                         ImGui::GetWindowHeight() * 0.4f));
    commands.push_back(LogScrolled{state.cursor});
  }
  ImGui::EndChild();
}

}  // namespace

std::vector<Command> draw_frame(const GuiState& state, const Fonts& fonts) {
  std::vector<Command> commands;
  const FrameView view = build_frame(state);
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  const WindowLayout window = window_layout({display.x, display.y});
  const ImGuiWindowFlags fixed = ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoResize |
                                 ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoCollapse |
                                 ImGuiWindowFlags_NoSavedSettings |
                                 ImGuiWindowFlags_NoBringToFrontOnFocus;
  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(ImVec2(display.x - window.side_width, display.y));
  // The main window never scrolls: the canvas takes what the rest leaves.
  ImGui::Begin("ringlab", nullptr,
               fixed | ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  draw_controls(state, commands);
  ImGui::Separator();
  ImGui::PushFont(fonts.heading);
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kColors.arrow), "%s", view.act_title.c_str());
  ImGui::PopFont();
  ImGui::TextWrapped("%s", view.sentence.c_str());
  if (!view.values_note.empty()) ImGui::TextDisabled("(%s)", view.values_note.c_str());
  const ImVec2 canvas_min = ImGui::GetCursorScreenPos();
  const ImVec2 canvas_size(ImGui::GetContentRegionAvail().x,
                           std::max(80.0f, ImGui::GetContentRegionAvail().y - window.log_height -
                                               ImGui::GetStyle().ItemSpacing.y));
  ImGui::Dummy(canvas_size);
  const RanksLayout layout =
      layout_ranks(view, {canvas_size.x, canvas_size.y}, layout_fonts(fonts));
  paint_ranks(ImGui::GetWindowDrawList(), layout, canvas_min, fonts);
  draw_log(state, commands);
  ImGui::End();

  ImGui::SetNextWindowPos(ImVec2(display.x - window.side_width, 0));
  ImGui::SetNextWindowSize(ImVec2(window.side_width, display.y));
  ImGui::Begin("side", nullptr, fixed);
  draw_side(state, view, commands, fonts);
  ImGui::End();
  return commands;
}

}  // namespace ringlab::gui
