// Layout at the default 1280x800 (everything scales with the window):
//   +----------------------------------------------------------+-----------+
//   | controls: primitive, algorithm, ranks, elements, op, root | cost      |
//   | |< < play > >|  speed   step slider                      | model,    |
//   | step k of N: the sentence                                 | bytes,    |
//   | rank panels on an ellipse, arrows for the step's messages | legend,   |
//   |                                                           | messages  |
//   | log of every step (click one to jump there)               |           |
//   +----------------------------------------------------------+-----------+
#include "gui/draw.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <string>

#include "gui/frame.hpp"
#include "gui/palette.hpp"
#include "imgui.h"
#include "primitives/collectives.hpp"

namespace ringlab::gui {

namespace {

constexpr float kSideWidth = 340.0f;
constexpr float kLogHeight = 150.0f;
constexpr float kPi = 3.14159265f;

std::string seconds_text(double seconds) {
  char text[32];
  if (seconds < 1e-3)
    std::snprintf(text, sizeof text, "%.2f us", seconds * 1e6);
  else if (seconds < 1.0)
    std::snprintf(text, sizeof text, "%.3f ms", seconds * 1e3);
  else
    std::snprintf(text, sizeof text, "%.3f s", seconds);
  return text;
}

ImVec2 operator+(ImVec2 a, ImVec2 b) { return {a.x + b.x, a.y + b.y}; }
ImVec2 operator-(ImVec2 a, ImVec2 b) { return {a.x - b.x, a.y - b.y}; }
ImVec2 operator*(ImVec2 a, float s) { return {a.x * s, a.y * s}; }

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
  const float width = 190.0f;
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
  if (ImGui::InputInt(settings.primitive == kParameterServer ? "keys/server" : "elements",
                      &elements) &&
      elements != settings.elements)
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

// Step controls: one row above the picture.
void draw_controls(const GuiState& state, std::vector<Command>& commands) {
  // Transport row.
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
  ImGui::SetNextItemWidth(150);
  if (ImGui::SliderFloat("steps/s", &speed, 0.25f, 8.0f, "%.2f"))
    commands.push_back(SetSpeed{speed});
  ImGui::SameLine();
  int cursor = state.cursor;
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x - 60);
  if (ImGui::SliderInt("frame", &cursor, 0, std::max(last, 0)) && cursor != state.cursor)
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

// ---- Rank panels and arrows ------------------------------------------------

struct PanelGeometry {
  ImVec2 min, max;
  ImVec2 center() const { return (min + max) * 0.5f; }
};

// Where the segment from the panel's center towards `toward` leaves it.
ImVec2 exit_point(const PanelGeometry& panel, ImVec2 toward) {
  const ImVec2 c = panel.center();
  const ImVec2 d = toward - c;
  const float half_w = (panel.max.x - panel.min.x) * 0.5f + 4.0f;
  const float half_h = (panel.max.y - panel.min.y) * 0.5f + 4.0f;
  const float tx = d.x != 0 ? half_w / std::fabs(d.x) : FLT_MAX;
  const float ty = d.y != 0 ? half_h / std::fabs(d.y) : FLT_MAX;
  return c + d * std::min({tx, ty, 1.0f});
}

// Wraps a printed line to `width` only between elements (after ", " or
// before "tensor("), never inside a number as ImGui's word wrap would
// ("102.\n5000"). PyTorch's own line breaks are joined first.
std::string wrap_between_elements(const std::string& text, ImFont* font, float size, float width) {
  std::string flat;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\n') {
      flat += text[i];
      continue;
    }
    while (i + 1 < text.size() && text[i + 1] == ' ') ++i;
    flat += ' ';
  }
  if (font->CalcTextSizeA(size, FLT_MAX, 0, flat.c_str()).x <= width) return flat;
  // "Rank 0 has data" / "tensor([16, 16, 12,  4])" reads better than a break
  // inside the tensor, when the tensor fits on its own line.
  const std::size_t tensor_at = flat.find(" tensor(");
  if (tensor_at != std::string::npos &&
      font->CalcTextSizeA(size, FLT_MAX, 0, flat.c_str() + tensor_at + 1).x <= width)
    return flat.substr(0, tensor_at) + "\n" + flat.substr(tensor_at + 1);
  std::vector<std::string> pieces;  // each ends where a break is allowed
  std::size_t begin = 0;
  for (std::size_t i = 0; i < flat.size(); ++i) {
    const bool after_comma = i > 0 && flat[i - 1] == ',' && flat[i] == ' ';
    const bool before_tensor = flat[i] == ' ' && flat.compare(i + 1, 7, "tensor(") == 0;
    if (after_comma || before_tensor) {
      pieces.push_back(flat.substr(begin, i - begin));
      begin = i + 1;
    }
  }
  pieces.push_back(flat.substr(begin));
  std::string out;
  std::string current;
  for (const std::string& piece : pieces) {
    const std::string candidate = current.empty() ? piece : current + " " + piece;
    if (!current.empty() && font->CalcTextSizeA(size, FLT_MAX, 0, candidate.c_str()).x > width) {
      out += current + "\n";
      current = piece;
    } else {
      current = candidate;
    }
  }
  return out + current;
}

