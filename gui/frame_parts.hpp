// The parts every frame has, whatever it walks through (a collective, the
// parameter server, a training step): a cell, the legend, the step's
// messages as arrows and lines, and the cost block. frame.cpp and
// training_frame.cpp fill the rest of a FrameView around these.
#pragma once

#include <string>

#include "gui/frame.hpp"
#include "gui/walkthrough.hpp"

namespace ringlab::gui {

// A cell: its value as printed, whose inputs are in it, and those ranks as a
// cell's label names them (frame_words.hpp's cell_ranks_text).
CellView make_cell(const sim::Run& run, std::string text, const sim::RankSet& provenance);

// Per rank, its color's entry in the legend: "r2", or "worker 0 (rank 2)"
// where ranks have roles.
std::vector<std::string> legend_of(const sim::Run& run);

// The messages of record step `step`: an arrow and a line each, and the
// panels' sends/receives. An arrow's label names the range and whose inputs
// it carries ("chunk 0 (r0+r3)", "block 2 (r0)": the box marks the list it
// is read from), and its range alone for where that is too long; with
// name_buffers false it leaves out any buffer ("chunk 1", not "chunk 1 of
// bucket 0").
void add_messages(FrameView& view, const sim::Run& run, sim::Step step, bool name_buffers);

// The rank a frame of record step `step` follows (FrameView::subject): the
// receiver of the message the sentence names; -1 when the step has none.
int subject_of(const sim::Run& run, sim::Step step);

// Whether every message of the run goes between neighbours on the ring of its
// ranks (FrameView::neighbours_only).
bool neighbours_only(const sim::Run& run);

// The cost block as of record step `shown` (0: nothing ran yet); `runs`: the
// frame shows that step's messages, so "this step" is its cost.
void fill_cost(CostView& cost, const Act& act, sim::Step shown, bool runs);

}  // namespace ringlab::gui
