// What the articles' pages show their programs printing, and a run of a
// lesson set beside it line by line (`ringlab lesson NAME --article`).
//
// A page is the article as published, not what its program prints: the page
// collapsed runs of spaces (Python's print puts two where the program joins
// 'Rank ' and the rank), lost a comma here and there, and carries the
// author's notes; and every run interleaves the ranks' lines its own way.
// Each such difference is written down here with its reason, so that a
// learner can tell them from a difference in what was computed. What the
// programs print under real PyTorch is tests/article_outputs.hpp's
// specification (docs/article-outputs.md), which the lessons are tested
// against; this file holds the pages, for the learner.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ringlab::lessons {

// A line of the page that the program prints otherwise, and why.
struct PageFix {
  std::string_view page;    // as the page shows it
  std::string_view prints;  // what the program prints (spaces collapsed)
  std::string_view why;
};

struct ArticlePage {
  std::string_view lesson;
  std::string_view source;  // "seed 001, its run of `python sync_p2p.py`"
  std::string_view lines;   // the page's lines, one a line, as it shows them
  std::vector<PageFix> fixes;
  // Why ringlab prints lines the page has not ("": it prints none).
  std::string_view extra;
};

// The page of `lesson`'s program; nullptr where the articles show no output
// for it (article_silence says why).
const ArticlePage* article_page(std::string_view lesson);
// Why there is no page to compare `lesson` with, and what to compare instead
// ("" when there is a page).
std::string article_silence(std::string_view lesson);

// `output` (a run of the lesson, as printed) beside the page: a row per line,
// both sides in the canonical order (lessons/canonical.hpp), a mark between
// them, then what each mark means. Marks: ' ' the same text; '~' the same but
// for spacing; '1', '2', ...: a PageFix; '+' ringlab only; '-' the page only.
// A '+' or '-' without a reason is said to be unexplained.
std::string compare_with_page(const ArticlePage& page, std::string_view output);

}  // namespace ringlab::lessons
