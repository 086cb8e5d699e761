// Lesson "pingpong" (world size 2): blocking send/recv.
// Rank 0 adds 1 to a zero tensor and sends it; rank 1 receives it, adds 1 and
// sends it back. Prints, in some interleaving:
//   after send, Rank 0 has data tensor(1.)     after recv, Rank 1 has data tensor(1.)
//   after send, Rank 1 has data tensor(2.)     after recv, Rank 0 has data tensor(2.)
#include "lessons/lesson.hpp"

namespace ringlab::lessons {

void pingpong(ProcessGroup& pg, const LessonArgs& args) {
  const int rank_id = pg.rank();
  Tensor tensor = Tensor::zeros(1, dtype_of(args, DType::Float32));
  if (rank_id == 0) {
    tensor += 1;
    pg.send(tensor, /*dst=*/1);
    print("after send, Rank ", rank_id, " has data ", tensor[0]);
    pg.recv(tensor, /*src=*/1);
    print("after recv, Rank ", rank_id, " has data ", tensor[0]);
  } else if (rank_id == 1) {
    pg.recv(tensor, /*src=*/0);
    print("after recv, Rank ", rank_id, " has data ", tensor[0]);
    tensor += 1;
    pg.send(tensor, /*dst=*/0);
    print("after send, Rank ", rank_id, " has data ", tensor[0]);
  }
}

}  // namespace ringlab::lessons
