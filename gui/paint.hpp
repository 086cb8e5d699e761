// Paints a computed layout (layout.hpp) into an ImGui draw list: it only walks
// the layout's boxes, texts, cells, arrows and labels, deciding nothing.
#pragma once

#include "gui/fonts.hpp"
#include "gui/layout.hpp"
#include "imgui.h"

namespace ringlab::gui {

// `origin`: the canvas' top-left corner on the screen.
void paint_ranks(ImDrawList* list, const RanksLayout& layout, ImVec2 origin, const Fonts& fonts);

}  // namespace ringlab::gui
