// The articles' pages (article.hpp): the lines each shows its program
// printing, copied as published (seed 001's runs of the collectives, seed
// 002's two DDP programs), and what the page got wrong.
#include <string>

#include "lessons/article.hpp"

namespace ringlab::lessons {

namespace {

constexpr std::string_view kPingpong =
    "after send, Rank 0 has data tensor(1.)\n"
    "after recv Rank 1 has data tensor(1.)\n"
    "after send Rank 1 has data tensor(2.)\n"
    "after recv, Rank 0 has data tensor(2.)\n";

constexpr std::string_view kComma =
    "the comma: the program's string is 'after recv, Rank ' ('after send, Rank '), so it "
    "prints \"after recv, Rank  1\", and real torch does (tests/python runs the program on "
    "Gloo); the article's page lost the comma on rank 1's lines";

std::vector<PageFix> pingpong_fixes() {
  return {{"after recv Rank 1 has data tensor(1.)", "after recv, Rank 1 has data tensor(1.)", kComma},
          {"after send Rank 1 has data tensor(2.)", "after send, Rank 1 has data tensor(2.)",
           kComma}};
}

// Seed 001's collectives with a src or dst rank.
void add_rooted(std::vector<ArticlePage>& all) {
  all.push_back({"broadcast", "seed 001, its run of the broadcast program",
                 "before broadcast Rank 1 has data tensor([3, 4])\n"
                 "before broadcast Rank 0 has data tensor([1, 2])\n"
                 "before broadcast Rank 2 has data tensor([5, 6])\n"
                 "before broadcast Rank 3 has data tensor([7, 8])\n"
                 "after broadcast Rank 1 has data tensor([1, 2])\n"
                 "after broadcast Rank 0 has data tensor([1, 2])\n"
                 "after broadcast Rank 2 has data tensor([1, 2])\n"
                 "after broadcast Rank 3 has data tensor([1, 2])\n",
                 {}, ""});
  all.push_back({"scatter", "seed 001, its run of `python scatter.py`",
                 "before scatter Rank 1 has data tensor([3, 4])\n"
                 "before scatter Rank 0 has data tensor([1, 2])\n"
                 "before scatter Rank 2 has data tensor([5, 6])\n"
                 "scater list: [tensor([0, 0]), tensor([1, 1]), tensor([2, 2]), tensor([3, 3])]\n"
                 "before scatter Rank 3 has data tensor([7, 8])\n"
                 "after scatter Rank 1 has data tensor([1, 1])\n"
                 "after scatter Rank 0 has data tensor([0, 0])\n"
                 "after scatter Rank 3 has data tensor([3, 3])\n"
                 "after scatter Rank 2 has data tensor([2, 2])\n",
                 {}, ""});
  all.push_back({"gather", "seed 001, its run of `python gather.py`",
                 "before gather Rank 0 has data tensor([1, 2])\n"
                 "before gather Rank 3 has data tensor([7, 8])\n"
                 "after gather Rank 3 has data tensor([7, 8])\n"
                 "before gather Rank 1 has data tensor([3, 4])\n"
                 "before gather Rank 2 has data tensor([5, 6])\n"
                 "after gather Rank 1 has data tensor([3, 4])\n"
                 "after gather Rank 2 has data tensor([5, 6])\n"
                 "after gather Rank 0 has data tensor([1, 2])\n"
                 "gather_list: [tensor([1, 2]), tensor([3, 4]), tensor([5, 6]), tensor([7, 8])]\n",
                 {}, ""});
  all.push_back(
      {"reduce", "seed 001, its run of `python reduce.py`",
       "before reudce Rank 3 has data tensor([7, 8])\n"
       "before reudce Rank 0 has data tensor([1, 2])\n"
       "before reudce Rank 2 has data tensor([5, 6])\n"
       "before reudce Rank 1 has data tensor([3, 4])\n"
       "after reudce Rank 1 has data tensor([15, 18])\n"
       "after reudce Rank 0 has data tensor([16, 20])\n"
       "after reudce Rank 3 has data tensor([16, 20]) # reduce \xe7\x9a\x84\xe6\x9c\x80\xe7\xbb\x88"
       "\xe7\xbb\x93\xe6\x9e\x9c\n"
       "after reudce Rank 2 has data tensor([12, 14])\n",
       {{"after reudce Rank 3 has data tensor([16, 20]) # reduce \xe7\x9a\x84\xe6\x9c\x80\xe7\xbb"
         "\x88\xe7\xbb\x93\xe6\x9e\x9c",
         "after reudce Rank 3 has data tensor([16, 20])",
         "the author's note: \"# reduce \xe7\x9a\x84\xe6\x9c\x80\xe7\xbb\x88\xe7\xbb\x93\xe6\x9e"
         "\x9c\" (reduce's final result) marks the dst rank's line on the page; the program "
         "prints no such thing"}},
       ""});
}

// Seed 001's collectives whose result every rank gets.
void add_everyones(std::vector<ArticlePage>& all) {
  all.push_back({"all_gather", "seed 001, its run of `python all_gather.py`",
                 "before gather Rank 0 has data tensor([1, 2])\n"
                 "before gather Rank 2 has data tensor([5, 6])\n"
                 "before gather Rank 3 has data tensor([7, 8])\n"
                 "before gather Rank 1 has data tensor([3, 4])\n"
                 "after gather Rank 1 has data tensor([3, 4])\n"
                 "after gather Rank 0 has data tensor([1, 2])\n"
                 "after gather Rank 3 has data tensor([7, 8])\n"
                 "after gather Rank 2 has data tensor([5, 6])\n"
                 "after gather Rank 1 has gather list [tensor([1, 2]), tensor([3, 4]), "
                 "tensor([5, 6]), tensor([7, 8])]\n"
                 "after gather Rank 0 has gather list [tensor([1, 2]), tensor([3, 4]), "
                 "tensor([5, 6]), tensor([7, 8])]\n"
                 "after gather Rank 3 has gather list [tensor([1, 2]), tensor([3, 4]), "
                 "tensor([5, 6]), tensor([7, 8])]\n"
                 "after gather Rank 2 has gather list [tensor([1, 2]), tensor([3, 4]), "
                 "tensor([5, 6]), tensor([7, 8])]\n",
                 {}, ""});
  all.push_back({"all_reduce", "seed 001, its run of `python all_reduce.py`",
                 "before reudce Rank 3 has data tensor([7, 8])\n"
                 "before reudce Rank 2 has data tensor([5, 6])\n"
                 "before reudce Rank 0 has data tensor([1, 2])\n"
                 "before reudce Rank 1 has data tensor([3, 4])\n"
                 "after reudce Rank 0 has data tensor([16, 20])\n"
                 "after reudce Rank 3 has data tensor([16, 20])\n"
                 "after reudce Rank 2 has data tensor([16, 20])\n"
                 "after reudce Rank 1 has data tensor([16, 20])\n",
                 {}, ""});
}

// Seed 002's two DDP programs.
void add_ddp(std::vector<ArticlePage>& all) {
  all.push_back({"ddp_init_broadcast", "seed 002, the output of its first program",
                 "at rank 0, before init, the weight is 0.0\n"
                 "at rank 1, before init, the weight is 1.0\n"
                 "at rank 1, after init, the weight is 0.0\n"
                 "at rank 0, after init, the weight is 0.0\n",
                 {}, ""});
  all.push_back({"ddp_grad_average",
                 "seed 002, the output of its second program (print(model.module.weight.grad."
                 "item()) on each of 2 ranks)",
                 "14.0\n14.0\n", {},
                 "ringlab's own lines: after the article's two it explains them (the samples, "
                 "each rank's local gradient, DDP's average), then runs the same four samples on "
                 "4 ranks, which the article does not: 7.0, as DDP averages over processes"});
}

std::vector<ArticlePage> pages() {
  std::vector<ArticlePage> all;
  all.push_back({"pingpong", "seed 001, its run of `python sync_p2p.py`", kPingpong,
                 pingpong_fixes(), ""});
  all.push_back({"pingpong_async",
                 "seed 001 shows no run of its isend/irecv program; this is its run of `python "
                 "sync_p2p.py`, whose four lines the isend/irecv program prints too",
                 kPingpong, pingpong_fixes(), ""});
  add_rooted(all);
  add_everyones(all);
  add_ddp(all);
  return all;
}

}  // namespace

const ArticlePage* article_page(std::string_view lesson) {
  // Made on the first call, not before main.
  static const std::vector<ArticlePage> all = pages();
  for (const ArticlePage& page : all)
    if (page.lesson == lesson) return &page;
  return nullptr;
}

std::string article_silence(std::string_view lesson) {
  const std::string name(lesson);
  if (article_page(lesson)) return "";
  if (lesson == "reduce_scatter" || lesson == "all_to_all" || lesson == "barrier")
    return "seed 001 lists " + name +
           " in its table of backends but shows no program for it: the lesson is ringlab's own, "
           "tested against closed forms";
  if (lesson == "support")
    return "the lesson prints seed 001's table itself, the article's columns beside ringlab's "
           "backends, each cell run here";
  if (lesson == "ddp_basic" || lesson == "ddp_checkpoint" || lesson == "model_parallel" ||
      lesson == "demo_model_parallel")
    return "seed 004's tutorial program prints nothing; the lesson prints what PyTorch 1.13 "
           "computes for it (tests/golden/" + name +
           ".txt, made by tests/golden/make_ddp_golden.py)";
  if (lesson == "horovod") return "seed 003 shows Horovod's program, but no output of it";
  if (lesson == "train")
    return "the lesson is ringlab's own, a run to check by hand or against PyTorch "
           "(tests/golden/train_*.txt)";
  if (lesson == "train_elastic")
    return "seed 000 shows a run on two nodes of 4 GPUs, whose losses come from random data and "
           "whose lines carry process ids: the lesson prints lines of the same form, with its "
           "own numbers (docs/elastic.md)";
  return "no article shows what " + name + " prints";
}

}  // namespace ringlab::lessons
