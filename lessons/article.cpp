// compare_with_page (article.hpp): a run of a lesson beside the article's page.
#include "lessons/article.hpp"

#include <algorithm>
#include <sstream>

#include "lessons/canonical.hpp"

namespace ringlab::lessons {

namespace {

constexpr std::string_view kSpacing =
    "spacing: the programs print with print('after send, Rank ', rank, ' has data ', tensor), "
    "and Python joins print's arguments with one space, so \"Rank  0\" has two spaces; the "
    "article's page collapsed runs of spaces";
constexpr std::string_view kOrder =
    "order: each run interleaves the ranks' lines its own way, the article's run as this one; "
    "each page line is set beside ringlab's line that says the same, and lines that name a "
    "Rank are listed by phase (before, then after) and rank, as docs/article-outputs.md "
    "compares them";

struct Row {
  std::string ours;  // as printed ("" where only the page has the line)
  std::string page;  // as the page shows it ("" where only ringlab prints it)
  char mark = ' ';
  std::size_t page_at = 0;  // the page line's place on the page (rows that have one)
};

std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> lines;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);)
    if (!collapse_spaces(line).empty()) lines.push_back(line);
  return lines;
}

// The mark of a PageFix: '1' for the first reason, '2' for the next, ...
// (fixes that share a reason share a mark).
char fix_mark(const ArticlePage& page, const PageFix& fix) {
  std::vector<std::string_view> reasons;
  for (const PageFix& f : page.fixes) {
    if (std::find(reasons.begin(), reasons.end(), f.why) == reasons.end()) reasons.push_back(f.why);
    if (f.why == fix.why) break;
  }
  return static_cast<char>('0' + reasons.size());
}

const PageFix* fix_of(const ArticlePage& page, const std::string& line) {
  for (const PageFix& fix : page.fixes)
    if (fix.page == line) return &fix;
  return nullptr;
}

// Pairs each of ringlab's lines with an unused page line that says the same
// (once the page's fixes are applied), both in the canonical order.
std::vector<Row> pair_rows(const ArticlePage& page, std::string_view output) {
  const std::vector<std::string> theirs = canonical_lines(page.lines);
  std::vector<bool> used(theirs.size(), false);
  // Where each line stands on the page (equal lines keep their order).
  std::vector<std::size_t> place;
  std::vector<std::string> as_shown = lines_of(page.lines);
  for (const std::string& line : theirs) {
    const auto at = std::find(as_shown.begin(), as_shown.end(), line);
    place.push_back(static_cast<std::size_t>(at - as_shown.begin()));
    if (at != as_shown.end()) at->clear();  // taken
  }
  std::vector<Row> rows;
  for (const std::string& ours : canonical_lines(output)) {
    Row row{ours, "", '+'};
    for (std::size_t i = 0; i < theirs.size(); ++i) {
      const PageFix* fix = fix_of(page, theirs[i]);
      const std::string prints = fix ? std::string(fix->prints) : collapse_spaces(theirs[i]);
      if (used[i] || prints != collapse_spaces(ours)) continue;
      used[i] = true;
      row.page = theirs[i];
      row.page_at = place[i];
      row.mark = fix ? fix_mark(page, *fix) : ours == theirs[i] ? ' ' : '~';
      break;
    }
    rows.push_back(row);
  }
  for (std::size_t i = 0; i < theirs.size(); ++i)
    if (!used[i]) rows.push_back({"", theirs[i], '-'});
  return rows;
}

bool has_mark(const std::vector<Row>& rows, char mark) {
  return std::any_of(rows.begin(), rows.end(), [&](const Row& r) { return r.mark == mark; });
}

// Whether the page lines beside ringlab's come in the page's own order.
bool in_page_order(const std::vector<Row>& rows) {
  std::size_t last = 0;
  bool first = true;
  for (const Row& row : rows) {
    if (row.page.empty() || row.ours.empty()) continue;
    if (!first && row.page_at < last) return false;
    last = row.page_at;
    first = false;
  }
  return true;
}

// What each mark of `rows` means, a line each, then the verdict.
std::string legend(const ArticlePage& page, const std::vector<Row>& rows, std::string_view output) {
  std::string text;
  if (has_mark(rows, '~')) text += "# ~ " + std::string(kSpacing) + "\n";
  std::vector<std::string_view> said;
  for (const PageFix& fix : page.fixes) {
    if (std::find(said.begin(), said.end(), fix.why) != said.end()) continue;
    said.push_back(fix.why);
    if (has_mark(rows, fix_mark(page, fix)))
      text += std::string("# ") + fix_mark(page, fix) + " " + std::string(fix.why) + "\n";
  }
  if (has_mark(rows, '+') && !page.extra.empty()) text += "# + " + std::string(page.extra) + "\n";
  if (!in_page_order(rows) || canonical_lines(output) != lines_of(output))
    text += "# " + std::string(kOrder) + "\n";
  const auto unexplained = std::count_if(rows.begin(), rows.end(), [&](const Row& r) {
    return r.mark == '-' || (r.mark == '+' && page.extra.empty());
  });
  if (unexplained == 0)
    return text + "# every difference is explained: the program computed what the article's did\n";
  if (has_mark(rows, '+') && page.extra.empty())
    text += "# + not explained: ringlab printed this and the article's page has no such line\n";
  if (has_mark(rows, '-'))
    text += "# - not explained: the article's page has this and ringlab printed no such line\n";
  return text + "# " + std::to_string(unexplained) +
         " line(s) differ unexplained: this run computed something other than the article's "
         "program (another algorithm, world size or root?)\n";
}

}  // namespace

std::string compare_with_page(const ArticlePage& page, std::string_view output) {
  const std::vector<Row> rows = pair_rows(page, output);
  const std::string heading = "# ringlab (this run)";
  std::size_t width = heading.size();
  for (const Row& row : rows) width = std::max(width, row.ours.size());
  const auto row_text = [&](const std::string& ours, char mark, const std::string& page_line) {
    std::string line = ours;
    line.resize(width, ' ');
    line += std::string("  ") + mark + "  " + page_line;
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line + "\n";
  };
  std::string text = "# the article's page: " + std::string(page.source) + "\n";
  text += row_text(heading, ' ', "the article's page");
  for (const Row& row : rows) text += row_text(row.ours, row.mark, row.page);
  return text + legend(page, rows, output);
}

}  // namespace ringlab::lessons
