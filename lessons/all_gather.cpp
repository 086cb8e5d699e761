// Lesson "all_gather" (world size 4): dist.all_gather(gather_list, tensor).
// Like gather, but every rank ends with the whole list.
#include "lessons/lesson.hpp"

namespace ringlab::lessons {

void all_gather(ProcessGroup& pg, const LessonArgs& args) {
  const int rank_id = pg.rank();
  Tensor tensor = article_input(rank_id, dtype_of(args));
  print("before gather", " Rank ", rank_id, " has data ", tensor);
  std::vector<Tensor> gather_list(static_cast<std::size_t>(pg.size()),
                                  Tensor::zeros(2, dtype_of(args)));
  pg.all_gather(gather_list, tensor);
  print("after gather", " Rank ", rank_id, " has data ", tensor);
  print("after gather", " Rank ", rank_id, " has gather list ", gather_list);
}

}  // namespace ringlab::lessons
