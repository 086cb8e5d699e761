#include "gui/layout_arrows.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "gui/layout_box.hpp"

namespace ringlab::gui {

namespace {

constexpr float kUnbounded = std::numeric_limits<float>::max();
constexpr float kPi = 3.14159265f;

// Where the segment from the box's center towards `toward` leaves it.
Vec2 exit_point(const Rect& box, Vec2 toward) {
  const Vec2 c = box.center();
  const Vec2 d = toward - c;
  const float half_w = box.width() * 0.5f + 4.0f;
  const float half_h = box.height() * 0.5f + 4.0f;
  const float tx = d.x != 0 ? half_w / std::fabs(d.x) : kUnbounded;
  const float ty = d.y != 0 ? half_h / std::fabs(d.y) : kUnbounded;
  return c + d * std::min({tx, ty, 1.0f});
}

float distance_to(Vec2 point, const ArrowLayout& arrow) {
  const Vec2 d = arrow.to - arrow.from;
  const float length2 = d.x * d.x + d.y * d.y;
  const Vec2 p = point - arrow.from;
  const float t = length2 > 0 ? std::clamp((p.x * d.x + p.y * d.y) / length2, 0.0f, 1.0f) : 0.0f;
  const Vec2 off = point - (arrow.from + d * t);
  return std::sqrt(off.x * off.x + off.y * off.y);
}

float distance_to(Vec2 point, Vec2 from, Vec2 to) {
  return distance_to(point, ArrowLayout{0, 0, from, to});
}

// The least distance between the rectangle and the arrow's line (0 when the
// line passes through it).
float distance_to(const Rect& box, const ArrowLayout& arrow) {
  if (box.crossed_by(arrow.from, arrow.to)) return 0;
  const Vec2 corners[4] = {box.min, {box.max.x, box.min.y}, box.max, {box.min.x, box.max.y}};
  float least = kUnbounded;
  for (int k = 0; k < 4; ++k) {
    const Vec2 a = corners[k];
    const Vec2 b = corners[(k + 1) % 4];
    least = std::min(
        {least, distance_to(a, arrow), distance_to(arrow.from, a, b), distance_to(arrow.to, a, b)});
  }
  return least;
}

// Whether the arrow's line passes through the rectangle.
bool crosses(const Rect& box, const ArrowLayout& arrow) {
  return box.crossed_by(arrow.from, arrow.to);
}

}  // namespace

void place_arrows(RanksLayout& layout, const FrameView& view, const LayoutFonts& fonts) {
  for (const ArrowView& arrow : view.arrows) {
    const Rect& a = layout.panels[static_cast<std::size_t>(arrow.src)].box;
    const Rect& b = layout.panels[static_cast<std::size_t>(arrow.dst)].box;
    // Sideways a little, so that messages both ways between two ranks do not
    // cover each other.
    const Vec2 d = b.center() - a.center();
    const float length = std::max(1.0f, std::sqrt(d.x * d.x + d.y * d.y));
    const Vec2 side = Vec2{-d.y, d.x} * (9.0f / length);
    layout.arrows.push_back(
        {arrow.src, arrow.dst, exit_point(a, b.center()) + side, exit_point(b, a.center()) + side});
  }
  // Labels: beside their arrow where they cover no box and no other label,
  // else where they cover least; always inside the canvas.
  const Rect canvas = Rect::at({0, 0}, layout.canvas);
  const Rect inside = canvas.grown(-2);
  const float size = fonts.ui.size * (view.arrows.size() > 8 ? 0.8f : 0.95f);
  const Vec2 backing{4, 2};
  for (std::size_t i = 0; i < layout.arrows.size(); ++i) {
    const ArrowLayout& arrow = layout.arrows[i];
    const ArrowView& source = view.arrows[i];
    const std::string text = shorten_to_width(source.label + (source.reduced ? " +" : ""), fonts.ui,
                                              size, inside.width() - 2 * backing.x);
    TextItem item = text_item({}, text, FontKind::Ui, size, Tone::Text, fonts);
    const Vec2 box_size = item.extent + backing * 2;
    // Candidates: around three points of the arrow, on rings of growing
    // radius; the nearest that covers nothing wins.
    const Vec2 d = arrow.to - arrow.from;
    Rect best;
    float best_score = kUnbounded;
    for (float t : {0.5f, 0.35f, 0.65f}) {
      const Vec2 anchor = arrow.from + d * t;
      for (float radius = 0; radius <= 320; radius += 10) {
        const int directions = radius == 0 ? 1 : 16;
        for (int k = 0; k < directions; ++k) {
          const float angle = 2 * kPi * static_cast<float>(k) / static_cast<float>(directions);
          const Vec2 c = anchor + Vec2{std::cos(angle), std::sin(angle)} * radius;
          Vec2 min = c - box_size * 0.5f;
          min.x =
              std::clamp(min.x, inside.min.x, std::max(inside.min.x, inside.max.x - box_size.x));
          min.y =
              std::clamp(min.y, inside.min.y, std::max(inside.min.y, inside.max.y - box_size.y));
          const Rect candidate = Rect::at(min, box_size);
          float cover = 0;
          for (const PanelLayout& panel : layout.panels) cover += candidate.overlap_area(panel.box);
          for (const LabelLayout& label : layout.labels)
            cover += 2 * candidate.overlap_area(label.box.grown(3));
          // Beside the lines rather than on them, so that they stay visible.
          for (const ArrowLayout& line : layout.arrows)
            if (crosses(candidate.grown(2), line)) cover += 30;
          // Nearer its own arrow than any other, or it reads as theirs.
          const float own = distance_to(candidate, arrow);
          for (std::size_t j = 0; j < layout.arrows.size(); ++j)
            if (j != i && distance_to(candidate, layout.arrows[j]) < own) {
              cover += 40;
              break;
            }
          const Vec2 off = candidate.center() - anchor;
          const float score =
              cover * 100 + std::sqrt(off.x * off.x + off.y * off.y) + (t == 0.5f ? 0.0f : 8.0f);
          if (score < best_score) {
            best_score = score;
            best = candidate;
          }
        }
        if (best_score < radius) break;  // nothing further out can beat it
      }
    }
    item.at = best.min + backing;
    layout.labels.push_back({best, std::move(item)});
  }
}

}  // namespace ringlab::gui