// Draws one buffer's cells (striped by provenance) from `origin`, wrapping at
// `width`; returns the height used.
float draw_cells(ImDrawList* list, const BufferView& buffer, ImVec2 origin, float width,
                 float cell_w, float cell_h, bool draw) {
  const float gap = 3.0f;
  const int per_row = std::max(1, static_cast<int>((width + gap) / (cell_w + gap)));
  const int n = static_cast<int>(buffer.cells.size());
  const int rows = std::max(1, (n + per_row - 1) / per_row);
  if (!draw) return static_cast<float>(rows) * (cell_h + gap);
  ImFont* font = fonts().mono;
  const float font_size = std::min(font->FontSize, cell_h - 4.0f);
  for (int i = 0; i < n; ++i) {
    const ImVec2 a = origin + ImVec2(static_cast<float>(i % per_row) * (cell_w + gap),
                                     static_cast<float>(i / per_row) * (cell_h + gap));
    const ImVec2 b = a + ImVec2(cell_w, cell_h);
    const CellView& cell = buffer.cells[i];
    const std::vector<int> inside = cell.provenance.ranks();
    if (inside.empty()) {
      list->AddRectFilled(a, b, colors().missing, 3.0f);
    } else {
      const float stripe = cell_w / static_cast<float>(inside.size());
      for (std::size_t s = 0; s < inside.size(); ++s)
        list->AddRectFilled(a + ImVec2(stripe * static_cast<float>(s), 0),
                            ImVec2(a.x + stripe * static_cast<float>(s + 1), b.y),
                            rank_color(inside[s]));
    }
    if (buffer.scratch) list->AddRect(a, b, colors().dim_text, 3.0f, 0, 1.0f);
    const ImVec2 text_size = font->CalcTextSizeA(font_size, FLT_MAX, 0, cell.text.c_str());
    const ImVec2 text_pos = (a + b) * 0.5f - text_size * 0.5f;
    list->AddRectFilled(text_pos - ImVec2(3, 1), text_pos + text_size + ImVec2(3, 1),
                        colors().cell_label, 3.0f);
    list->AddText(font, font_size, text_pos, colors().text, cell.text.c_str());
  }
  return static_cast<float>(rows) * (cell_h + gap);
}

