// What one frame shows, computed from the state and the recorded run only:
// every rank's buffers (as the articles print them, and as cells with their
// provenance), the step's messages, one sentence, and the cost model's
// numbers. layout.cpp places it on the canvas, paint.cpp and draw.cpp turn it
// into pixels; the headless tests read it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "gui/frame_words.hpp"
#include "gui/state.hpp"

namespace ringlab::gui {

struct CellView {
  std::string text;          // the element's value, as the tensor prints it ("": none recorded)
  sim::RankSet provenance;   // which ranks' inputs are inside it
  std::string ranks;         // those ranks as the cell's label: "3", "0-2", "all"
};

struct BufferView {
  std::string name;          // the simulator's region name: "buf", "send", "scratch#2"
  std::string label;         // as the articles name it: "scatter_list", "gather_list"
  std::string printed;       // tensor([12, 14]) or [tensor([0, 0]), tensor([1, 1])]
  std::vector<CellView> cells;
  std::size_t block = 0;     // elements per printed block (lists), else cells.size()
  bool primary = false;      // the rank's tensor in the article's program
  bool scratch = false;      // allocated by the algorithm, not the user's
  bool changed = false;      // written in this frame's step
  bool sent = false;         // a message of this frame's step was read from it
};

struct RankPanel {
  int rank = 0;
  std::string role;          // "rank 2", "server 0", "worker 1"
  std::string line;          // "Rank 2 has data tensor([12, 14])"
  std::vector<BufferView> buffers;  // primary first
  bool sends = false;        // in this frame's step
  bool receives = false;
};

struct ArrowView {
  int src = 0;
  int dst = 0;
  std::string label;         // "chunk 0 (r0+r3)", "its reply (server 1 + worker 0)"
  std::string range;         // the label without whose inputs: "chunk 0", "its reply"
  bool reduced = false;      // the receiver reduced it into its own buffer
  bool empty = false;        // it carries nothing: "empty chunk", a barrier's signal
  bool lost = false;         // it never arrived (a real run that failed): drawn dashed, in red
};

struct CostView {
  bool has_step = false;     // false on a "before" frame
  double step_seconds = 0;
  double elapsed_seconds = 0;  // through this step
  double total_seconds = 0;
  std::string bottleneck;
  std::size_t step_bytes = 0;
  std::vector<std::size_t> step_bytes_sent;    // per rank, this step
  std::vector<std::size_t> bytes_sent_so_far;  // per rank, through this step
  std::vector<std::size_t> total_bytes_sent;   // per rank, the whole act
  bool carries_data = true;                    // false for a barrier: no size, algbw or busbw
  std::size_t size_bytes = 0;
  double algbw_GBps = 0;
  double busbw_GBps = 0;
};

struct FrameView {
  std::string act_title;     // "all_reduce (ring, sum)"
  std::string position;      // "step 2 of 6" / "before step 1"
  std::string sentence;      // what happens
  std::vector<RankPanel> ranks;
  std::vector<ArrowView> arrows;
  // Per rank, its color's entry in the legend: "r2" for plain ranks, "worker 0
  // (rank 2)" where ranks have roles. The only place a role's rank number shows.
  std::vector<std::string> legend;
  std::vector<std::string> message_lines;  // one per message
  CostView cost;
  std::string values_note;   // set when the simulator recorded no values
  // A training step (training_walk.hpp): cells hold values computed from the
  // ranks' batches, and the side panel says how much communication hides
  // behind backward.
  bool training = false;
  std::vector<std::string> overlap_lines;
  // The rank the sentence follows: the receiver of the message it names (in
  // a frame without messages, of the last step shown; -1: none). Where the
  // ranks are too many to show whole, the canvas shows this one in detail
  // unless the learner picked another.
  int subject = -1;
  // Every message of the act goes between neighbours on the ring (rank r and
  // r + 1 or r - 1, mod P): the middle of a ring of boxes stays clear.
  bool neighbours_only = false;
};

FrameView build_frame(const GuiState& state);
FrameView build_frame(const Recording& recording, int frame);

// One sentence for a frame ("step 2 of 6, reduce-scatter: rank 1 sends
// chunk 0 to rank 2, which adds it to its own"); record() keeps them for the
// step log.
std::string frame_sentence(const Recording& recording, const FrameRef& frame);

}  // namespace ringlab::gui
