#include "gui/layout_overview.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gui/layout_arrows.hpp"
#include "gui/layout_box.hpp"
#include "gui/layout_chip.hpp"
#include "gui/layout_ring.hpp"
#include "gui/layout_rows.hpp"

namespace ringlab::gui {

namespace {

constexpr float kMargin = 6;      // between the canvas' edge and any box
constexpr float kColumnGap = 30;  // between the chips and the focus column
constexpr float kGroupGap = 48;   // between groups of chips: room for the arrows' labels
constexpr float kFocusWidest = 480;
constexpr float kFocusNarrowest = 220;
constexpr float kUnbounded = std::numeric_limits<float>::max();
// Chip sizes to try, largest first: width, and height of a small cell.
constexpr Vec2 kChipSizes[] = {{150, 9}, {136, 9}, {124, 8}, {112, 7}, {112, 5}, {100, 5}, {92, 4}};
// Less detail in the focus box costs; so do narrower chips (smaller cells).
constexpr float kLevelCost[kDetailLevels] = {0.0f, 0.3f, 0.6f, 0.9f, 1.2f, 1.6f, 2.0f};
constexpr float kSmallChipCost = 0.5f;  // per 100% less area

std::string hint_for(int selected) {
  return selected >= 0 ? "picked: Esc follows the step again"
                       : "follows the step; to pick a rank, click it, or press [ or ]";
}

// The focus box, `width` wide and at most `height` high, at the most
// detailed level that fits whole with values that read (its level in
// `level`); false when none does.
bool fit_focus_box(PanelLayout& box, int& level, const FrameView& view, int focus, float width,
                   float height, int selected, const LayoutFonts& fonts) {
  for (level = 0; level < kDetailLevels; ++level) {
    PanelLayout candidate =
        build_focus_box(view, focus, width, kDetails[level], kUnbounded, hint_for(selected), fonts);
    if (candidate.box.height() > height || !readable({candidate}, view)) continue;
    box = std::move(candidate);
    return true;
  }
  return false;
}

// The largest rectangle around the canvas' middle that keeps `gap` from every
// chip: cut back, chip by chip, on the side that keeps the most of it.
Rect ring_hole(const std::vector<PanelLayout>& chips, Vec2 canvas, float gap) {
  Rect hole = Rect::at({0, 0}, canvas).grown(-kMargin);
  const Vec2 middle = canvas * 0.5f;
  for (const PanelLayout& chip : chips) {
    const Rect keep_off = chip.box.grown(gap);
    if (!keep_off.intersects(hole)) continue;
    Rect cuts[4] = {hole, hole, hole, hole};
    cuts[0].min.y = keep_off.max.y;  // the chip above
    cuts[1].max.y = keep_off.min.y;  // below
    cuts[2].min.x = keep_off.max.x;  // left
    cuts[3].max.x = keep_off.min.x;  // right
    const bool side[4] = {chip.box.center().y<middle.y, chip.box.center().y> middle.y,
                          chip.box.center().x<middle.x, chip.box.center().x> middle.x};
    float best_area = -1;
    for (int k = 0; k < 4; ++k) {
      const float area = std::max(0.0f, cuts[k].width()) * std::max(0.0f, cuts[k].height());
      if (side[k] && area > best_area) {
        best_area = area;
        hole = cuts[k];
      }
    }
  }
  return hole;
}

// Whether an arrow between neighbours on the ring (either way, each drawn a
// little to its side, as place_arrows draws them) would cross `box`.
bool neighbour_arrow_crosses(const std::vector<PanelLayout>& chips, const Rect& box) {
  const std::size_t p = chips.size();
  for (std::size_t r = 0; r < p; ++r) {
    const Vec2 a = chips[r].box.center();
    const Vec2 b = chips[(r + 1) % p].box.center();
    const Vec2 d = b - a;
    const float length = std::max(1.0f, std::hypot(d.x, d.y));
    const Vec2 side = Vec2{-d.y, d.x} * (9.0f / length);
    if (box.grown(6).crossed_by(a + side, b + side) || box.grown(6).crossed_by(a - side, b - side))
      return true;
  }
  return false;
}

// The ring with the chips further apart where that fits: the labels of
// the arrows between them (at the corners above all) get room beside them.
bool place_spread_ring(std::vector<PanelLayout>& chips, Vec2 canvas) {
  constexpr float kSpread = 12;  // each side of a chip, at most
  for (float spread : {kSpread, 0.0f}) {
    for (PanelLayout& chip : chips) chip.box = chip.box.grown(spread);
    const bool fits = place_ring(chips, canvas);
    for (PanelLayout& chip : chips) chip.box = chip.box.grown(-spread);
    if (fits) return true;
  }
  return false;
}

struct Choice {
  float cost = kUnbounded;
  std::vector<PanelLayout> chips;
  PanelLayout box;
  std::string arrangement;
  bool in_middle = false;
};

// The layout a choice makes (without its arrows).
RanksLayout layout_of(Choice choice, Vec2 canvas, const FrameView& view, int focus) {
  RanksLayout layout;
  layout.canvas = canvas;
  layout.panels = std::move(choice.chips);
  layout.panels[static_cast<std::size_t>(focus)].focus = true;
  layout.arrangement = std::move(choice.arrangement);
  layout.detail = kOverviewDetail;
  layout.overview = true;
  layout.focus = focus;
  layout.focus_box = std::move(choice.box);
  layout.arrows_at_focus_box = choice.in_middle && !view.neighbours_only;
  return layout;
}

// How many of the step's arrows would read poorly (unclear_labels).
int unclear(RanksLayout layout, const FrameView& view, const LayoutFonts& fonts) {
  place_arrows(layout, view, fonts);
  return unclear_labels(layout, view);
}

// The ring of chips over the whole canvas, the focus box in its middle: of
// the chip sizes and box widths that fit, the one whose box shows most and
// leaves the step's labels room beside their arrows.
Choice middle(const FrameView& view, int focus, int selected, Vec2 canvas,
              const LayoutFonts& fonts) {
  constexpr float kUnclearCost = 0.5f;     // per arrow whose label is missing or unclear
  constexpr float kSmallerBoxCost = 0.2f;  // a box narrower, or shorter, than the middle allows
  Choice best;
  const float gap = fonts.ui.size + 14;  // room for a label between a chip and the box
  for (Vec2 size : kChipSizes) {
    const float chip_cost =
        kSmallChipCost * (1 - size.x * size.y / (kChipSizes[0].x * kChipSizes[0].y));
    if (chip_cost >= best.cost) break;
    std::vector<PanelLayout> chips = build_chips(view, size, fonts);
    if (!place_spread_ring(chips, canvas)) continue;
    const Rect hole = ring_hole(chips, canvas, gap);
    // Narrower or shorter, the box leaves the labels of the arrows at the
    // ring's sides, or its corners, room beside them.
    for (const Vec2 smaller : {Vec2{0, 0}, Vec2{120, 0}, Vec2{0, 48}, Vec2{120, 48}}) {
      const float box_w = std::min(hole.width() - smaller.x, kFocusWidest);
      if (box_w < kFocusNarrowest) continue;
      PanelLayout box;
      int level = 0;
      if (!fit_focus_box(box, level, view, focus, box_w, hole.height() - smaller.y, selected,
                         fonts))
        continue;
      float cost = kLevelCost[level] + chip_cost +
                   kSmallerBoxCost * static_cast<float>((smaller.x > 0) + (smaller.y > 0));
      if (cost >= best.cost) continue;
      move_panel(box, hole.center() - box.box.center() + box.box.min);
      if (neighbour_arrow_crosses(chips, box.box)) continue;
      Choice choice{cost, chips, std::move(box), "ring", true};
      choice.cost += kUnclearCost * static_cast<float>(unclear(
                                        layout_of(choice, canvas, view, focus), view, fonts));
      if (choice.cost < best.cost) best = std::move(choice);
    }
  }
  return best;
}

// The chips of a ring, or of rows of groups, in `region` (the canvas' left
// part); false when they do not fit.
bool place_chips(std::vector<PanelLayout>& chips, std::string& arrangement, const FrameView& view,
                 Vec2 region, const LayoutFonts& fonts) {
  const std::vector<std::vector<int>> groups = role_groups(view);
  if (groups.size() == 1 && view.ranks.size() >= 3) {
    for (Vec2 size : kChipSizes) {
      chips = build_chips(view, size, fonts);
      arrangement = "ring";
      if (place_ring(chips, region)) return true;
    }
    return false;
  }
  std::vector<Rows> shapes = all_shapes(groups, region, BoxWidths{kChipSizes[0].x, 96});
  std::stable_sort(shapes.begin(), shapes.end(), [&](const Rows& a, const Rows& b) {
    return shape_penalty(a, groups, region) < shape_penalty(b, groups, region);
  });
  arrangement = groups.size() > 1 ? "groups" : "grid";
  for (const Rows& rows : shapes) {
    // Chips of one width: the narrowest of the shape's groups.
    const float width = *std::min_element(rows.widths.begin(), rows.widths.end());
    chips = build_chips(view, {width, kChipSizes[0].y}, fonts);
    if (place_rows(chips, rows, region, groups.size() > 1 ? kGroupGap : 16)) return true;
  }
  return false;
}

// The chips in the canvas' left part, the focus box in a column on the right.
Choice side(const FrameView& view, int focus, int selected, Vec2 canvas, const LayoutFonts& fonts) {
  Choice best;
  for (float share : {0.38f, 0.32f}) {
    const float column = std::clamp(canvas.x * share, kFocusNarrowest, kFocusWidest);
    const Vec2 region{canvas.x - column - kColumnGap, canvas.y};
    PanelLayout box;
    int level = 0;
    if (region.x < 2 * kChipSizes[std::size(kChipSizes) - 1].x ||
        !fit_focus_box(box, level, view, focus, column - kMargin, canvas.y - 2 * kMargin, selected,
                       fonts))
      continue;
    const float cost = kLevelCost[level] + (share < 0.38f ? 0.2f : 0.0f);
    if (cost >= best.cost) continue;
    std::vector<PanelLayout> chips;
    std::string arrangement;
    if (!place_chips(chips, arrangement, view, region, fonts)) continue;
    move_panel(box, {canvas.x - kMargin - box.box.width(), (canvas.y - box.box.height()) * 0.5f});
    best = {cost, std::move(chips), std::move(box), arrangement, false};
  }
  return best;
}

}  // namespace

bool lay_out_overview(RanksLayout& layout, const FrameView& view, int selected,
                      const LayoutFonts& fonts) {
  const int focus = focus_rank(view, selected);
  const bool ring = role_groups(view).size() == 1 && view.ranks.size() >= 3;
  Choice choice;
  if (ring) choice = middle(view, focus, selected, layout.canvas, fonts);
  if (choice.cost == kUnbounded) choice = side(view, focus, selected, layout.canvas, fonts);
  if (choice.cost == kUnbounded) return false;
  layout = layout_of(std::move(choice), layout.canvas, view, focus);
  return true;
}

}  // namespace ringlab::gui