// Draws (or, with draw = false, measures) one rank's panel; returns its height.
float draw_panel(ImDrawList* list, const RankPanel& panel, ImVec2 origin, float width, bool draw,
                 float cell_w, float cell_h) {
  const float pad = 7.0f;
  ImFont* ui = fonts().ui;
  ImFont* mono = fonts().mono;
  const float inner = width - 2 * pad;
  float y = origin.y + pad;
  const float title_h = ui->FontSize;
  if (draw) {
    list->AddRectFilled(origin + ImVec2(pad, pad + 2), origin + ImVec2(pad + 12, pad + 14),
                        rank_color(panel.rank), 2.0f);
    std::string title = panel.role;
    if (panel.sends && panel.receives) title += "  (sends, receives)";
    else if (panel.sends) title += "  (sends)";
    else if (panel.receives) title += "  (receives)";
    list->AddText(ui, ui->FontSize, origin + ImVec2(pad + 18, pad), colors().text, title.c_str());
  }
  y += title_h + 4;
  // The article's line, wrapped.
  const float line_size = mono->FontSize * 0.9f;
  const std::string line = wrap_between_elements(panel.line, mono, line_size, inner);
  const ImVec2 line_extent = mono->CalcTextSizeA(line_size, FLT_MAX, 0, line.c_str());
  if (draw) list->AddText(mono, line_size, ImVec2(origin.x + pad, y), colors().text, line.c_str());
  y += line_extent.y + 5;
  for (const BufferView& buffer : panel.buffers) {
    if (!buffer.primary) {
      const std::string label = buffer.label + (buffer.changed ? "  (written now)" : "") + ": " +
                                (buffer.scratch ? std::string() : buffer.printed);
      const std::string wrapped = wrap_between_elements(label, mono, line_size * 0.92f, inner);
      const ImVec2 extent = mono->CalcTextSizeA(line_size * 0.92f, FLT_MAX, 0, wrapped.c_str());
      if (draw)
        list->AddText(mono, line_size * 0.92f, ImVec2(origin.x + pad, y), colors().dim_text,
                      wrapped.c_str());
      y += extent.y + 2;
    }
    y += draw_cells(list, buffer, ImVec2(origin.x + pad, y), inner, cell_w, cell_h, draw);
  }
  return y + pad - 3 - origin.y;
}

void draw_arrow(ImDrawList* list, ImVec2 from, ImVec2 to, ImU32 color, float thickness) {
  const ImVec2 d = to - from;
  const float length = std::sqrt(d.x * d.x + d.y * d.y);
  if (length < 1.0f) return;
  const ImVec2 unit = d * (1.0f / length);
  const ImVec2 normal(-unit.y, unit.x);
  const float head = 13.0f;
  const ImVec2 base = to - unit * head;
  list->AddLine(from, base, color, thickness);
  list->AddTriangleFilled(to, base + normal * (head * 0.45f), base - normal * (head * 0.45f),
                          color);
}

