// Lesson "reduce_scatter" (world size 4): dist.reduce_scatter(output, input_list).
// Rank r's input_list holds P tensors; entry j is [1+2r, 2+2r] * (j+1). Rank j
// ends with the sum over ranks of entry j: all_reduce's result, cut in P parts
// and each part left on one rank (the first half of a ring all_reduce).
#include "lessons/lesson.hpp"

namespace ringlab::lessons {

void reduce_scatter(ProcessGroup& pg, const LessonArgs&) {
  const int rank_id = pg.rank();
  std::vector<Tensor> input_list;
  for (int j = 0; j < pg.size(); ++j) input_list.push_back(article_input(rank_id) * (j + 1));
  print("before reduce_scatter", " Rank ", rank_id, " has input list ", input_list);
  Tensor output = Tensor::zeros(2, DType::Int64);
  pg.reduce_scatter(output, input_list, ReduceOp::SUM);
  print("after reduce_scatter", " Rank ", rank_id, " has data ", output);
}

}  // namespace ringlab::lessons
