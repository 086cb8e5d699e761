// Lesson "train" (world size 2): a ToyModel training run anyone can check by
// hand, or with PyTorch (tests/golden/make_train_golden.py).
//   Model: W1[i][j] = 0.01*(i-j) (10x10), W2[i][j] = 0.01*(i-j) (5x10), biases 0.
//   Data: rank r holds B = 20 samples, the same batch every step; with
//     g = 20r + k (k = 0..19): x[k][j] = ((10g + j) % 7)/7 - 0.5 (j = 0..9),
//     y[k][m] = ((5g + m) % 11)/11 - 0.5 (m = 0..4); computed in double,
//     stored as float32.
//   Training: MSELoss (the mean over the 100 elements), DDP averaging the
//   gradients over the ranks, plain SGD with --lr (default 0.001), --steps
//   (default 3).
// Each rank prints its loss before every step and the first four values of
// each parameter (flattened) after it, with 9 significant digits:
//   Rank 0 step 1 loss 0.0871...
//   Rank 0 step 1 net1.weight 0 -0.00999... -0.0199... -0.0299...
#include "lessons/training_lesson.hpp"
#include "training/ddp.hpp"
#include "training/finite.hpp"
#include "training/loss.hpp"
#include "training/sgd.hpp"

namespace ringlab::lessons {

namespace {

void init_train_model(training::ToyModel& model) {
  for (training::Linear* layer : {&model.net1(), &model.net2()}) {
    for (std::int64_t i = 0; i < layer->out_features(); ++i)
      for (std::int64_t j = 0; j < layer->in_features(); ++j)
        layer->weight.value.at(i, j) = static_cast<float>(0.01 * static_cast<double>(i - j));
    layer->bias.value.fill(0.0f);
  }
}

}  // namespace

void train(ProcessGroup& pg, const LessonArgs& args) {
  using namespace training;
  const int rank = pg.rank();
  const int steps = args.steps.value_or(3);
  constexpr int kBatch = 20;
  FloatTensor x = FloatTensor::matrix(kBatch, 10), y = FloatTensor::matrix(kBatch, 5);
  for (int k = 0; k < kBatch; ++k) {
    const int g = kBatch * rank + k;
    for (int j = 0; j < 10; ++j) x.at(k, j) = static_cast<float>(((g * 10 + j) % 7) / 7.0 - 0.5);
    for (int m = 0; m < 5; ++m) y.at(k, m) = static_cast<float>(((g * 5 + m) % 11) / 11.0 - 0.5);
  }

  ToyModel model;
  init_train_model(model);
  DistributedDataParallel ddp_model(model, pg);
  MSELoss loss_fn;
  SGD optimizer(ddp_model.parameters(), {.lr = args.lr.value_or(0.001)});
  for (int step = 1; step <= steps; ++step) {
    optimizer.zero_grad();
    const float loss = loss_fn.forward(ddp_model(x), y);
    print(rank_prefix(rank) + "step " + std::to_string(step) + " loss " + significant(loss));
    ddp_model.backward(loss_fn.backward());
    optimizer.step();
    check_step({.rank = rank, .step = "step " + std::to_string(step), .lr = optimizer.options().lr},
               loss, model.named_parameters());
    for (const NamedParameter& p : model.named_parameters()) {
      std::string line = rank_prefix(rank) + "step " + std::to_string(step) + " " + p.name;
      for (std::size_t i = 0; i < 4 && i < p.parameter->value.numel(); ++i)
        line += " " + significant(p.parameter->value[i]);
      print(line);
    }
  }
}

}  // namespace ringlab::lessons