void draw_ranks(const FrameView& view, ImVec2 area_min, ImVec2 area_size) {
  ImDrawList* list = ImGui::GetWindowDrawList();
  const int p = static_cast<int>(view.ranks.size());
  if (p == 0) return;
  // The parameter server is drawn as it is usually pictured: servers in a
  // row on top, workers in a row below. Collectives: an ellipse (rank 0 at
  // the top, clockwise, as rings are drawn), or a grid when panels would
  // overlap there.
  int servers = 0;
  for (const RankPanel& panel : view.ranks) servers += panel.role.rfind("server", 0) == 0 ? 1 : 0;
  const bool server_rows = servers > 0 && servers < p;
  const int widest_row = server_rows ? std::max(servers, p - servers) : 0;
  const float width =
      server_rows ? std::clamp(area_size.x / static_cast<float>(widest_row) - 24.0f, 150.0f, 340.0f)
                  : std::clamp(area_size.x / (p <= 4 ? 3.6f : p <= 8 ? 4.2f : 5.6f), 150.0f, 280.0f);
  std::size_t most_cells = 1;
  for (const RankPanel& panel : view.ranks)
    for (const BufferView& buffer : panel.buffers) most_cells = std::max(most_cells, buffer.cells.size());
  const float cell_h = p <= 8 ? 30.0f : 24.0f;
  // Cells wide enough for the widest value ("102.5"), wrapping into rows.
  float widest_text = 0;
  for (const RankPanel& panel : view.ranks)
    for (const BufferView& buffer : panel.buffers)
      for (const CellView& cell : buffer.cells)
        widest_text = std::max(
            widest_text,
            fonts().mono->CalcTextSizeA(std::min(fonts().mono->FontSize, cell_h - 4.0f), FLT_MAX, 0,
                                        cell.text.c_str()).x);
  const float cell_w = std::clamp(std::max((width - 14.0f) / static_cast<float>(most_cells) - 3.0f,
                                           widest_text + 12.0f),
                                  p <= 8 ? 40.0f : 30.0f, 96.0f);
  std::vector<PanelGeometry> panels(static_cast<std::size_t>(p));
  std::vector<float> heights;
  float tallest = 0;
  for (const RankPanel& panel : view.ranks) {
    heights.push_back(draw_panel(list, panel, {}, width, false, cell_w, cell_h));
    tallest = std::max(tallest, heights.back());
  }
  const ImVec2 center = area_min + area_size * 0.5f;
  auto place = [&](int r, ImVec2 c) {
    panels[r] = {c - ImVec2(width * 0.5f, heights[r] * 0.5f),
                 c + ImVec2(width * 0.5f, heights[r] * 0.5f)};
  };
  auto overlapping = [&] {
    for (int a = 0; a < p; ++a)
      for (int b = a + 1; b < p; ++b)
        if (panels[a].min.x < panels[b].max.x + 6 && panels[b].min.x < panels[a].max.x + 6 &&
            panels[a].min.y < panels[b].max.y + 6 && panels[b].min.y < panels[a].max.y + 6)
          return true;
    return false;
  };
  if (server_rows) {
    for (int r = 0; r < p; ++r) {
      const bool server = r < servers;
      const int index = server ? r : r - servers;
      const int in_row = server ? servers : p - servers;
      const float x = area_min.x + area_size.x * (static_cast<float>(index) + 0.5f) /
                                       static_cast<float>(in_row);
      const float y = server ? area_min.y + heights[r] * 0.5f + 4.0f
                             : area_min.y + area_size.y - heights[r] * 0.5f - 4.0f;
      place(r, ImVec2(x, y));
    }
  } else {
    const float radius_x = std::max(0.0f, area_size.x * 0.5f - width * 0.5f - 4.0f);
    const float radius_y = std::max(0.0f, area_size.y * 0.5f - tallest * 0.5f - 4.0f);
    for (int r = 0; r < p; ++r) {
      const float angle = -kPi / 2 + 2 * kPi * static_cast<float>(r) / static_cast<float>(p);
      place(r, center + ImVec2(radius_x * std::cos(angle), radius_y * std::sin(angle)));
    }
    if (overlapping()) {
      const int columns = std::max(1, std::min(p, static_cast<int>(area_size.x / (width + 24.0f))));
      const int rows = (p + columns - 1) / columns;
      for (int r = 0; r < p; ++r)
        place(r, area_min + ImVec2(area_size.x * (static_cast<float>(r % columns) + 0.5f) /
                                       static_cast<float>(columns),
                                   area_size.y * (static_cast<float>(r / columns) + 0.5f) /
                                       static_cast<float>(rows)));
    }
  }
  // Arrows under the panels' text but above the background: draw them first
  // as lines, then panels, then labels on top so they stay readable.
  struct Placed {
    ImVec2 from, to;
    const ArrowView* arrow;
  };
  std::vector<Placed> placed;
  for (const ArrowView& arrow : view.arrows) {
    const PanelGeometry& a = panels[arrow.src];
    const PanelGeometry& b = panels[arrow.dst];
    // Two messages between the same pair in opposite directions: offset
    // both sideways so they do not overlap.
    const ImVec2 d = b.center() - a.center();
    const float length = std::max(1.0f, std::sqrt(d.x * d.x + d.y * d.y));
    const ImVec2 side = ImVec2(-d.y, d.x) * (9.0f / length);
    const ImVec2 from = exit_point(a, b.center()) + side;
    const ImVec2 to = exit_point(b, a.center()) + side;
    placed.push_back({from, to, &arrow});
  }
  for (int r = 0; r < p; ++r) {
    const RankPanel& panel = view.ranks[r];
    const bool active = panel.sends || panel.receives;
    list->AddRectFilled(panels[r].min, panels[r].max, colors().panel, 6.0f);
    list->AddRect(panels[r].min, panels[r].max, active ? colors().panel_active : colors().panel_border,
                  6.0f, 0, active ? 2.5f : 1.0f);
    draw_panel(list, panel, panels[r].min, width, true, cell_w, cell_h);
  }
  for (const Placed& arrow : placed) draw_arrow(list, arrow.from, arrow.to, colors().arrow, 3.0f);
  ImFont* ui = fonts().ui;
  const float label_size = ui->FontSize * (view.arrows.size() > 8 ? 0.8f : 0.95f);
  for (const Placed& arrow : placed) {
    const std::string text = arrow.arrow->label + (arrow.arrow->reduced ? " +" : "");
    const ImVec2 size = ui->CalcTextSizeA(label_size, FLT_MAX, 0, text.c_str());
    // Beside the arrow, away from the ring's center, so the line stays visible.
    const ImVec2 middle = (arrow.from + arrow.to) * 0.5f;
    ImVec2 outward = middle - center;
    const float distance = std::max(1.0f, std::sqrt(outward.x * outward.x + outward.y * outward.y));
    outward = outward * (1.0f / distance);
    const ImVec2 mid = middle + ImVec2(outward.x * (size.x * 0.5f + 8.0f),
                                       outward.y * (size.y * 0.5f + 8.0f)) -
                       size * 0.5f;
    list->AddRectFilled(mid - ImVec2(4, 2), mid + size + ImVec2(4, 2), colors().arrow_label, 4.0f);
    list->AddRect(mid - ImVec2(4, 2), mid + size + ImVec2(4, 2), colors().arrow, 4.0f);
    list->AddText(ui, label_size, mid, colors().arrow, text.c_str());
  }
}

