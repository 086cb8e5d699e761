// Lesson "ddp_basic" (world size 2): seed 004's demo_basic.
//   model = ToyModel()                     (the same seed on every rank, as setup() does)
//   ddp_model = DDP(model)
//   loss_fn = nn.MSELoss(); optimizer = optim.SGD(ddp_model.parameters(), lr=0.001)
//   optimizer.zero_grad()
//   outputs = ddp_model(torch.randn(20, 10)); labels = torch.randn(20, 5)
//   loss_fn(outputs, labels).backward(); optimizer.step()
// Each rank draws its own batch (seed 1000 + rank; the numbers are from
// training/init.hpp's generator, not torch's), so the losses differ, yet after
// the step every rank holds the same parameters: DDP averaged the gradients.
#include "lessons/training_lesson.hpp"
#include "training/ddp.hpp"
#include "training/init.hpp"
#include "training/loss.hpp"
#include "training/sgd.hpp"

namespace ringlab::lessons {

void ddp_basic(ProcessGroup& pg, const LessonArgs& args) {
  using namespace training;
  const int rank = pg.rank();
  ToyModel model;
  Generator init(42);  // torch.manual_seed(42) in setup()
  init_toy_model(model, init);
  DistributedDataParallel ddp_model(model, pg);
  if (rank == 0) {
    std::string layout;
    for (const DdpBucket& b : ddp_model.buckets()) {
      layout += layout.empty() ? "" : "; ";
      layout += "bucket " + std::to_string(&b - ddp_model.buckets().data()) + ":";
      for (int index : b.parameters)
        layout += " " + ddp_model.named_parameters()[static_cast<std::size_t>(index)].name;
      layout += " (" + std::to_string(b.bytes()) + " bytes)";
    }
    print(rank_prefix(rank) + "DDP buckets, in the order backward fills them: " + layout);
  }

  MSELoss loss_fn;
  SGD optimizer(ddp_model.parameters(), {.lr = args.lr.value_or(0.001)});
  optimizer.zero_grad();
  Generator data(1000 + static_cast<std::uint32_t>(rank));
  const FloatTensor inputs = randn(20, 10, data);
  const FloatTensor labels = randn(20, 5, data);
  const float loss = loss_fn.forward(ddp_model(inputs), labels);
  ddp_model.backward(loss_fn.backward());
  print(rank_prefix(rank) + "loss " + python_float(loss));
  print_parameters(rank, "before step", ddp_model.named_parameters());
  optimizer.step();
  print_parameters(rank, "after step", ddp_model.named_parameters());
}

}  // namespace ringlab::lessons
