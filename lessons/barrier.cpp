// Lesson "barrier" (world size 4): dist.barrier().
// No rank prints "after barrier" before every rank has printed "before
// barrier": the barrier is the only thing that orders the two phases.
#include "lessons/lesson.hpp"

namespace ringlab::lessons {

void barrier(ProcessGroup& pg, const LessonArgs&) {
  const int rank_id = pg.rank();
  print("before barrier", " Rank ", rank_id, " is waiting");
  pg.barrier();
  print("after barrier", " Rank ", rank_id, " passed");
}

}  // namespace ringlab::lessons
