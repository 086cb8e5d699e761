// Lesson "scatter" (world size 4): dist.scatter(tensor, scatter_list, src=0).
// Rank 0 holds a list [tensor([0, 0]), tensor([1, 1]), ...]; rank r receives
// entry r into its tensor. Only the src rank passes a list.
#include "lessons/lesson.hpp"

namespace ringlab::lessons {

void scatter(ProcessGroup& pg, const LessonArgs& args) {
  const int rank_id = pg.rank();
  const int src = args.root >= 0 ? args.root : 0;
  Tensor tensor = article_input(rank_id, dtype_of(args));
  print("before scatter", " Rank ", rank_id, " has data ", tensor);
  if (rank_id == src) {
    std::vector<Tensor> scatter_list;
    for (int r = 0; r < pg.size(); ++r)
      scatter_list.push_back(args.dtype ? Tensor::of({1.0 * r, 1.0 * r}, *args.dtype)
                                        : Tensor::of({r, r}));
    print("scater list:", scatter_list);
    pg.scatter(tensor, scatter_list, src);
  } else {
    pg.scatter(tensor, {}, src);
  }
  print("after scatter", " Rank ", rank_id, " has data ", tensor);
}

}  // namespace ringlab::lessons