// ---- Side panel and log -----------------------------------------------------

void draw_side(const GuiState& state, const FrameView& view, int ranks,
               std::vector<Command>& commands) {
  const CostView& cost = view.cost;
  ImGui::PushFont(fonts().heading);
  ImGui::TextUnformatted("Walkthrough");
  ImGui::PopFont();
  draw_settings(state, commands);
  ImGui::Separator();
  const sim::CostModel model = gui_cost_model();
  ImGui::PushFont(fonts().heading);
  ImGui::TextUnformatted("Cost model");
  ImGui::PopFont();
  ImGui::TextDisabled("alpha %s per message, %.1f GB/s links", seconds_text(model.alpha_s).c_str(),
                      model.bandwidth_Bps / 1e9);
  if (cost.has_step) {
    ImGui::Text("this step:   %s", seconds_text(cost.step_seconds).c_str());
    ImGui::Text("so far:      %s", seconds_text(cost.elapsed_seconds).c_str());
  } else {
    ImGui::Text("this step:   (nothing sent yet)");
  }
  ImGui::Text("total:       %s", seconds_text(cost.total_seconds).c_str());
  if (!cost.bottleneck.empty()) ImGui::TextWrapped("bottleneck: %s", cost.bottleneck.c_str());
  ImGui::Text("size %zu B   algbw %.4f GB/s", cost.size_bytes, cost.algbw_GBps);
  ImGui::Text("busbw %.4f GB/s", cost.busbw_GBps);
  ImGui::Spacing();
  ImGui::TextUnformatted("bytes sent       this step   in total");
  ImGui::BeginChild("bytes", ImVec2(0, std::min(22.0f * static_cast<float>(ranks) + 4, 190.0f)));
  for (int r = 0; r < ranks; ++r) {
    ImGui::ColorButton("##rank", ImGui::ColorConvertU32ToFloat4(rank_color(r)),
                       ImGuiColorEditFlags_NoTooltip, ImVec2(12, 12));
    ImGui::SameLine();
    ImGui::Text("%-12s %8zu %10zu", view.ranks[r].role.c_str(), cost.step_bytes_sent[r],
                r < static_cast<int>(cost.total_bytes_sent.size()) ? cost.total_bytes_sent[r] : 0);
  }
  ImGui::EndChild();
  ImGui::Separator();
  ImGui::PushFont(fonts().heading);
  ImGui::TextUnformatted("Legend");
  ImGui::PopFont();
  ImGui::TextWrapped("Each cell is striped with the colors of the ranks whose inputs it contains:");
  ImDrawList* list = ImGui::GetWindowDrawList();
  // Roles ("worker 0") take a line each; plain ranks five to a line.
  const bool plain = view.ranks.empty() || view.ranks.front().role.rfind("rank", 0) == 0;
  const int per_row = plain ? 5 : 2;
  for (int r = 0; r < ranks; ++r) {
    if (r % per_row != 0) ImGui::SameLine();
    const ImVec2 at = ImGui::GetCursorScreenPos();
    list->AddRectFilled(at + ImVec2(0, 2), at + ImVec2(16, 16), rank_color(r), 2.0f);
    ImGui::Dummy(ImVec2(18, 16));
    ImGui::SameLine(0, 2);
    const std::string& role = view.ranks[r].role;
    if (role.rfind("rank", 0) == 0)
      ImGui::Text("r%-2d", r);
    else
      ImGui::Text("r%d %s", r, role.c_str());
  }
  {
    const ImVec2 at = ImGui::GetCursorScreenPos();
    list->AddRectFilled(at + ImVec2(0, 2), at + ImVec2(16, 16), colors().missing, 2.0f);
    ImGui::Dummy(ImVec2(18, 16));
    ImGui::SameLine(0, 4);
    ImGui::TextUnformatted("no input yet (empty / scratch)");
  }
  ImGui::TextWrapped("Arrows: this step's messages, labelled with the chunk and whose inputs it "
                     "carries; \"+\": the receiver reduces it into its own.");
  ImGui::Separator();
  ImGui::PushFont(fonts().heading);
  ImGui::TextUnformatted("Messages in this step");
  ImGui::PopFont();
  ImGui::BeginChild("messages", ImVec2(0, 0));
  if (view.message_lines.empty()) ImGui::TextDisabled("none");
  for (const std::string& line : view.message_lines) ImGui::TextWrapped("%s", line.c_str());
  ImGui::EndChild();
}

