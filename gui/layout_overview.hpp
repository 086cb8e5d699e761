// The overview arrangement of layout_ranks (layout.hpp), for frames whose
// ranks are too many for boxes whose values can be read: every rank a chip
// (layout_chip.hpp), in the ring or the groups its boxes would take, and
// the focus box, one rank in full:
//   middle  a ring: the focus box in its middle, clear of the arrows between
//           neighbours. Where messages also go across the ring (all_to_all,
//           trees), the focus's are drawn to and from its box, and the
//           others faint, under the chips and the box: they show how many
//           go at once, the focus's what goes where.
//   side    groups (servers, workers), pairs, and rings whose middle is
//           too small for the box: the chips in the canvas' left part, the
//           focus box in a column on the right, which no arrow crosses.
// The focus is the rank the learner picked, else the one the sentence
// follows (focus_rank).
#pragma once

#include "gui/layout.hpp"

namespace ringlab::gui {

// Sets layout's panels (chips), focus and focus_box; false (layout
// untouched) when not even the overview fits the canvas.
bool lay_out_overview(RanksLayout& layout, const FrameView& view, int selected,
                      const LayoutFonts& fonts);

}  // namespace ringlab::gui
