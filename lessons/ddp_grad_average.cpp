// Lesson "ddp_grad_average" (world size 2, then 4): seed 002's second program.
// w = 1 (nn.Linear(1, 1, bias=False)), label 0, and each rank's loss is
// sum((w x)^2) over its own samples, so its gradient is sum(2 w x^2).
// The same four samples x = 0, 1, 2, 3 are spread over the ranks:
//   2 ranks, x = [2r, 2r+1]: local gradients 2 and 26; DDP averages them: 14.0
//   4 ranks, x = [r]:        local gradients 0, 2, 8, 18;                 7.0
// The gradient of the loss over all four samples is 28 either way: DDP
// averages over processes (divides the sum by the world size), while inside
// a process the gradient is whatever the local loss gives (here a sum over
// the batch). That contrast is the lesson, so both worlds run by default.
// Every rank first prints what the article's program prints, its gradient
// after DDP (print(model.module.weight.grad.item()): 14.0 on each of the 2
// ranks), and then the explanation: the local gradient, computed with
// ddp.no_sync() (backward without communication), and DDP's average.
#include <string>

#include "lessons/lesson.hpp"
#include "training/ddp.hpp"
#include "training/format.hpp"
#include "training/loss.hpp"

namespace ringlab::lessons {

std::string four_samples_problem(int world) {
  if (4 % world == 0) return "";
  return "the four samples x = 0, 1, 2, 3 must split evenly: use 1, 2 or 4 ranks";
}

namespace {

// Rank 0 says which samples the ranks hold; every rank waits for that line.
void print_samples(ProcessGroup& pg, int per_rank) {
  const int world = pg.size();
  if (pg.rank() == 0)
    print("the samples x = 0, 1, 2, 3 on " + std::to_string(world) + " rank" +
          (world > 1 ? "s" : "") + ", " + std::to_string(per_rank) +
          " per rank; w = 1, label 0, loss = sum((w*x - label)**2) on each rank");
  pg.barrier();
}

}  // namespace

void ddp_grad_average(ProcessGroup& pg, const LessonArgs&) {
  using namespace training;
  const int rank = pg.rank();
  const int world = pg.size();
  const int per_rank = 4 / world;

  Linear model(1, 1, /*bias=*/false);
  model.weight.value.fill(1.0f);
  DistributedDataParallel ddp(model, pg);
  FloatTensor x = FloatTensor::matrix(per_rank, 1);
  std::string shown;
  for (int k = 0; k < per_rank; ++k) {
    x[static_cast<std::size_t>(k)] = static_cast<float>(rank * per_rank + k);
    shown += (k ? ", " : "") + python_float(x[static_cast<std::size_t>(k)]);
  }
  const FloatTensor label = FloatTensor::matrix(per_rank, 1);
  MSELoss loss_fn(Reduction::Sum);  // torch.sum((y - label)**2)

  {
    auto local_only = ddp.no_sync();
    loss_fn.forward(ddp(x), label);
    ddp.backward(loss_fn.backward());
  }
  const float local = model.weight.grad[0];
  model.zero_grad();

  loss_fn.forward(ddp(x), label);
  ddp.backward(loss_fn.backward());  // loss.backward(): all_reduce, then / world size
  const float average = model.weight.grad[0];
  // The article's line first: print(model.module.weight.grad.item()) on every rank.
  print(python_float(average));
  pg.barrier();

  // Then why: the samples, each rank's own gradient, DDP's average.
  print_samples(pg, per_rank);
  print("at rank " + std::to_string(rank) + ", x = [" + shown + "], the local gradient is " +
        python_float(local));
  print("at rank " + std::to_string(rank) + ", after DDP, the gradient is " +
        python_float(average));

  pg.barrier();
  if (rank == 0)
    print("the gradient over all four samples is 28.0; DDP divides the sum over ranks by " +
          std::to_string(world) + ": 28.0 / " + std::to_string(world) + " = " +
          python_float(28.0 / world));
}

}  // namespace ringlab::lessons
