// Horovod's PyTorch API (horovod.torch as hvd), the way seed 003 uses it:
//
//   hvd::Horovod hvd = hvd::init(pg);                        // hvd.init()
//   SGD sgd(model.parameters(), {.lr = base_lr * hvd.size()}); // scale lr by size()
//   hvd::DistributedOptimizer optimizer(hvd, sgd, model.named_parameters());
//   hvd::broadcast_parameters(hvd, model, /*root_rank=*/0);
//   hvd::broadcast_optimizer_state(hvd, sgd, /*root_rank=*/0);
//   ... model.backward(...); optimizer.step();               // gradients averaged
//   if (hvd.rank() == 0) save_checkpoint(...);               // rank 0 only
//
// Horovod averages each gradient as soon as backward produces it, but not one
// all_reduce per tensor: its background thread packs the tensors that are
// ready into a fusion buffer of up to HOROVOD_FUSION_THRESHOLD bytes (64 MiB
// by default) and all-reduces the buffer in one go. DistributedOptimizer does
// the same here, deterministically: each ready gradient joins the open fusion
// buffer; when the next one would not fit, the buffer's all_reduce starts
// (async) and a new buffer opens; step() (synchronize()) starts the last one,
// waits for all, divides by size() (Horovod's Average: sum, then scale by
// 1/size) and writes the averages into .grad before the wrapped SGD steps.
// Horovod also flushes on a timer (its cycle time) after a coordinator has
// checked that every rank has the tensor; here every rank fuses the same
// tensors because each produces them in the same order, so no coordinator is
// needed.
//
// Compared with DistributedDataParallel: DDP fixes its buckets at
// construction; Horovod's fusion follows the order gradients actually arrive.
#pragma once

#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "primitives/process_group.hpp"
#include "training/module.hpp"
#include "training/sgd.hpp"

namespace ringlab::training::hvd {

// The state hvd.init() sets up: this process's place in the job.
class Horovod {
 public:
  explicit Horovod(ProcessGroup& pg);
  int rank() const { return pg_.rank(); }
  int size() const { return pg_.size(); }
  // The rank among the processes on this host: LOCAL_RANK when the launcher
  // set it (ringlab run, torchrun); ranks that are threads of one process
  // (the inproc backend) are all on one host, so there it is rank().
  int local_rank() const { return local_rank_; }
  ProcessGroup& process_group() { return pg_; }

 private:
  ProcessGroup& pg_;
  int local_rank_;
};

// hvd.init(). Collective only in that every rank calls it.
Horovod init(ProcessGroup& pg);

// hvd.broadcast_parameters(model.state_dict(), root_rank): every parameter
// and buffer, one broadcast each, in sorted name order as Horovod does.
void broadcast_parameters(Horovod& hvd, Module& model, int root_rank);
// hvd.broadcast_optimizer_state(optimizer, root_rank): the settings (lr,
// momentum, dampening, weight_decay, nesterov) and every momentum buffer of
// the root; a rank's own buffers are replaced (or dropped where the root has
// none).
void broadcast_optimizer_state(Horovod& hvd, SGD& optimizer, int root_rank);

struct FusionOptions {
  std::size_t fusion_threshold_bytes = 64u << 20;  // HOROVOD_FUSION_THRESHOLD
};

// One fused all_reduce of a step.
struct Fusion {
  std::vector<std::string> tensors;  // the gradients in the buffer, in order
  std::size_t bytes = 0;
};

class DistributedOptimizer {
 public:
  // named_parameters: model.named_parameters(); the names must be unique and
  // cover every parameter of optimizer (as Horovod checks).
  DistributedOptimizer(Horovod& hvd, SGD& optimizer, std::vector<NamedParameter> named_parameters,
                       FusionOptions options = {});
  ~DistributedOptimizer();
  DistributedOptimizer(const DistributedOptimizer&) = delete;
  DistributedOptimizer& operator=(const DistributedOptimizer&) = delete;

  // Starts the open fusion buffer, waits for every all_reduce of this step
  // and writes the averaged gradients.
  void synchronize();
  void step();  // synchronize(), then the wrapped optimizer's step
  // As Horovod: an error while gradients are in flight (after backward,
  // before step or synchronize).
  void zero_grad();

  SGD& optimizer() { return optimizer_; }
  // The fused all_reduces of the last synchronize().
  const std::vector<Fusion>& fusions() const { return fusions_; }
  // Called with each fusion buffer (its tensors, then the buffer itself) just
  // before its all_reduce is issued. For watching: the hook must not change
  // the buffer.
  using FusionHook = std::function<void(const Fusion& fusion, const Tensor& buffer)>;
  void set_fusion_hook(FusionHook hook) { fusion_hook_ = std::move(hook); }

 private:
  struct InFlight {
    std::vector<int> parameters;
    std::vector<std::size_t> offsets;
    Tensor flat;
    Work work;
  };
  void on_gradient_ready(int index);
  void flush();
  void wait_in_flight() noexcept;

  Horovod& hvd_;
  SGD& optimizer_;
  std::vector<NamedParameter> params_;
  FusionOptions options_;
  std::vector<int> hook_ids_;
  std::vector<int> open_;  // gradients waiting in the open fusion buffer
  std::size_t open_bytes_ = 0;
  std::deque<InFlight> in_flight_;  // a deque: the Work holds a reference to flat
  std::vector<Fusion> fusions_;
  std::vector<Fusion> fusions_this_step_;
  FusionHook fusion_hook_;
};

}  // namespace ringlab::training::hvd