void draw_log(const GuiState& state, std::vector<Command>& commands) {
  ImGui::BeginChild("log", ImVec2(0, 0), true);
  const auto& sentences = state.recording.sentences;
  for (std::size_t i = 0; i < sentences.size(); ++i) {
    const bool current = static_cast<int>(i) == state.cursor;
    ImGui::PushID(static_cast<int>(i));
    if (ImGui::Selectable(sentences[i].c_str(), current)) commands.push_back(JumpTo{static_cast<int>(i)});
    if (current && ImGui::IsWindowAppearing()) ImGui::SetScrollHereY();
    ImGui::PopID();
  }
  // Keep the current step in view while stepping or playing.
  static int last_cursor = -1;
  if (last_cursor != state.cursor) {
    const float line = ImGui::GetTextLineHeightWithSpacing();
    ImGui::SetScrollY(std::max(0.0f, line * static_cast<float>(state.cursor) -
                                         ImGui::GetWindowHeight() * 0.4f));
    last_cursor = state.cursor;
  }
  ImGui::EndChild();
}

}  // namespace

std::vector<Command> draw_frame(const GuiState& state) {
  std::vector<Command> commands;
  const FrameView view = build_frame(state);
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  const ImGuiWindowFlags fixed = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                 ImGuiWindowFlags_NoSavedSettings |
                                 ImGuiWindowFlags_NoBringToFrontOnFocus;
  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(ImVec2(display.x - kSideWidth, display.y));
  ImGui::Begin("ringlab", nullptr, fixed);
  draw_controls(state, commands);
  ImGui::Separator();
  ImGui::PushFont(fonts().heading);
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(colors().arrow), "%s", view.act_title.c_str());
  ImGui::PopFont();
  ImGui::TextWrapped("%s", view.sentence.c_str());
  if (!view.values_note.empty()) ImGui::TextDisabled("(%s)", view.values_note.c_str());
  const ImVec2 area_min = ImGui::GetCursorScreenPos();
  const ImVec2 area_size(ImGui::GetContentRegionAvail().x,
                         ImGui::GetContentRegionAvail().y - kLogHeight - 8);
  ImGui::Dummy(area_size);
  draw_ranks(view, area_min, area_size);
  draw_log(state, commands);
  ImGui::End();

  ImGui::SetNextWindowPos(ImVec2(display.x - kSideWidth, 0));
  ImGui::SetNextWindowSize(ImVec2(kSideWidth, display.y));
  ImGui::Begin("side", nullptr, fixed);
  draw_side(state, view, static_cast<int>(view.ranks.size()), commands);
  ImGui::End();
  return commands;
}

}  // namespace ringlab::gui
