// Lesson "horovod" (world size 4, as `horovodrun -np 4`): seed 003's PyTorch
// program structure on ringlab (training/horovod.hpp):
//   hvd.init()
//   optimizer = optim.SGD(model.parameters(), lr=args.base_lr * hvd.size(),
//                         momentum=args.momentum, weight_decay=args.wd)
//   optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters())
//   hvd.broadcast_parameters(model.state_dict(), root_rank=0)
//   hvd.broadcast_optimizer_state(optimizer, root_rank=0)
//   for each epoch: train on this rank's shard; checkpoint on rank 0 only
// base_lr 0.0125, momentum 0.9, wd 0.00005 (Horovod's ResNet-50 example's
// defaults). Every rank starts from a different random model (seed 42 +
// rank) to show what broadcast_parameters is for. The data: 80 samples of the
// train lesson's formula, rank r taking samples r, r + size, ... (PyTorch's
// DistributedSampler without shuffling), in batches of 10. --steps sets the epochs (default 3),
// --lr the base lr. HOROVOD_FUSION_THRESHOLD (bytes) sets the fusion buffer,
// as it does for Horovod. Rank 0 keeps a checkpoint per epoch,
// checkpoint-EPOCH.json, in --checkpoint-dir, and says where. The example's
// checkpoint_format writes them in the current folder; the lesson's default
// is a folder of their own there, ringlab-runs/horovod (kDefaultFolder), so
// that a tour leaves no loose files where it ran.
#include "training/horovod.hpp"

#include <cstdlib>
#include <filesystem>

#include "lessons/training_lesson.hpp"
#include "training/checkpoint.hpp"
#include "training/finite.hpp"
#include "training/init.hpp"
#include "training/loss.hpp"
#include "training/sgd.hpp"

