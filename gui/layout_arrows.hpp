// The step's arrows between placed boxes, and their labels: each beside its
// arrow where it covers no box, no other label and no line, nearer its own
// arrow than any other, always inside the canvas. Part of layout_ranks.
#pragma once

#include "gui/layout.hpp"

namespace ringlab::gui {

// Adds layout.arrows and layout.labels for view.arrows; layout.panels and
// layout.arrangement must be final.
void place_arrows(RanksLayout& layout, const FrameView& view, const LayoutFonts& fonts);

}  // namespace ringlab::gui
