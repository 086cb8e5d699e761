// The article programs' printouts in canonical form (lessons/canonical.hpp),
// transcribed from docs/article-outputs.md, which records what
// PyTorch 1.13 with Gloo printed. Lesson tests on every backend compare
// against these.
#pragma once

#include <string>
#include <vector>

namespace ringlab::testing {

struct ArticleOutput {
  const char* lesson;
  std::string canonical;
};

inline std::vector<ArticleOutput> article_outputs() {
  const std::string pingpong =
      "after send, Rank 0 has data tensor(1.)\n"
      "after recv, Rank 0 has data tensor(2.)\n"
      "after recv, Rank 1 has data tensor(1.)\n"
      "after send, Rank 1 has data tensor(2.)\n";
  const std::string gather_list =
      "[tensor([1, 2]), tensor([3, 4]), tensor([5, 6]), tensor([7, 8])]";
  return {
      {"pingpong", pingpong},
      {"pingpong_async", pingpong},  // the same program with isend/irecv
      {"broadcast",
       "before broadcast Rank 0 has data tensor([1, 2])\n"
       "before broadcast Rank 1 has data tensor([3, 4])\n"
       "before broadcast Rank 2 has data tensor([5, 6])\n"
       "before broadcast Rank 3 has data tensor([7, 8])\n"
       "after broadcast Rank 0 has data tensor([1, 2])\n"
       "after broadcast Rank 1 has data tensor([1, 2])\n"
       "after broadcast Rank 2 has data tensor([1, 2])\n"
       "after broadcast Rank 3 has data tensor([1, 2])\n"},
      {"scatter",
       "before scatter Rank 0 has data tensor([1, 2])\n"
       "scater list: [tensor([0, 0]), tensor([1, 1]), tensor([2, 2]), tensor([3, 3])]\n"
       "before scatter Rank 1 has data tensor([3, 4])\n"
       "before scatter Rank 2 has data tensor([5, 6])\n"
       "before scatter Rank 3 has data tensor([7, 8])\n"
       "after scatter Rank 0 has data tensor([0, 0])\n"
       "after scatter Rank 1 has data tensor([1, 1])\n"
       "after scatter Rank 2 has data tensor([2, 2])\n"
       "after scatter Rank 3 has data tensor([3, 3])\n"},
      {"gather",
       "before gather Rank 0 has data tensor([1, 2])\n"
       "before gather Rank 1 has data tensor([3, 4])\n"
       "before gather Rank 2 has data tensor([5, 6])\n"
       "before gather Rank 3 has data tensor([7, 8])\n"
       "after gather Rank 0 has data tensor([1, 2])\n"
       "gather_list: " + gather_list + "\n"
       "after gather Rank 1 has data tensor([3, 4])\n"
       "after gather Rank 2 has data tensor([5, 6])\n"
       "after gather Rank 3 has data tensor([7, 8])\n"},
      {"reduce",
       "before reudce Rank 0 has data tensor([1, 2])\n"
       "before reudce Rank 1 has data tensor([3, 4])\n"
       "before reudce Rank 2 has data tensor([5, 6])\n"
       "before reudce Rank 3 has data tensor([7, 8])\n"
       "after reudce Rank 0 has data tensor([16, 20])\n"
       "after reudce Rank 1 has data tensor([15, 18])\n"
       "after reudce Rank 2 has data tensor([12, 14])\n"
       "after reudce Rank 3 has data tensor([16, 20])\n"},
      {"all_gather",
       "before gather Rank 0 has data tensor([1, 2])\n"
       "before gather Rank 1 has data tensor([3, 4])\n"
       "before gather Rank 2 has data tensor([5, 6])\n"
       "before gather Rank 3 has data tensor([7, 8])\n"
       "after gather Rank 0 has data tensor([1, 2])\n"
       "after gather Rank 0 has gather list " + gather_list + "\n"
       "after gather Rank 1 has data tensor([3, 4])\n"
       "after gather Rank 1 has gather list " + gather_list + "\n"
       "after gather Rank 2 has data tensor([5, 6])\n"
       "after gather Rank 2 has gather list " + gather_list + "\n"
       "after gather Rank 3 has data tensor([7, 8])\n"
       "after gather Rank 3 has gather list " + gather_list + "\n"},
      {"all_reduce",
       "before reudce Rank 0 has data tensor([1, 2])\n"
       "before reudce Rank 1 has data tensor([3, 4])\n"
       "before reudce Rank 2 has data tensor([5, 6])\n"
       "before reudce Rank 3 has data tensor([7, 8])\n"
       "after reudce Rank 0 has data tensor([16, 20])\n"
       "after reudce Rank 1 has data tensor([16, 20])\n"
       "after reudce Rank 2 has data tensor([16, 20])\n"
       "after reudce Rank 3 has data tensor([16, 20])\n"},
  };
}

}  // namespace ringlab::testing
