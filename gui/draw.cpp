// Layout at the default 1280x800 (window_layout() scales the fixed parts):
//   +----------------------------------------------------------+-----------+
//   | |< < play > >|  speed   frame slider                       | settings, |
//   | title; step k of N: the sentence                          | cost      |
//   | the canvas: rank boxes, arrows for the step's messages    | model,    |
//   |   (layout_ranks computes it, paint_ranks paints it)       | messages, |
//   |                                                           | bytes,    |
//   | log of every step (click one to jump there)               | legend    |
//   +----------------------------------------------------------+-----------+
#include "gui/draw.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "gui/draw_side.hpp"
#include "gui/frame.hpp"
#include "gui/layout.hpp"
#include "gui/paint.hpp"
#include "gui/palette.hpp"
#include "imgui.h"

namespace ringlab::gui {

namespace {

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

// Picking the rank the canvas shows in detail: a click on its box (or chip),
// '[' and ']' for the one before and after, Escape to follow the step again.
void pick_rank(const GuiState& state, const FrameView& view, const RanksLayout& layout,
               ImVec2 canvas_min, std::vector<Command>& commands) {
  const ImGuiIO& io = ImGui::GetIO();
  if (ImGui::IsMouseClicked(ImGuiMouseButton_Left) && ImGui::IsWindowHovered()) {
    const int rank = rank_at(layout, {io.MousePos.x - canvas_min.x, io.MousePos.y - canvas_min.y});
    if (rank >= 0) commands.push_back(SelectRank{rank});
  }
  if (io.WantTextInput) return;
  const int ranks = static_cast<int>(view.ranks.size());
  int focus = focus_rank(view, state.selected_rank);
  for (ImWchar c : io.InputQueueCharacters) {
    if (ranks == 0 || (c != '[' && c != ']')) continue;
    focus = (focus + (c == ']' ? 1 : ranks - 1)) % ranks;
    commands.push_back(SelectRank{focus});
  }
  if (state.selected_rank >= 0 && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false))
    commands.push_back(SelectRank{-1});
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

std::vector<Command> draw_frame(const GuiState& state, const Fonts& fonts, FrameCache& cache) {
  std::vector<Command> commands;
  if (cache.revision != state.revision || cache.cursor != state.cursor) {
    cache.view = build_frame(state);
    cache.canvas = {-1, -1};  // lay it out again
    cache.revision = state.revision;
    cache.cursor = state.cursor;
  }
  if (cache.selected_rank != state.selected_rank) {
    cache.canvas = {-1, -1};
    cache.selected_rank = state.selected_rank;
  }
  const FrameView& view = cache.view;
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
  if (!(cache.canvas == Vec2{canvas_size.x, canvas_size.y})) {
    cache.layout = layout_ranks(view, {canvas_size.x, canvas_size.y}, layout_fonts(fonts),
                                state.selected_rank);
    cache.canvas = {canvas_size.x, canvas_size.y};
  }
  cache.canvas_min = {canvas_min.x, canvas_min.y};
  paint_ranks(ImGui::GetWindowDrawList(), cache.layout, canvas_min, fonts);
  pick_rank(state, view, cache.layout, canvas_min, commands);
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
