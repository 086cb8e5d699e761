// The step's arrows between placed boxes, and their labels: each beside its
// arrow where it covers no box, no other label and no line, nearer its own
// arrow than any other, always inside the canvas; left out where it would
// cover a box or a label. Part of layout_ranks.
#pragma once

#include "gui/layout.hpp"

namespace ringlab::gui {

// Adds layout.arrows and layout.labels for view.arrows; layout.panels, the
// overview's focus and its box must be final.
void place_arrows(RanksLayout& layout, const FrameView& view, const LayoutFonts& fonts);

// How many of the arrows drawn in full read poorly: one that carries data
// with no label, or whose label lies far from it or plainly nearer another
// arrow (by more than its height) than to it.
int unclear_labels(const RanksLayout& layout, const FrameView& view);

}  // namespace ringlab::gui
