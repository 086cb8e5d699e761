// Lesson "ddp_basic" (world size 2): seed 004's demo_basic, run as the
// tutorial runs it:
//   setup(): dist.init_process_group("gloo"); torch.manual_seed(42)   (every rank)
//   model = ToyModel(); ddp_model = DDP(model)
//   loss_fn = nn.MSELoss(); optimizer = optim.SGD(ddp_model.parameters(), lr=0.001)
//   optimizer.zero_grad()
//   outputs = ddp_model(torch.randn(20, 10)); labels = torch.randn(20, 5)
//   loss_fn(outputs, labels).backward(); optimizer.step()
// The numbers are PyTorch's (training/torch_random.hpp draws torch's), so the
// loss and the parameters after the step are those PyTorch 1.13 prints for
// this program (tests/golden/ddp_basic.txt). The tutorial seeds every process
// alike and every process draws its batch after the same model, so every rank
// trains on the same batch and prints the same loss: DDP averages equal
// gradients here (ddp_grad_average shows it averaging different ones).
#include "lessons/training_lesson.hpp"
#include "training/ddp.hpp"
#include "training/finite.hpp"
#include "training/loss.hpp"
#include "training/sgd.hpp"
#include "training/torch_random.hpp"

namespace ringlab::lessons {

namespace {

void print_buckets(int rank, training::DistributedDataParallel& ddp_model) {
  std::string layout;
  for (const training::DdpBucket& b : ddp_model.buckets()) {
    layout += layout.empty() ? "" : "; ";
    layout += "bucket " + std::to_string(&b - ddp_model.buckets().data()) + ":";
    for (int index : b.parameters)
      layout += " " + ddp_model.named_parameters()[static_cast<std::size_t>(index)].name;
    layout += " (" + std::to_string(b.bytes()) + " bytes)";
  }
  print(rank_prefix(rank) + "DDP buckets, in the order backward fills them: " + layout);
}

}  // namespace

void ddp_basic(ProcessGroup& pg, const LessonArgs& args) {
  using namespace training;
  const int rank = pg.rank();
  TorchGenerator torch(42);  // setup(): torch.manual_seed(42), on every rank
  ToyModel model;
  torch_init_toy_model(model, torch);
  DistributedDataParallel ddp_model(model, pg);
  if (rank == 0) {
    print_buckets(rank, ddp_model);
    print(rank_prefix(rank) +
          "every rank draws the same batch: setup() seeds every process with 42, and each "
          "draws torch.randn after the same ToyModel, so every rank prints the same loss");
  }
  MSELoss loss_fn;
  SGD optimizer(ddp_model.parameters(), {.lr = args.lr.value_or(0.001)});
  optimizer.zero_grad();
  const FloatTensor inputs = torch.randn(20, 10);
  const FloatTensor outputs = ddp_model(inputs);
  const FloatTensor labels = torch.randn(20, 5);
  const float loss = loss_fn.forward(outputs, labels);
  ddp_model.backward(loss_fn.backward());
  optimizer.step();
  check_step({.rank = rank, .step = "step 1", .lr = optimizer.options().lr}, loss,
             ddp_model.named_parameters());
  print(rank_prefix(rank) + "loss " + significant(loss, 6));  // PyTorch sums in another order
  print_parameters(rank, "after step", ddp_model.named_parameters());
}

}  // namespace ringlab::lessons
