// The canonical form of interleaved multi-rank output (rule from the article
// reference): collapse runs of white space; a line containing "Rank <n>"
// belongs to rank n, phase 0 if it starts with "before", else phase 1; a line
// without a rank (printed by rank 0) follows the preceding rank-0 line and
// takes its phase;
// then stable-sort by (phase, rank, order within rank). Two runs whose output
// interleaved differently have the same canonical form.
// Lines starting with '#' or "try: " are the runner's, not the program's (the
// tour's headers, the line naming the algorithm and the one saying what to
// try next, on stderr): they are left out, so output read together with
// stderr compares too.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ringlab::lessons {

std::string canonicalize(std::string_view output);

// The program's lines of `output`, as printed (spaces kept), in the canonical
// order; canonicalize() is these with their spaces collapsed, one a line.
std::vector<std::string> canonical_lines(std::string_view output);

// A line with every run of white space made one space, none at either end.
std::string collapse_spaces(std::string_view line);

}  // namespace ringlab::lessons
