// The ring arrangement of layout_ranks (layout.hpp): rank 0 at the top, the
// others clockwise on a closed convex curve, as rings are drawn. Part of
// layout_ranks.
#pragma once

#include <vector>

#include "gui/layout.hpp"

namespace ringlab::gui {

// The box widths worth trying for a ring of `ranks` on `canvas`, widest first.
std::vector<float> ring_widths(std::size_t ranks, Vec2 canvas);

// Places equally wide boxes on the curve: an ellipse where they fit, else a
// squarer superellipse (|x/a|^n + |y/b|^n = 1, n up to 8), which has room in
// its corners. The boxes are spaced evenly along the curve as measured in box
// sizes, so that neighbours are as far apart at the sides as at the top.
// True when every two boxes keep a gap, neighbours one wide enough for an
// arrow, and the arrow between neighbours passes beside every other box;
// false (boxes left anywhere) otherwise.
bool place_ring(std::vector<PanelLayout>& panels, Vec2 canvas);

// The largest box (by area, of the widths ring_widths tries, preferring those
// tall enough for a title and a row of cells) of which `ranks` fit as
// a ring on `canvas`: the size to cut boxes to when they fit nowhere whole.
// {0, 0} when not even the smallest fits.
Vec2 largest_ring_box(std::size_t ranks, Vec2 canvas);

}  // namespace ringlab::gui
