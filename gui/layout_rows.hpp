// Rows of boxes for layout_ranks (layout.hpp): ranks grouped by role (servers,
// workers), each group on rows of its own with its own number of columns,
// the first group on top. Part of layout_ranks.
#pragma once

#include <algorithm>
#include <vector>

#include "gui/layout.hpp"

namespace ringlab::gui {

// Ranks by role: "server 0", "server 1" | "worker 0", ... in order of first
// appearance; one group when every rank is a plain "rank N".
std::vector<std::vector<int>> role_groups(const FrameView& view);

// One way to put the groups on rows: each group has its own number of
// columns, and every box of a group is as wide as its columns allow.
struct Rows {
  std::vector<int> columns;            // per group
  std::vector<float> widths;           // per group
  std::vector<std::vector<int>> rows;  // ranks, left to right
  std::vector<int> group_of_row;
  float width_of(int rank, const std::vector<std::vector<int>>& groups) const {
    for (std::size_t g = 0; g < groups.size(); ++g)
      if (std::find(groups[g].begin(), groups[g].end(), rank) != groups[g].end()) return widths[g];
    return widths.front();
  }
};

// How wide the boxes of rows may be: no wider than `widest`, and no
// narrower than `narrowest` unless a group stands in one column.
struct BoxWidths {
  float widest = 340;
  float narrowest = 150;
};

// Every choice of columns per group whose boxes are wide enough (or one
// column): a group of n on r rows takes ceil(n / r) columns.
std::vector<Rows> all_shapes(const std::vector<std::vector<int>>& groups, Vec2 canvas,
                             BoxWidths box);

// The least gap above each row: groups are kept further apart, so that the
// labels of the arrows between them fit in the band.
std::vector<float> least_gaps(const Rows& rows, float group_gap);

// How well slots of this shape hold a box (lower is better): boxes read best
// about 1.6 times as wide as tall, and empty slots waste room.
float shape_penalty(const Rows& rows, const std::vector<std::vector<int>>& groups, Vec2 canvas);

// Places each row's boxes spread across the canvas, rows spread down it;
// false when the rows are taller than the canvas.
bool place_rows(std::vector<PanelLayout>& panels, const Rows& rows, Vec2 canvas, float group_gap);

}  // namespace ringlab::gui
