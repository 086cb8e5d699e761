// Lesson "reduce" (world size 4): dist.reduce(tensor, dst=3, op=SUM).
// The dst rank ends with the sum tensor([16, 20]). The other ranks are left
// with partial sums: the reduction walks a ring toward lower ranks, each rank
// adding its own value (rank3 [7, 8] -> rank2 [12, 14] -> rank1 [15, 18] ->
// rank0 [16, 20] -> dst). This is what Gloo does, and what the article prints.
//
// The article's dst=3 holds at any world size that has a rank 3 (`-n 6`
// reduces to rank 3 too). A world of fewer than 4 ranks has no rank 3; there
// the lesson reduces to the last rank, the one nearest to 3. --root overrides.
#include <algorithm>

#include "lessons/lesson.hpp"

namespace ringlab::lessons {

void reduce(ProcessGroup& pg, const LessonArgs& args) {
  const int rank_id = pg.rank();
  constexpr int kArticleDst = 3;
  const int dst = args.root >= 0 ? args.root : std::min(kArticleDst, pg.size() - 1);
  Tensor tensor = article_input(rank_id, dtype_of(args));
  print("before reudce", " Rank ", rank_id, " has data ", tensor);
  pg.reduce(tensor, dst, ReduceOp::SUM);
  print("after reudce", " Rank ", rank_id, " has data ", tensor);
}

}  // namespace ringlab::lessons