namespace ringlab::lessons {

namespace {

constexpr const char* kDefaultFolder = "ringlab-runs/horovod";
constexpr int kSamples = 80;
constexpr int kBatch = 10;

// Sample g of the train lesson's data: x[j] = ((10g + j) % 7)/7 - 0.5,
// y[m] = ((5g + m) % 11)/11 - 0.5.
void fill_sample(int g, training::FloatTensor& x, training::FloatTensor& y, std::int64_t row) {
  for (int j = 0; j < 10; ++j) x.at(row, j) = static_cast<float>(((g * 10 + j) % 7) / 7.0 - 0.5);
  for (int m = 0; m < 5; ++m) y.at(row, m) = static_cast<float>(((g * 5 + m) % 11) / 11.0 - 0.5);
}

std::size_t fusion_threshold() {
  const char* value = std::getenv("HOROVOD_FUSION_THRESHOLD");
  if (!value || !*value) return training::hvd::FusionOptions{}.fusion_threshold_bytes;
  char* end = nullptr;
  const unsigned long long bytes = std::strtoull(value, &end, 10);
  if (*end != '\0')
    throw std::invalid_argument("HOROVOD_FUSION_THRESHOLD=" + std::string(value) +
                                " is not a number of bytes");
  return static_cast<std::size_t>(bytes);
}

}  // namespace

namespace {

// This rank's shard, as DistributedSampler(num_replicas=size, rank=rank,
// shuffle=False): the indices are padded (repeating from the start) to a
// multiple of size, and rank r takes r, r + size, ...; every rank gets as
// many samples, so every rank runs as many steps.
std::vector<int> shard_of(int rank, int size) {
  std::vector<int> shard;
  const int per_rank = (kSamples + size - 1) / size;
  for (int i = rank; i < per_rank * size; i += size) shard.push_back(i % kSamples);
  return shard;
}

// One epoch over the shard in batches of kBatch; returns the mean loss.
// `where`: this rank and epoch, for the error if a step diverges.
double train_epoch(training::ToyModel& model, training::hvd::DistributedOptimizer& optimizer,
                   const std::vector<int>& shard, training::StepPlace where) {
  using namespace training;
  MSELoss loss_fn;
  double loss_sum = 0;
  int batches = 0;
  for (std::size_t start = 0; start < shard.size(); start += kBatch) {
    const auto rows =
        static_cast<std::int64_t>(std::min<std::size_t>(kBatch, shard.size() - start));
    FloatTensor x = FloatTensor::matrix(rows, 10), y = FloatTensor::matrix(rows, 5);
    for (std::int64_t k = 0; k < rows; ++k) fill_sample(shard[start + std::size_t(k)], x, y, k);
    optimizer.zero_grad();
    const float loss = loss_fn.forward(model.forward(x), y);
    loss_sum += loss;
    model.backward(loss_fn.backward());
    optimizer.step();  // synchronize (fused all_reduce, / size), then SGD
    ++batches;
    check_step({where.rank, where.step + ", batch " + std::to_string(batches), where.lr}, loss,
               model.named_parameters());
  }
  return batches ? loss_sum / batches : 0.0;
}

void print_fusions(int rank, const training::hvd::DistributedOptimizer& optimizer) {
  std::string fused;
  for (const training::hvd::Fusion& f : optimizer.fusions())
    fused += (fused.empty() ? "" : "; ") + std::to_string(f.tensors.size()) +
             (f.tensors.size() == 1 ? " gradient in " : " gradients in ") +
             std::to_string(f.bytes) + " bytes";
  if (!fused.empty()) print(rank_prefix(rank) + "the last step's fused all_reduces: " + fused);
}

}  // namespace

void horovod(ProcessGroup& pg, const LessonArgs& args) {
  using namespace training;
  hvd::Horovod hvd = hvd::init(pg);
  const int rank = hvd.rank();
  print(rank_prefix(rank) + "hvd.rank() = " + std::to_string(hvd.rank()) + ", hvd.local_rank() = " +
        std::to_string(hvd.local_rank()) + ", hvd.size() = " + std::to_string(hvd.size()));

  ToyModel model;
  Generator init(42 + static_cast<std::uint32_t>(rank));
  init_toy_model(model, init);
  print(rank_prefix(rank) + "before broadcast_parameters net1.weight " +
        first_values(model.net1().weight.value, 4).to_string());

  const double base_lr = args.lr.value_or(0.0125);
  SGD sgd(model.parameters(),
          {.lr = base_lr * hvd.size(), .momentum = 0.9, .weight_decay = 0.00005});
  hvd::DistributedOptimizer optimizer(hvd, sgd, model.named_parameters(),
                                      {.fusion_threshold_bytes = fusion_threshold()});
  hvd::broadcast_parameters(hvd, model, /*root_rank=*/0);
  hvd::broadcast_optimizer_state(hvd, sgd, /*root_rank=*/0);
  print(rank_prefix(rank) + "after broadcast_parameters net1.weight " +
        first_values(model.net1().weight.value, 4).to_string());
  if (rank == 0)
    print(rank_prefix(rank) + "lr = base_lr * hvd.size() = " + python_float(base_lr) + " * " +
          std::to_string(hvd.size()) + " = " + python_float(sgd.options().lr));

  const std::vector<int> shard = shard_of(rank, hvd.size());
  // checkpoint_dir = args.checkpoint_dir if hvd.rank() == 0 else None
  const std::filesystem::path folder = std::filesystem::absolute(
      args.checkpoint_dir.empty() ? std::string(kDefaultFolder) : args.checkpoint_dir);
  if (rank == 0) std::filesystem::create_directories(folder);
  for (int epoch = 0; epoch < args.steps.value_or(3); ++epoch) {
    print(rank_prefix(rank) + "epoch " + std::to_string(epoch) + " loss " +
          significant(train_epoch(model, optimizer, shard,
                                  {rank, "epoch " + std::to_string(epoch), sgd.options().lr})));
    if (rank != 0) continue;
    const std::filesystem::path path =
        (folder / ("checkpoint-" + std::to_string(epoch) + ".json")).lexically_normal();
    save_checkpoint({.model = model.state_dict(), .optimizer = sgd.state_dict(), .epoch = epoch},
                    path.string());
    print(rank_prefix(rank) + "saved " + path.string() + " (rank 0 only)");
  }
  if (rank == 0) print_fusions(rank, optimizer);
}

}  // namespace ringlab::lessons
