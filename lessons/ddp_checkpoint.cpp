// Lesson "ddp_checkpoint" (world size 2): seed 004's demo_checkpoint, in the
// article's order:
//   setup(): dist.init_process_group("gloo"); torch.manual_seed(42)   (every rank)
//   model = ToyModel(); ddp_model = DDP(model); SGD(lr=0.001)
//   if rank == 0: torch.save(ddp_model.state_dict(), CHECKPOINT_PATH)
//   dist.barrier()                       # rank 1 loads only after rank 0 saved
//   ddp_model.load_state_dict(torch.load(CHECKPOINT_PATH, map_location=...))
//   optimizer.zero_grad()
//   outputs = ddp_model(torch.randn(20, 10)); labels = torch.randn(20, 5)
//   loss_fn(outputs, labels).backward(); optimizer.step()
//   dist.barrier()                       # everyone has read the file
//   if rank == 0: os.remove(CHECKPOINT_PATH)
// The file is ringlab's checkpoint format (training/checkpoint.hpp: JSON,
// written atomically). map_location has no counterpart: a ringlab
// checkpoint holds plain float32 values, loaded into whatever rank reads it.
// As in ddp_basic, the numbers are PyTorch's (training/torch_random.hpp):
// every rank is seeded with 42 and draws the same model and the same batch,
// so both ranks print the loss PyTorch 1.13 prints for the tutorial's
// program, 0.915320635 (tests/golden/ddp_checkpoint.txt); saving and loading
// draw no random numbers, so it is demo_basic's.
// By default the file is a temporary one (named after rank 0's process id so
// runs side by side do not meet); --checkpoint PATH saves it there and keeps it.
#include <unistd.h>

#include <filesystem>

#include "lessons/training_lesson.hpp"
#include "training/checkpoint.hpp"
#include "training/ddp.hpp"
#include "training/finite.hpp"
#include "training/loss.hpp"
#include "training/sgd.hpp"
#include "training/torch_random.hpp"

namespace ringlab::lessons {

void ddp_checkpoint(ProcessGroup& pg, const LessonArgs& args) {
  using namespace training;
  const int rank = pg.rank();
  TorchGenerator torch(42);  // setup(): torch.manual_seed(42), on every rank
  ToyModel model;
  torch_init_toy_model(model, torch);
  DistributedDataParallel ddp_model(model, pg);
  MSELoss loss_fn;
  SGD optimizer(ddp_model.parameters(), {.lr = args.lr.value_or(0.001)});

  std::string path = args.checkpoint;
  if (path.empty()) {
    Tensor pid = Tensor::of({static_cast<std::int64_t>(::getpid())});
    pg.broadcast(pid, 0);
    path = (std::filesystem::temp_directory_path() /
            ("ringlab-model-" + std::to_string(pid.data<std::int64_t>()[0]) + ".checkpoint"))
               .string();
  }
  if (rank == 0) {
    save_checkpoint({.model = ddp_model.state_dict()}, path);
    print(rank_prefix(rank) + "saved the state dict (" +
          std::to_string(ddp_model.state_dict().size()) +
          " tensors: module.net1.weight, module.net1.bias, module.net2.weight, module.net2.bias)");
  }
  pg.barrier();
  const Checkpoint checkpoint = load_checkpoint(path);
  ddp_model.load_state_dict(checkpoint.model);
  print(rank_prefix(rank) + "loaded the checkpoint");
  print_parameters(rank, "loaded", ddp_model.named_parameters());

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

  pg.barrier();
  if (rank == 0) {
    if (args.checkpoint.empty()) {
      std::filesystem::remove(path);
    } else {
      print(rank_prefix(rank) + "kept the checkpoint at " + path);
    }
  }
}

}  // namespace ringlab::lessons
