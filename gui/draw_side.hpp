// The side panel of the walkthrough window (draw.cpp draws the rest): the
// settings, the cost model, the step's messages and bytes, the legend. At
// 1280x800 it all fits without scrolling the panel: the messages and the
// bytes table take what the rest leaves, each scrolling on its own.
#pragma once

#include <vector>

#include "gui/fonts.hpp"
#include "gui/frame.hpp"
#include "gui/state.hpp"

namespace ringlab::gui {

void draw_side(const GuiState& state, const FrameView& view, std::vector<Command>& commands,
               const Fonts& fonts);

}  // namespace ringlab::gui
