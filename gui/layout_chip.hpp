// A rank as a chip, for the overview of layout_ranks (layout.hpp): the
// rank's color and role, then a strip of small cells per buffer it holds
// (its user buffers, and scratch while a step uses it), colored by whose
// inputs they hold and without text. Where the ranks are too many for boxes
// whose values can be read, chips show every rank at once and the focus box
// shows one in full.
#pragma once

#include <vector>

#include "gui/layout.hpp"

namespace ringlab::gui {

// Every rank's chip at the origin, `size.x` wide, its small cells `size.y`
// high.
std::vector<PanelLayout> build_chips(const FrameView& view, Vec2 size, const LayoutFonts& fonts);

}  // namespace ringlab::gui
