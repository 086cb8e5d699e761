// `ringlab lesson NAME --article`: the article's page beside a run of the
// lesson, every difference marked and said why (lessons/article.hpp).
// The page lines expected here are copied from the articles (seed 001's
// runs); what the programs print under real PyTorch is article_outputs.hpp.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "article_outputs.hpp"
#include "lessons/article.hpp"
#include "lessons/lesson.hpp"
#include "run_program.hpp"

namespace {

using ringlab::testing::ProgramRun;
using ringlab::testing::run_ringlab;

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The row whose ringlab side starts with `ours`: its mark and page side.
struct Row {
  bool found = false;
  char mark = '?';
  std::string page;
};

Row row_of(const std::string& output, const std::string& ours) {
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with(ours)) continue;
    // ours, padding, "  M  ", page: the mark is the first non-space after ours.
    const std::size_t mark_at = line.find_first_not_of(' ', ours.size());
    if (mark_at == std::string::npos) return {true, ' ', ""};
    if (mark_at + 1 == line.size()) return {true, line[mark_at], ""};  // ringlab's line only
    // An identical line has a blank mark: then the page side starts here.
    if (line.compare(mark_at, 3, std::string(1, line[mark_at]) + "  ") != 0)
      return {true, ' ', line.substr(mark_at)};
    return {true, line[mark_at], line.substr(mark_at + 3)};
  }
  return {};
}

ProgramRun article(const std::string& arguments) {
  ProgramRun run = run_ringlab("lesson " + arguments + " --article --timeout-ms 20000");
  INFO("ringlab lesson " << arguments << " --article printed:\n" << run.output);
  REQUIRE(run.status == 0);
  return run;
}

}  // namespace

TEST_CASE("pingpong --article: the page's lines beside ringlab's, the lost comma explained") {
  for (const std::string backend : {"inproc", "tcp"}) {
    CAPTURE(backend);
    const std::string out = article("pingpong --backend " + backend).output;
    CAPTURE(out);
    // Seed 001's page, as published: rank 1's lines lost their comma.
    const Row recv = row_of(out, "after recv, Rank  1  has data  tensor(1.)");
    REQUIRE(recv.found);
    CHECK(recv.mark == '1');
    CHECK(recv.page == "after recv Rank 1 has data tensor(1.)");
    const Row send = row_of(out, "after send, Rank  1  has data  tensor(2.)");
    CHECK(send.mark == '1');
    CHECK(send.page == "after send Rank 1 has data tensor(2.)");
    // Rank 0's kept it; only the page's single spaces differ.
    const Row zero = row_of(out, "after send, Rank  0  has data  tensor(1.)");
    CHECK(zero.mark == '~');
    CHECK(zero.page == "after send, Rank 0 has data tensor(1.)");
    CHECK(has(out, "# 1 the comma: "));
    CHECK(has(out, "real torch"));
    CHECK(has(out, "# ~ spacing: "));
    CHECK(has(out, "# order: "));
    CHECK(has(out, "# every difference is explained"));
  }
}

TEST_CASE("every lesson with a page: each difference from the page is explained") {
  std::vector<std::string> names;
  for (const auto& expected : ringlab::testing::article_outputs()) names.push_back(expected.lesson);
  names.insert(names.end(), {"ddp_init_broadcast", "ddp_grad_average"});
  for (const std::string& name : names) {
    CAPTURE(name);
    const std::string out = article(name + " --backend inproc").output;
    CAPTURE(out);
    CHECK(has(out, "# every difference is explained"));
    CHECK_FALSE(has(out, "not explained"));
  }
  // reduce: the author's note on the dst rank's line is not the program's.
  const std::string reduce = article("reduce --backend inproc").output;
  const Row dst = row_of(reduce, "after reudce  Rank  3  has data  tensor([16, 20])");
  CHECK(dst.mark == '1');
  CHECK(dst.page.starts_with("after reudce Rank 3 has data tensor([16, 20]) # reduce "));
  CHECK(has(reduce, "# 1 the author's note"));
  // ddp_grad_average: the article's two lines are the first two rows, the
  // explanation ringlab's own.
  const std::string grad = article("ddp_grad_average --backend inproc").output;
  std::istringstream lines(grad);
  std::vector<std::string> rows;
  for (std::string line; std::getline(lines, line);)
    if (!line.starts_with("#")) rows.push_back(line);
  REQUIRE(rows.size() > 2);
  for (std::size_t i = 0; i < 2; ++i) {
    const Row row = row_of(rows[i], "14.0");
    CHECK(row.mark == ' ');
    CHECK(row.page == "14.0");
  }
  const Row own = row_of(grad, "at rank 0, after DDP, the gradient is 14.0");
  CHECK(own.mark == '+');
  CHECK(has(grad, "# + ringlab's own lines"));
}

