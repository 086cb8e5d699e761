// Lessons "model_parallel" and "demo_model_parallel": seed 004's ToyMpModel
// (training/model_parallel.hpp), net1 on device dev0 and net2 on dev1 of one
// process: two memory spaces of this process, where the tutorial has two GPUs
// (ringlab's training library computes on the CPU).
//
// model_parallel (one process, as many as -n says, each on its own):
//   torch.manual_seed(42); mp_model = ToyMpModel(dev0, dev1)
//   loss_fn = nn.MSELoss(); optimizer = optim.SGD(mp_model.parameters(), lr=0.001)
//   outputs = mp_model(torch.randn(20, 10)); labels = torch.randn(20, 5)
//   loss_fn(outputs, labels).backward(); optimizer.step()
// demo_model_parallel (4 processes, as the tutorial's run_demo(.., 4)): the
// same in every process, with dev0 = 2 * rank, dev1 = 2 * rank + 1, and the
// model wrapped in DDP: model parallel inside each process, data parallel
// across them.
//
// The numbers are PyTorch's (torch_random.hpp): tests/golden/model_parallel.txt
// and demo_model_parallel.txt hold what PyTorch 1.13 computes for the same
// programs (there with both devices "cpu": no GPU; the numbers do not depend
// on the device).
#include "training/model_parallel.hpp"

#include "lessons/training_lesson.hpp"
#include "training/ddp.hpp"
#include "training/finite.hpp"
#include "training/loss.hpp"
#include "training/sgd.hpp"
#include "training/torch_random.hpp"

namespace ringlab::lessons {

namespace {

void print_transfers(int rank, const training::ToyMpModel& model, std::size_t first) {
  for (std::size_t i = first; i < model.transfers().size(); ++i) {
    const training::Transfer& t = model.transfers()[i];
    print(rank_prefix(rank) + "moved the " + t.what + " (" + std::to_string(t.bytes) +
          " bytes) from " + t.from.name() + " to " + t.to.name());
  }
}

// One training step of the tutorial's program on `model` (mp_model, or the
// DDP around it), printing what crossed between the devices and the loss.
void train_step(int rank, training::ToyMpModel& mp_model, training::Module& model,
                training::TorchGenerator& torch, double lr) {
  using namespace training;
  print(rank_prefix(rank) + "ToyMpModel: net1 and relu on " + mp_model.dev0().name() +
        ", net2 on " + mp_model.dev1().name() + " (memory spaces of this process)");
  MSELoss loss_fn;
  SGD optimizer(model.parameters(), {.lr = lr});
  optimizer.zero_grad();
  const FloatTensor inputs = torch.randn(20, 10);
  const FloatTensor outputs = model.forward(inputs);  // on dev1
  const FloatTensor labels = torch.randn(20, 5);      // .to(dev1)
  print_transfers(rank, mp_model, 0);
  const float loss = loss_fn.forward(outputs, labels);
  const std::size_t before_backward = mp_model.transfers().size();
  model.backward(loss_fn.backward());
  print_transfers(rank, mp_model, before_backward);
  optimizer.step();
  check_step({.rank = rank, .step = "step 1", .lr = lr}, loss, model.named_parameters());
  print(rank_prefix(rank) + "loss " + significant(loss, 6));  // PyTorch sums in another order
  print_parameters(rank, "after step", model.named_parameters());
}

}  // namespace

void model_parallel(ProcessGroup& pg, const LessonArgs& args) {
  using namespace training;
  TorchGenerator torch(42);
  ToyMpModel mp_model(Device{0}, Device{1});
  torch_init_toy_model_parallel(mp_model, torch);
  train_step(pg.rank(), mp_model, mp_model, torch, args.lr.value_or(0.001));
}

void demo_model_parallel(ProcessGroup& pg, const LessonArgs& args) {
  using namespace training;
  const int rank = pg.rank();
  TorchGenerator torch(42);  // setup()
  ToyMpModel mp_model(Device{2 * rank}, Device{2 * rank + 1});
  torch_init_toy_model_parallel(mp_model, torch);
  DistributedDataParallel ddp_mp_model(mp_model, pg);
  train_step(rank, mp_model, ddp_mp_model, torch, args.lr.value_or(0.001));
}

}  // namespace ringlab::lessons
