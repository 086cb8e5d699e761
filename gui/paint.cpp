#include "gui/paint.hpp"

#include <cmath>

#include "gui/palette.hpp"

namespace ringlab::gui {

namespace {

struct Painter {
  ImDrawList* list;
  ImVec2 origin;
  const Fonts& fonts;

  ImVec2 at(Vec2 point) const { return {origin.x + point.x, origin.y + point.y}; }

  void text(const TextItem& item) const {
    ImFont* font = item.font == FontKind::Mono ? fonts.mono : fonts.ui;
    const ImU32 color = item.tone == Tone::Dim       ? kColors.dim_text
                        : item.tone == Tone::OnColor ? imgui_color(kCellLabelRgb)
                                                     : kColors.text;
    list->AddText(font, item.size, at(item.at), color, item.text.c_str());
  }

  void cell(const CellItem& item) const {
    const ImVec2 a = at(item.box.min);
    const ImVec2 b = at(item.box.max);
    if (item.ranks.empty()) {
      list->AddRectFilled(a, b, kColors.missing, 3.0f);
    } else {
      // One stripe per rank whose input is inside.
      const float stripe = (b.x - a.x) / static_cast<float>(item.ranks.size());
      for (std::size_t s = 0; s < item.ranks.size(); ++s)
        list->AddRectFilled(ImVec2(a.x + stripe * static_cast<float>(s), a.y),
                            ImVec2(a.x + stripe * static_cast<float>(s + 1), b.y),
                            rank_color(item.ranks[s]));
    }
    if (item.outlined) list->AddRect(a, b, kColors.dim_text, 3.0f, 0, 1.0f);
    if (!item.label.text.empty()) text(item.label);  // whose inputs: dark, on the stripes
    if (item.value.text.empty()) return;  // a slot nothing was written into yet
    const Rect backing = item.value.box();
    list->AddRectFilled(at(backing.min - Vec2{3, 1}), at(backing.max + Vec2{3, 1}),
                        kColors.cell_label, 3.0f);
    text(item.value);
  }

  void panel(const PanelLayout& item) const {
    list->AddRectFilled(at(item.box.min), at(item.box.max), kColors.panel, 6.0f);
    list->AddRect(at(item.box.min), at(item.box.max),
                  item.active ? kColors.panel_active : kColors.panel_border, 6.0f, 0,
                  item.active ? 2.5f : 1.0f);
    // The overview's focus: its chip and its box, ringed inside in the
    // rank's color.
    if (item.focus)
      list->AddRect(at(item.box.min + Vec2{3, 3}), at(item.box.max - Vec2{3, 3}),
                    rank_color(item.rank), 4.0f, 0, 2.0f);
    if (item.swatch.width() > 0)
      list->AddRectFilled(at(item.swatch.min), at(item.swatch.max), rank_color(item.rank), 2.0f);
    for (const TextItem& line : item.texts) text(line);
    for (const CellItem& value : item.cells) cell(value);
  }

  void arrow(const ArrowLayout& item) const {
    const Vec2 d = item.to - item.from;
    const float length = std::sqrt(d.x * d.x + d.y * d.y);
    if (length < 1.0f) return;
    const Vec2 unit = d * (1.0f / length);
    const Vec2 normal{-unit.y, unit.x};
    const float head = item.faint ? 8.0f : 13.0f;
    const Vec2 base = item.to - unit * head;
    if (item.lost) return lost_arrow(item, unit, normal, base, head);
    const ImU32 color = item.faint ? kColors.faint_arrow : kColors.arrow;
    list->AddLine(at(item.from), at(base), color, item.faint ? 1.5f : 3.0f);
    list->AddTriangleFilled(at(item.to), at(base + normal * (head * 0.45f)),
                            at(base - normal * (head * 0.45f)), color);
  }

  // A message that never arrived: dashes, and a cross where its head would be.
  void lost_arrow(const ArrowLayout& item, Vec2 unit, Vec2 normal, Vec2 base, float head) const {
    const ImU32 color = kColors.lost_arrow;
    const float width = item.faint ? 1.5f : 3.0f;
    const Vec2 d = base - item.from;
    const float length = std::sqrt(d.x * d.x + d.y * d.y);
    constexpr float kDash = 10.0f, kGap = 7.0f;
    for (float t = 0; t < length; t += kDash + kGap)
      list->AddLine(at(item.from + unit * t), at(item.from + unit * std::min(t + kDash, length)),
                    color, width);
    const Vec2 center = base + unit * (head * 0.5f);
    const Vec2 a = (unit + normal) * (head * 0.6f), b = (unit - normal) * (head * 0.6f);
    list->AddLine(at(center - a), at(center + a), color, width);
    list->AddLine(at(center - b), at(center + b), color, width);
  }

  void label(const LabelLayout& item, bool lost) const {
    const ImU32 color = lost ? kColors.lost_arrow : kColors.arrow;
    list->AddRectFilled(at(item.box.min), at(item.box.max), kColors.arrow_label, 4.0f);
    list->AddRect(at(item.box.min), at(item.box.max), color, 4.0f);
    ImFont* font = item.text.font == FontKind::Mono ? fonts.mono : fonts.ui;
    list->AddText(font, item.text.size, at(item.text.at), color, item.text.text.c_str());
  }
};

}  // namespace

void paint_ranks(ImDrawList* list, const RanksLayout& layout, ImVec2 origin, const Fonts& fonts) {
  const Painter painter{list, origin, fonts};
  // The faint arrows under the boxes, the others over them, then the labels
  // on top, readable.
  for (const ArrowLayout& arrow : layout.arrows)
    if (arrow.faint) painter.arrow(arrow);
  for (const PanelLayout& panel : layout.panels) painter.panel(panel);
  if (layout.overview) painter.panel(layout.focus_box);
  for (const ArrowLayout& arrow : layout.arrows)
    if (!arrow.faint) painter.arrow(arrow);
  for (const LabelLayout& label : layout.labels)
    painter.label(label, layout.arrows[static_cast<std::size_t>(label.arrow)].lost);
}

}  // namespace ringlab::gui
