// The one path a learner is pointed to from every entry: README's first
// screen, `ringlab start` and the end of the tour name the same three steps,
// a lesson, the GUI, an exercise (one thread: the ring all-reduce).
#pragma once

#include <span>
#include <string_view>

namespace ringlab::lessons {

struct NextStep {
  std::string_view command;  // as typed, "ringlab lesson all_reduce"
  std::string_view why;      // what it shows, in a few words
};

std::span<const NextStep> start_here();

// Prints "<heading>" and the steps, numbered, one a line:
//   "  1. ringlab lesson all_reduce               the article's all_reduce ..."
void print_start_here(std::string_view heading);

}  // namespace ringlab::lessons
