// Arrangements, from the most telling picture to the most compact:
//   ring      collectives from three ranks up: rank 0 at the top, clockwise
//             on a closed curve, as rings are drawn (layout_ring.hpp), so
//             that the arrows between neighbours never cross; taken at the
//             first level of detail (kDetails, layout_box.hpp) and box width
//             where it fits, down to boxes of cells alone. Two ranks are a
//             pair: side by side, as rows put them, the same in every frame.
//   groups    ranks with roles (servers, workers): each role on rows of its
//             own, servers on top, with a band between them for the arrows'
//             labels (layout_rows.hpp), tried at every level of detail; the
//             best score among those that fit wins.
//   overview  where no box fits whole with values that can be read: the
//             same ring or groups of chips, and the focus box
//             (layout_overview.hpp).
//   cut       where not even that fits (a small window): the ring, or the
//             best-shaped rows, of boxes cut short ("...").
// Arrows and labels come last (layout_arrows.hpp).
#include "gui/layout.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "gui/layout_arrows.hpp"
#include "gui/layout_box.hpp"
#include "gui/layout_overview.hpp"
#include "gui/layout_ring.hpp"
#include "gui/layout_rows.hpp"

namespace ringlab::gui {

namespace {

constexpr float kMargin = 6;  // between the canvas' edge and any box
constexpr float kGap = 16;    // between boxes, at least
constexpr float kUnbounded = std::numeric_limits<float>::max();
// Rows take the levels of the full boxes (not the compact ones, which only a
// ring needs); less detail costs, and rows pay for a poor shape too.
constexpr float kRowsLevelCost[] = {0.0f, 0.35f, 0.7f, 1.2f, 1.6f};

// The gap between rows: groups keep a band for the labels of the arrows
// between them.
float rows_gap(bool roles, const LayoutFonts& fonts) {
  return roles ? std::max(kGap, fonts.ui.size + 8 + 24) : kGap;
}

std::vector<float> widths_in(const Rows& rows, const FrameView& view,
                             const std::vector<std::vector<int>>& groups) {
  std::vector<float> widths;
  for (const RankPanel& panel : view.ranks) widths.push_back(rows.width_of(panel.rank, groups));
  return widths;
}

std::vector<Rows> shapes_by_penalty(const std::vector<std::vector<int>>& groups, Vec2 canvas) {
  std::vector<Rows> shapes = all_shapes(groups, canvas, BoxWidths{});
  std::stable_sort(shapes.begin(), shapes.end(), [&](const Rows& a, const Rows& b) {
    return shape_penalty(a, groups, canvas) < shape_penalty(b, groups, canvas);
  });
  return shapes;
}

// The ring at the best level of detail and box width that fit; false when
// none does. Less detail costs, and so do narrower boxes (tall and thin, they
// wrap every line): a width at 90% of the widest costs as much as a level;
// and so does each arrow whose label finds no room plainly beside it.
bool lay_out_ring(RanksLayout& layout, const FrameView& view, const LayoutFonts& fonts) {
  constexpr float kLevelCost[kDetailLevels] = {0.0f, 0.3f, 0.6f, 0.9f, 1.2f, 1.6f, 2.0f};
  constexpr float kNarrowCost = 3.0f;  // per 100% narrower
  constexpr float kUnclearCost = 0.5f;  // per arrow whose label is missing or unclear
  const std::vector<float> widths = ring_widths(view.ranks.size(), layout.canvas);
  // Per width, the first level that fits.
  std::vector<std::pair<float, RanksLayout>> fitting;
  for (float width : widths) {
    const float narrow = kNarrowCost * (1 - width / widths.front());
    for (int level = 0; level < kDetailLevels; ++level) {
      std::vector<PanelLayout> panels = build_panels(
          view, std::vector<float>(view.ranks.size(), width), kDetails[level], kUnbounded, fonts);
      if (!readable(panels, view) || !place_ring(panels, layout.canvas)) continue;
      RanksLayout candidate = layout;
      candidate.panels = std::move(panels);
      candidate.arrangement = "ring";
      candidate.detail = level;
      fitting.emplace_back(kLevelCost[level] + narrow, std::move(candidate));
      break;
    }
  }
  std::stable_sort(fitting.begin(), fitting.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  // The cheapest whose labels all read plainly; failing that, the best trade.
  float best = kUnbounded;
  for (auto& [cost, candidate] : fitting) {
    if (cost >= best) break;
    RanksLayout arrows = candidate;
    place_arrows(arrows, view, fonts);
    const float total = cost + kUnclearCost * static_cast<float>(unclear_labels(arrows, view));
    if (total >= best) continue;
    best = total;
    layout = std::move(candidate);
  }
  return best < kUnbounded;
}

// A ring of boxes cut to the largest size that fits (the most compact level
// of detail, "..." where a box holds more); false when not even that fits,
// or when a box would show none of its cells.
bool lay_out_cut_ring(RanksLayout& layout, const FrameView& view, const LayoutFonts& fonts) {
  const Vec2 size = largest_ring_box(view.ranks.size(), layout.canvas);
  if (size.x <= 0) return false;
  std::vector<PanelLayout> panels =
      build_panels(view, std::vector<float>(view.ranks.size(), size.x), kDetails[kDetailLevels - 1],
                   size.y, fonts);
  if (!place_ring(panels, layout.canvas)) return false;
  // A box cut down to no cells at all shows nothing of its rank's data: rows
  // of larger boxes do better then.
  for (const PanelLayout& panel : panels)
    if (panel.cells.empty() && !view.ranks[static_cast<std::size_t>(panel.rank)].buffers.empty())
      return false;
  layout.panels = std::move(panels);
  layout.arrangement = "ring";
  layout.detail = kCutDetail;
  return true;
}

// Rows of boxes: every way to put the groups on rows at every level of the
// full boxes; the best score whose values can be read wins; false when none
// fits.
bool lay_out_rows(RanksLayout& layout, const FrameView& view, const LayoutFonts& fonts) {
  const Vec2 canvas = layout.canvas;
  const std::vector<std::vector<int>> groups = role_groups(view);
  const bool roles = groups.size() > 1;
  const std::vector<Rows> shapes = shapes_by_penalty(groups, canvas);
  float best = kUnbounded;
  for (int level = 0; level < static_cast<int>(std::size(kRowsLevelCost)); ++level)
    for (const Rows& rows : shapes) {
      const float score = kRowsLevelCost[level] + shape_penalty(rows, groups, canvas);
      if (score >= best) continue;
      std::vector<PanelLayout> panels =
          build_panels(view, widths_in(rows, view, groups), kDetails[level], kUnbounded, fonts);
      if (!readable(panels, view) || !place_rows(panels, rows, canvas, rows_gap(roles, fonts)))
        continue;
      layout.panels = std::move(panels);
      layout.arrangement = roles ? "groups" : "grid";
      layout.detail = level;
      best = score;
    }
  return best < kUnbounded;
}

// The best-shaped rows with every box cut to its share of the height: what
// fits when nothing else does.
void lay_out_cut_rows(RanksLayout& layout, const FrameView& view, const LayoutFonts& fonts) {
  const Vec2 canvas = layout.canvas;
  const std::vector<std::vector<int>> groups = role_groups(view);
  const bool roles = groups.size() > 1;
  const float gap = rows_gap(roles, fonts);
  const Rows rows = shapes_by_penalty(groups, canvas).front();
  float gap_total = 0;
  for (float g : least_gaps(rows, gap)) gap_total += g;
  const float share =
      std::max(0.0f, (canvas.y - 2 * kMargin - gap_total) / static_cast<float>(rows.rows.size()));
  layout.panels = build_panels(view, widths_in(rows, view, groups),
                               kDetails[std::size(kRowsLevelCost) - 1], share, fonts);
  place_rows(layout.panels, rows, canvas, gap);
  layout.arrangement = roles ? "groups" : "grid";
  layout.detail = kCutDetail;
}

}  // namespace

int focus_rank(const FrameView& view, int selected) {
  const int ranks = static_cast<int>(view.ranks.size());
  if (selected >= 0 && selected < ranks) return selected;
  if (view.subject >= 0 && view.subject < ranks) return view.subject;
  return 0;
}

RanksLayout layout_ranks(const FrameView& view, Vec2 canvas, const LayoutFonts& fonts,
                         int selected) {
  RanksLayout layout;
  layout.canvas = canvas;
  if (view.ranks.empty()) return layout;
  const bool roles = role_groups(view).size() > 1;
  const bool ring = !roles && view.ranks.size() >= 3;
  const bool whole = ring ? lay_out_ring(layout, view, fonts) : lay_out_rows(layout, view, fonts);
  if (!whole && !lay_out_overview(layout, view, selected, fonts) &&
      !(ring && lay_out_cut_ring(layout, view, fonts)))
    lay_out_cut_rows(layout, view, fonts);
  // Every box shows whole: a picked rank's is ringed all the same.
  if (!layout.overview && selected >= 0 && selected < static_cast<int>(layout.panels.size())) {
    layout.focus = selected;
    layout.panels[static_cast<std::size_t>(selected)].focus = true;
  }
  place_arrows(layout, view, fonts);
  return layout;
}

int rank_at(const RanksLayout& layout, Vec2 point) {
  const Rect at = Rect::at(point, {0, 0});
  if (layout.overview && layout.focus_box.box.contains(at)) return layout.focus;
  for (const PanelLayout& panel : layout.panels)
    if (panel.box.contains(at)) return panel.rank;
  return -1;
}

WindowLayout window_layout(Vec2 display) {
  WindowLayout layout;
  // 290 at 1024 wide, 382 at 1280 (where the legend needs it), 400 from 1330 on.
  layout.side_width = std::clamp(290.0f + (display.x - 1024.0f) * 0.36f, 290.0f, 400.0f);
  layout.log_height = std::clamp(display.y * 0.17f, 96.0f, 150.0f);
  return layout;
}

}  // namespace ringlab::gui
