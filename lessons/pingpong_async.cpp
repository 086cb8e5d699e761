// Lesson "pingpong_async" (world size 2): the same ping-pong with isend/irecv.
// The calls return at once with a Work handle; the tensor may only be read
// (or changed) after wait(). Prints the same four lines as "pingpong".
#include "lessons/lesson.hpp"

namespace ringlab::lessons {

void pingpong_async(ProcessGroup& pg, const LessonArgs& args) {
  const int rank_id = pg.rank();
  Tensor tensor = Tensor::zeros(1, dtype_of(args, DType::Float32));
  if (rank_id == 0) {
    tensor += 1;
    Work req = pg.isend(tensor, /*dst=*/1);
    req.wait();
    print("after send, Rank ", rank_id, " has data ", tensor[0]);
    req = pg.irecv(tensor, /*src=*/1);
    req.wait();
    print("after recv, Rank ", rank_id, " has data ", tensor[0]);
  } else if (rank_id == 1) {
    Work req = pg.irecv(tensor, /*src=*/0);
    req.wait();
    print("after recv, Rank ", rank_id, " has data ", tensor[0]);
    tensor += 1;
    req = pg.isend(tensor, /*dst=*/0);
    req.wait();
    print("after send, Rank ", rank_id, " has data ", tensor[0]);
  }
}

}  // namespace ringlab::lessons
