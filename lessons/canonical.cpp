#include "lessons/canonical.hpp"

#include <algorithm>
#include <cctype>
#include <regex>
#include <sstream>
#include <vector>

namespace ringlab::lessons {

std::string collapse_spaces(std::string_view line) {
  std::string out;
  bool in_space = false;
  for (char ch : line) {
    if (std::isspace(static_cast<unsigned char>(ch))) {
      in_space = true;
      continue;
    }
    if (in_space && !out.empty()) out += ' ';
    in_space = false;
    out += ch;
  }
  return out;
}

std::vector<std::string> canonical_lines(std::string_view output) {
  struct Line {
    int phase;
    int rank;
    std::size_t order;
    std::string raw;
  };
  static const std::regex rank_pattern(R"(Rank (\d+))");
  std::vector<Line> lines;
  // Lines without a rank ("scater list: ...", "gather_list: ...") are printed
  // by rank 0 right after one of its own lines, whatever other ranks printed
  // in between: they take rank 0 and the phase of rank 0's latest line.
  int rank0_phase = 0;
  std::istringstream in{std::string(output)};
  std::string raw;
  while (std::getline(in, raw)) {
    const std::string text = collapse_spaces(raw);
    if (text.empty() || text.front() == '#' || text.starts_with("try: ")) continue;
    std::smatch match;
    int rank = 0, phase = rank0_phase;
    if (std::regex_search(text, match, rank_pattern)) {
      rank = std::stoi(match[1]);
      phase = text.rfind("before", 0) == 0 ? 0 : 1;
      if (rank == 0) rank0_phase = phase;
    }
    lines.push_back({phase, rank, lines.size(), raw});
  }
  std::stable_sort(lines.begin(), lines.end(), [](const Line& a, const Line& b) {
    return std::tie(a.phase, a.rank) < std::tie(b.phase, b.rank);
  });
  std::vector<std::string> sorted;
  for (Line& line : lines) sorted.push_back(std::move(line.raw));
  return sorted;
}

std::string canonicalize(std::string_view output) {
  std::string result;
  for (const std::string& line : canonical_lines(output)) result += collapse_spaces(line) + '\n';
  return result;
}

}  // namespace ringlab::lessons
