// Lesson "ddp_init_broadcast" (world size 2): seed 002's first program.
// Every rank builds nn.Linear(1, 1, bias=False) with its own weight (rank r:
// r), then wraps it in DistributedDataParallel, whose constructor broadcasts
// rank 0's parameters. The article prints:
//   at rank 0, before init, the weight is 0.0
//   at rank 1, before init, the weight is 1.0
//   at rank 1, after init, the weight is 0.0
//   at rank 0, after init, the weight is 0.0
#include "lessons/lesson.hpp"
#include "training/ddp.hpp"
#include "training/format.hpp"

namespace ringlab::lessons {

void ddp_init_broadcast(ProcessGroup& pg, const LessonArgs&) {
  using namespace training;
  const int rank = pg.rank();
  Linear model(1, 1, /*bias=*/false);
  model.weight.value[0] = static_cast<float>(rank);
  print("at rank " + std::to_string(rank) + ", before init, the weight is " +
        python_float(model.weight.value[0]));
  DistributedDataParallel ddp(model, pg);
  print("at rank " + std::to_string(rank) + ", after init, the weight is " +
        python_float(model.weight.value[0]));
}

}  // namespace ringlab::lessons
