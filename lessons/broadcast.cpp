// Lesson "broadcast" (world size 4): dist.broadcast(tensor, src=0).
// Every rank starts with its own [1+2r, 2+2r]; afterwards all hold rank 0's
// tensor([1, 2]).
#include "lessons/lesson.hpp"

namespace ringlab::lessons {

void broadcast(ProcessGroup& pg, const LessonArgs& args) {
  const int rank_id = pg.rank();
  const int src = args.root >= 0 ? args.root : 0;
  Tensor tensor = article_input(rank_id, dtype_of(args));
  print("before broadcast", " Rank ", rank_id, " has data ", tensor);
  pg.broadcast(tensor, src);
  print("after broadcast", " Rank ", rank_id, " has data ", tensor);
}

}  // namespace ringlab::lessons
