// Lesson "all_reduce" (world size 4): dist.all_reduce(tensor, op=SUM).
// Like reduce, but every rank ends with the sum tensor([16, 20]).
#include "lessons/lesson.hpp"

namespace ringlab::lessons {

void all_reduce(ProcessGroup& pg, const LessonArgs& args) {
  const int rank_id = pg.rank();
  Tensor tensor = article_input(rank_id, dtype_of(args));
  print("before reudce", " Rank ", rank_id, " has data ", tensor);
  pg.all_reduce(tensor, ReduceOp::SUM);
  print("after reudce", " Rank ", rank_id, " has data ", tensor);
}

}  // namespace ringlab::lessons
