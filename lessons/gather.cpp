// Lesson "gather" (world size 4): dist.gather(tensor, gather_list, dst=0).
// Every rank keeps its tensor; the dst rank's gather_list receives all of
// them in rank order.
#include "lessons/lesson.hpp"

namespace ringlab::lessons {

void gather(ProcessGroup& pg, const LessonArgs& args) {
  const int rank_id = pg.rank();
  const int dst = args.root >= 0 ? args.root : 0;
  Tensor tensor = article_input(rank_id, dtype_of(args));
  print("before gather", " Rank ", rank_id, " has data ", tensor);
  if (rank_id == dst) {
    std::vector<Tensor> gather_list(static_cast<std::size_t>(pg.size()),
                                    Tensor::zeros(2, dtype_of(args)));
    pg.gather(tensor, gather_list, dst);
    print("after gather", " Rank ", rank_id, " has data ", tensor);
    print("gather_list:", gather_list);
  } else {
    pg.gather(tensor, dst);
    print("after gather", " Rank ", rank_id, " has data ", tensor);
  }
}

}  // namespace ringlab::lessons
