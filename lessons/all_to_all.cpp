// Lesson "all_to_all" (world size 4): dist.all_to_all(output_list, input_list).
// Rank r sends entry j of its input_list to rank j and receives rank j's entry
// r into output_list[j]: a transpose of the (rank, entry) matrix. Entry j on
// rank r is tensor([10*r + j]).
#include "lessons/lesson.hpp"

namespace ringlab::lessons {

void all_to_all(ProcessGroup& pg, const LessonArgs&) {
  const int rank_id = pg.rank();
  std::vector<Tensor> input_list, output_list;
  for (int j = 0; j < pg.size(); ++j) {
    input_list.push_back(Tensor::of({10 * rank_id + j}));
    output_list.push_back(Tensor::zeros(1, DType::Int64));
  }
  print("before all_to_all", " Rank ", rank_id, " has input list ", input_list);
  pg.all_to_all(output_list, input_list);
  print("after all_to_all", " Rank ", rank_id, " has output list ", output_list);
}

}  // namespace ringlab::lessons
