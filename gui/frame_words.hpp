// The words every frame speaks, for a collective and a training step alike:
// how a rank is named (its number, or its role), a message's range, whose
// inputs it carries and what its receiver does with it, the phase a step
// belongs to, and how times and numbers are printed. frame.cpp and
// training_frame.cpp build their frames from these; nothing here knows which.
#pragma once

#include <string>
#include <vector>

#include "ops/dtype.hpp"
#include "ops/reduce_op.hpp"
#include "ops/tensor.hpp"
#include "simulator/record.hpp"

namespace ringlab::gui {

// ---- ranks
// "rank 2", or the rank's role where the run gives it one ("server 0").
std::string role_of(const sim::Run& run, int rank);
// Whether ranks have roles of their own ("server 0", "worker 1"): then the
// frame names them by role, and rank numbers appear only in the legend.
bool has_roles(const sim::Run& run);
// The cost model speaks of ranks ("send port of rank 2", "ring link 2->3"):
// where ranks have roles, the same text with their roles instead.
std::string with_role_names(const sim::Run& run, const std::string& text);
// Whose inputs a set holds, named as the frame names ranks: "r0+r3", "r0+r3-r7"
// or "all ranks" for plain ranks, "server 1 + workers 0, 2" where ranks have
// roles.
std::string provenance_text(const sim::Run& run, const sim::RankSet& set);
// The same, short enough for a cell: "3", "0-2", "0,13-15", "all" (every
// rank); "s1 w0,2" where ranks have roles.
std::string cell_ranks_text(const sim::Run& run, const sim::RankSet& set);

// ---- buffers
// The buffers a program hands over and reads afterwards (the parameter
// server's params, update and pulled; a collective's or a training step's
// named buffers), as opposed to the algorithm's scratch.
bool is_user_region(const sim::Run& run, const sim::Region& region);
// Whether a region holds one block per rank (scatter's send, gather's recv,
// all_gather's buf): then it prints as a list, as the articles print
// scatter_list and gather_list.
bool holds_blocks(const sim::Run& run, const sim::Region& region);
// The articles' names for the list arguments; other regions keep theirs.
std::string display_name(const sim::Run& run, const sim::Region& region);

// ---- messages
// Names a message's range the way the walkthrough speaks of it: "chunk 1",
// "block 2 of its scatter_list", "its tensor", "chunk 0 of bucket 1",
// "elements [2, 5) of scratch#1".
std::string location_label(const sim::Run& run, const sim::Location& location);
// Provenance of what a message carried ("r0+r3").
std::string payload_text(const sim::Run& run, const sim::Message& message);
// What a receiver does with a message it reduces: "adds it to its own".
std::string op_verb(ReduceOp op);
// One message in words: "rank 1 sends chunk 0 to rank 2, which adds it to
// its own".
std::string message_clause(const sim::Run& run, const sim::Message& message);
// The messages of a step in the order the sentences tell them: those that
// carry something first (they tell more than an empty chunk), else in the
// record's order. A sentence names the first.
std::vector<sim::Message> messages_as_told(const sim::Run& run, sim::Step step);
// A message without bytes: "empty message" (a barrier's signal) or "empty
// chunk" (more ranks than elements).
std::string empty_message_name(const sim::Run& run);
// The phase a step of a run belongs to, named after what its messages do:
// "reduce-scatter", "all-gather", "push: servers apply the updates".
std::string phase_name(const sim::Run& run, sim::Step step);

// ---- numbers
// "5.00 us", "1.234 ms", "1.234 s": the one way times are printed.
std::string seconds_text(double seconds);
// A value as a cell shows it, and as the sentences print numbers: the one
// place values become text. Integer dtypes print whole ("12"), floating
// point ones with four significant digits ("-0.5938", "102.5").
std::string value_text(double value, DType dtype);
// Element i of a tensor, as a cell shows it.
std::string element_text(const Tensor& tensor, std::size_t i);
// A floating-point number (a loss, a gradient, a learning rate).
std::string number_text(double value);
// "a", "a and b", "a, b and c".
std::string list_text(const std::vector<std::string>& items);
std::string capitalized(std::string text);

}  // namespace ringlab::gui
