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

namespace {

// The order labels are placed in, each where the ones before left room: the
// focus's messages, then those that carry data, then empty ones.
std::vector<std::size_t> label_order(const RanksLayout& layout, const FrameView& view) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < layout.arrows.size(); ++i)
    if (!layout.arrows[i].faint) order.push_back(i);
  auto rank = [&](std::size_t i) {
    const ArrowLayout& arrow = layout.arrows[i];
    if (layout.overview && (arrow.src == layout.focus || arrow.dst == layout.focus)) return 0;
    return view.arrows[i].empty ? 2 : 1;
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return rank(a) < rank(b); });
  return order;
}

// What a label at `candidate` covers, weighted: the boxes (the focus box
// too) and the labels placed so far are what it must not cover at all.
struct Cover {
  float boxes = 0;  // area of boxes and labels covered: a label goes nowhere it is > 0
  float score = 0;  // with the softer costs: crossing a line, nearer another arrow
};
// The costs only add to the score, so once `loses(score so far)` is true
// the candidate cannot win and the rest is not looked at (most candidates of
// a crowded canvas end at the boxes).
template <typename Loses>
Cover cover_of(const Rect& candidate, std::size_t i, const RanksLayout& layout, Loses loses) {
  Cover cover;
  for (const PanelLayout& panel : layout.panels) cover.boxes += candidate.overlap_area(panel.box);
  if (layout.overview) cover.boxes += candidate.overlap_area(layout.focus_box.box.grown(3));
  for (const LabelLayout& label : layout.labels)
    cover.boxes += 2 * candidate.overlap_area(label.box.grown(3));
  cover.score = cover.boxes;
  if (loses(cover.score)) return cover;
  // Beside the lines rather than on them, so that they stay visible.
  for (const ArrowLayout& line : layout.arrows)
    if (!line.faint && crosses(candidate.grown(2), line)) cover.score += 30;
  if (loses(cover.score)) return cover;
  // Nearer its own arrow than any other, or it reads as theirs.
  const float own = distance_to(candidate, layout.arrows[i]);
  for (std::size_t j = 0; j < layout.arrows.size(); ++j)
    if (j != i && !layout.arrows[j].faint && distance_to(candidate, layout.arrows[j]) < own) {
      cover.score += 40;
      break;
    }
  return cover;
}

// Whether a label reads poorly as arrow i's: far from it, or plainly
// nearer another arrow (by more than its height), whose it then seems.
bool reads_poorly(const Rect& label, std::size_t i, const RanksLayout& layout) {
  constexpr float kFar = 150;
  const float own = distance_to(label, layout.arrows[i]);
  if (own > kFar) return true;
  for (std::size_t j = 0; j < layout.arrows.size(); ++j)
    if (j != i && !layout.arrows[j].faint &&
        distance_to(label, layout.arrows[j]) + label.height() < own)
      return true;
  return false;
}

// The best place for `text` as arrow i's label: around three points of the
// arrow, on rings of growing radius, the nearest candidate that covers
// least; `clear` says whether it covers no box and no label.
Rect best_place(const RanksLayout& layout, std::size_t i, Vec2 box_size, bool& clear) {
  const Rect inside = Rect::at({0, 0}, layout.canvas).grown(-2);
  const ArrowLayout& arrow = layout.arrows[i];
  const Vec2 d = arrow.to - arrow.from;
  Rect best;
  float best_score = kUnbounded;
  clear = false;
  for (float t : {0.5f, 0.35f, 0.65f}) {
    const Vec2 anchor = arrow.from + d * t;
    for (float radius = 0; radius <= 320; radius += 10) {
      const int directions = radius == 0 ? 1 : 16;
      for (int k = 0; k < directions; ++k) {
        const float angle = 2 * kPi * static_cast<float>(k) / static_cast<float>(directions);
        const Vec2 c = anchor + Vec2{std::cos(angle), std::sin(angle)} * radius;
        Vec2 min = c - box_size * 0.5f;
        min.x = std::clamp(min.x, inside.min.x, std::max(inside.min.x, inside.max.x - box_size.x));
        min.y = std::clamp(min.y, inside.min.y, std::max(inside.min.y, inside.max.y - box_size.y));
        const Rect candidate = Rect::at(min, box_size);
        const Vec2 off = candidate.center() - anchor;
        const float away = std::sqrt(off.x * off.x + off.y * off.y);
        const float other_point = t == 0.5f ? 0.0f : 8.0f;
        // Rounding is monotonic, so a cover score at least `s` gives a score
        // at least this one: a candidate it puts at or past the best loses.
        auto loses = [&](float s) { return s * 100 + away + other_point >= best_score; };
        if (loses(0)) continue;
        const Cover cover = cover_of(candidate, i, layout, loses);
        const float score = cover.score * 100 + away + other_point;
        if (score < best_score) {
          best_score = score;
          best = candidate;
          clear = cover.boxes == 0;
        }
      }
      if (best_score < radius) break;  // nothing further out can beat it
    }
  }
  return best;
}