TEST_CASE("the pages agree with what the programs print under PyTorch, once their fixes apply") {
  // article_outputs.hpp: real torch's lines (spaces collapsed), the lessons'
  // specification; set beside each page, nothing is left unexplained.
  for (const auto& expected : ringlab::testing::article_outputs()) {
    CAPTURE(expected.lesson);
    const ringlab::lessons::ArticlePage* page = ringlab::lessons::article_page(expected.lesson);
    REQUIRE(page != nullptr);
    const std::string text = ringlab::lessons::compare_with_page(*page, expected.canonical);
    CAPTURE(text);
    CHECK(has(text, "# every difference is explained"));
  }
  // Seed 002: each of the 2 ranks prints 14.0.
  const std::string grad =
      ringlab::lessons::compare_with_page(*ringlab::lessons::article_page("ddp_grad_average"),
                                          "14.0\n14.0\n");
  CHECK(has(grad, "# every difference is explained"));
  CHECK_FALSE(has(grad, "+"));
}

TEST_CASE("a run that computed something else is shown unexplained, line by line") {
  const ringlab::lessons::ArticlePage& page = *ringlab::lessons::article_page("pingpong");
  // Rank 1 got 2. instead of 1.: its recv line differs from the page's.
  const std::string text = ringlab::lessons::compare_with_page(
      page,
      "after send, Rank  0  has data  tensor(1.)\n"
      "after recv, Rank  1  has data  tensor(2.)\n"
      "after send, Rank  1  has data  tensor(2.)\n"
      "after recv, Rank  0  has data  tensor(2.)\n");
  CAPTURE(text);
  CHECK(row_of(text, "after recv, Rank  1  has data  tensor(2.)").mark == '+');
  CHECK(has(text, "-  after recv Rank 1 has data tensor(1.)"));
  CHECK(has(text, "# 2 line(s) differ unexplained"));
  CHECK_FALSE(has(text, "every difference is explained"));

  // For real: Gloo's partial sums are the ring's; a binomial reduce leaves others.
  const std::string binomial = article("reduce --backend inproc --algorithm reduce=binomial").output;
  CAPTURE(binomial);
  CHECK(has(binomial, "-  after reudce Rank 2 has data tensor([12, 14])"));
  CHECK(has(binomial, "differ unexplained"));
}

TEST_CASE("every lesson has a page, or says why the articles show none") {
  for (const ringlab::lessons::Lesson& lesson : ringlab::lessons::all_lessons()) {
    CAPTURE(lesson.name);
    const std::string silence = ringlab::lessons::article_silence(lesson.name);
    CHECK((ringlab::lessons::article_page(lesson.name) != nullptr) == silence.empty());
    CHECK_FALSE(silence.starts_with("no article shows"));
  }
  const std::string barrier = article("barrier --backend inproc").output;
  CHECK(has(barrier, "after barrier  Rank  3  passed"));  // the lesson ran
  CHECK(has(barrier, "# --article: seed 001 lists barrier in its table of backends but shows no "
                     "program for it"));
}

TEST_CASE("--article refuses a run other than the article's, before any rank starts") {
  for (const auto& [arguments, message] : std::vector<std::pair<std::string, std::string>>{
           {"reduce -n 6", "on 4 ranks: leave out -n 6"},
           {"reduce --root 2", "with its own dst rank: leave out --root"},
           {"pingpong --trace /tmp/ringlab-article-trace.json", "leave out --trace"},
           {"", "name the lesson to set beside its article"}}) {
    CAPTURE(arguments);
    const ProgramRun run = run_ringlab("lesson " + arguments + " --article");
    CHECK(run.status != 0);
    CHECK(has(run.output, message));
    CHECK_FALSE(has(run.output, "Rank "));
  }
}
