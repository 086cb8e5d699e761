// Lesson "model_parallel" (exactly 2 ranks): seed 004's ToyMpModel with its
// two devices as two ranks (training/model_parallel.hpp): net1 and the ReLU
// on rank 0, net2 on rank 1. The activations travel 0 -> 1 with send/recv,
// and their gradient 1 -> 0. Then one SGD step (lr 0.001) on each rank's own
// layers.
//
// Both ranks start from the ToyModel of seed 42 (rank 0 keeps net1, rank 1
// net2) and use the same batch (seed 2000: inputs on rank 0, labels on rank
// 1). Rank 1 also runs the whole ToyModel in one process for comparison: its
// loss and updated parameters equal the split model's.
#include "training/model_parallel.hpp"

#include "lessons/training_lesson.hpp"
#include "training/init.hpp"
#include "training/loss.hpp"
#include "training/sgd.hpp"

namespace ringlab::lessons {

std::string two_ranks_problem(int world) {
  if (world == 2) return "";
  return "ToyMpModel puts net1 on rank 0 and net2 on rank 1: it needs exactly 2 ranks "
         "(-n 2)";
}

void model_parallel(ProcessGroup& pg, const LessonArgs& args) {
  using namespace training;
  const int rank = pg.rank();
  const double lr = args.lr.value_or(0.001);
  // The one-process model both halves come from.
  ToyModel whole;
  Generator init(42);
  init_toy_model(whole, init);
  Generator data(2000);
  const FloatTensor inputs = randn(20, 10, data);
  const FloatTensor labels = randn(20, 5, data);

  ToyMpModel mp_model(pg, /*dev0=*/0, /*dev1=*/1);
  if (mp_model.holds_net1()) {
    mp_model.net1().weight = whole.net1().weight;
    mp_model.net1().bias = whole.net1().bias;
    print(rank_prefix(rank) + "holds net1 and relu; it sends the activations to rank 1");
  }
  if (mp_model.holds_net2()) {
    mp_model.net2().weight = whole.net2().weight;
    mp_model.net2().bias = whole.net2().bias;
    print(rank_prefix(rank) +
          "holds net2; it sends the gradient of the activations back to rank 0");
  }
  MSELoss loss_fn;
  SGD optimizer(mp_model.parameters(), {.lr = lr});
  optimizer.zero_grad();
  const FloatTensor outputs = mp_model.forward(inputs);  // on rank 1
  FloatTensor grad;
  if (rank == 1) {
    const float loss = loss_fn.forward(outputs, labels);
    print(rank_prefix(rank) + "model parallel loss " + significant(loss));
    grad = loss_fn.backward();
  }
  mp_model.backward(grad);
  optimizer.step();
  print_parameters(rank, "after step", mp_model.named_parameters());

  if (rank == 1) {
    MSELoss one_loss_fn;
    SGD one_optimizer(whole.parameters(), {.lr = lr});
    one_optimizer.zero_grad();
    const float loss = one_loss_fn.forward(whole.forward(inputs), labels);
    whole.backward(one_loss_fn.backward());
    one_optimizer.step();
    print(rank_prefix(rank) + "one-process ToyModel loss " + significant(loss));
    print_parameters(rank, "one-process after step", whole.named_parameters());
  }
}

}  // namespace ringlab::lessons