// The label of arrow i where it covers no box and no label: in full, else
// its range alone ("chunk 3 +") where that reads plainly as its arrow's and
// the full one does not; nothing where neither has room.
void place_label(RanksLayout& layout, std::size_t i, const ArrowView& source,
                 const LayoutFonts& fonts, float size) {
  const Vec2 backing{4, 2};
  const float room = layout.canvas.x - 4 - 2 * backing.x;
  const std::string plus = source.reduced && !source.lost ? " +" : "";  // lost: nothing reduced
  bool placed = false;
  for (const std::string& words : {source.label, source.range}) {
    TextItem item = text_item({}, shorten_to_width(words + plus, fonts.ui, size, room),
                              FontKind::Ui, size, Tone::Text, fonts);
    bool clear = false;
    const Rect at = best_place(layout, i, item.extent + backing * 2, clear);
    if (!clear) continue;
    const bool plain = !reads_poorly(at, i, layout);
    if (placed && !plain) break;  // the full label is no worse
    if (placed) layout.labels.pop_back();
    item.at = at.min + backing;
    layout.labels.push_back({static_cast<int>(i), at, std::move(item)});
    placed = true;
    if (plain || words == source.range) break;
  }
}

}  // namespace

int unclear_labels(const RanksLayout& layout, const FrameView& view) {
  int unclear = 0;
  for (std::size_t i = 0; i < layout.arrows.size(); ++i) {
    if (layout.arrows[i].faint) continue;
    const auto label = std::find_if(layout.labels.begin(), layout.labels.end(),
                                    [&](const LabelLayout& l) { return l.arrow == int(i); });
    if (label == layout.labels.end() ? !view.arrows[i].empty : reads_poorly(label->box, i, layout))
      ++unclear;
  }
  return unclear;
}

void place_arrows(RanksLayout& layout, const FrameView& view, const LayoutFonts& fonts) {
  // Where each rank's arrows start and end: its box, or the focus box.
  auto box_of = [&](int rank) -> const Rect& {
    if (layout.arrows_at_focus_box && rank == layout.focus) return layout.focus_box.box;
    return layout.panels[static_cast<std::size_t>(rank)].box;
  };
  for (const ArrowView& arrow : view.arrows) {
    const Rect& a = box_of(arrow.src);
    const Rect& b = box_of(arrow.dst);
    // Sideways a little, so that messages both ways between two ranks do not
    // cover each other.
    const Vec2 d = b.center() - a.center();
    const float length = std::max(1.0f, std::sqrt(d.x * d.x + d.y * d.y));
    const Vec2 side = Vec2{-d.y, d.x} * (9.0f / length);
    const bool faint =
        layout.arrows_at_focus_box && arrow.src != layout.focus && arrow.dst != layout.focus;
    layout.arrows.push_back({arrow.src, arrow.dst, exit_point(a, b.center()) + side,
                             exit_point(b, a.center()) + side, faint, arrow.lost});
  }
  const float size = fonts.ui.size * (view.arrows.size() > 8 ? 0.8f : 0.95f);
  for (std::size_t i : label_order(layout, view))
    place_label(layout, i, view.arrows[i], fonts, size);
  // In arrow order, as the arrows are.
  std::sort(layout.labels.begin(), layout.labels.end(),
            [](const LabelLayout& a, const LabelLayout& b) { return a.arrow < b.arrow; });
}

}  // namespace ringlab::gui
