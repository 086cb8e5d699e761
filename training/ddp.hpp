// DistributedDataParallel, as torch.nn.parallel.DistributedDataParallel does it.
//
//   ToyModel model;
//   DistributedDataParallel ddp(model, pg);        // broadcasts rank 0's parameters
//   SGD optimizer(ddp.parameters(), {.lr = 0.001});
//   optimizer.zero_grad();
//   FloatTensor out = ddp.forward(x);              // ddp_model(x)
//   float loss = loss_fn.forward(out, y);
//   ddp.backward(loss_fn.backward());              // loss.backward(): gradients averaged
//   optimizer.step();                              // the same update on every rank
//
// What happens, step by step:
//  1. Construction: the ranks check that their models have the same parameter
//     shapes (a mismatch fails on every rank, naming the parameter and the
//     ranks), then rank 0's parameters and buffers are broadcast to all.
//  2. The parameters are grouped into buckets in the order their gradients
//     will be produced: the reverse of the parameter order (buckets.hpp),
//     the first bucket at most first_bucket_bytes (1 MiB), the others
//     bucket_cap_mb (25 MiB). Each bucket has one flat float32 buffer.
//  3. During backward each layer announces each finished gradient (a hook on
//     the parameter); DDP copies it into its bucket's buffer. When a bucket
//     has all its gradients, its all_reduce (SUM) starts asynchronously
//     (ProcessGroup::all_reduce_async), while the backward pass goes on with
//     the earlier layers: communication overlaps computation. Buckets start in
//     order, so every rank issues the same collectives in the same order.
//  4. At the end of backward DDP waits for every bucket (the final wait, the
//     one before optimizer.step()), divides each by the world size and copies
//     the averages back into the parameters' .grad.
//  5. Under no_sync() (decided at forward, as in PyTorch) backward only
//     accumulates the local gradients; the next synchronized backward
//     all-reduces the accumulated sum.
// PyTorch 1.13 divides each gradient by the world size while copying it into
// the bucket and then all-reduces; ringlab sums first and divides after, the
// same numbers up to rounding (exactly the same for 2 or 4 ranks).
//
// Watching it: events() lists, for the last backward, when each gradient
// became ready, when each bucket's all_reduce started, when DDP saw it done
// (it checks at every later gradient and at the final wait) and when its
// average was written back; set_observer() gets each event as it happens;
// set_bucket_hook() sees each bucket's buffer just before its all_reduce.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "primitives/process_group.hpp"
#include "training/module.hpp"

namespace ringlab::training {

struct DdpOptions {
  double bucket_cap_mb = 25;                 // MiB, as PyTorch's bucket_cap_mb
  std::size_t first_bucket_bytes = 1 << 20;  // dist._DEFAULT_FIRST_BUCKET_BYTES
};

struct DdpBucket {
  std::vector<int> parameters;       // indices into named_parameters(), in arrival order
  std::vector<std::size_t> offsets;  // where each gradient sits in the flat buffer
  std::size_t numel = 0;
  std::size_t bytes() const { return numel * sizeof(float); }
};

struct DdpEvent {
  enum class Kind {
    GradientReady,     // backward finished a parameter's gradient
    AllReduceStarted,  // a bucket's all_reduce was issued (async)
    AllReduceDone,     // DDP saw that bucket's all_reduce complete
    Averaged,          // the bucket was divided by the world size and copied to .grad
  };
  Kind kind = Kind::GradientReady;
  int bucket = -1;
  int parameter = -1;  // GradientReady: index into named_parameters()
  std::string name;    // GradientReady: the parameter's name
  double seconds = 0;  // since this backward started
};
std::string_view event_name(DdpEvent::Kind kind);
// "0.000123 s  bucket 0 all_reduce started" — for logs and lessons.
std::string describe(const DdpEvent& event);

class DistributedDataParallel final : public Module {
 public:
  // Collective: every rank constructs it at the same point. Throws
  // std::invalid_argument on every rank if the ranks' models differ.
  DistributedDataParallel(Module& module, ProcessGroup& pg, DdpOptions options = {});
  ~DistributedDataParallel() override;

  FloatTensor forward(const FloatTensor& input) override;
  FloatTensor operator()(const FloatTensor& input) { return forward(input); }
  // The model's backward with the gradient synchronization described above;
  // returns once every parameter's .grad holds the average over the ranks.
  FloatTensor backward(const FloatTensor& grad_output) override;

  // The wrapped module's parameters under the prefix "module.", as
  // DDP's named_parameters() and state_dict() name them.
  std::vector<NamedParameter> named_parameters() override;
  std::vector<NamedBuffer> named_buffers() override;
  std::string describe() const override { return "DistributedDataParallel"; }
  Module& module() { return module_; }

  // ddp.no_sync(): while the guard lives, forward passes are not followed by
  // gradient synchronization.
  class NoSync {
   public:
    explicit NoSync(DistributedDataParallel& ddp) : ddp_(ddp), previous_(ddp.require_sync_) {
      ddp_.require_sync_ = false;
    }
    ~NoSync() { ddp_.require_sync_ = previous_; }
    NoSync(const NoSync&) = delete;
    NoSync& operator=(const NoSync&) = delete;

   private:
    DistributedDataParallel& ddp_;
    bool previous_;
  };
  [[nodiscard]] NoSync no_sync() { return NoSync(*this); }

  const std::vector<DdpBucket>& buckets() const { return buckets_; }
  const std::vector<DdpEvent>& events() const { return events_; }
  void set_observer(std::function<void(const DdpEvent&)> observer) {
    observer_ = std::move(observer);
  }
  // Whether bucket b's all_reduce of the current backward has completed.
  bool bucket_completed(int b) const;
  // Called with a bucket's flat buffer once backward has copied all its
  // gradients in, just before its all_reduce is issued (what a PyTorch
  // communication hook receives as GradBucket.buffer()). For watching: the
  // hook must not change the buffer.
  using BucketHook = std::function<void(int bucket, const Tensor& buffer)>;
  void set_bucket_hook(BucketHook hook) { bucket_hook_ = std::move(hook); }

 private:
  struct BucketState {
    Tensor flat;      // the bucket's gradients, side by side
    int pending = 0;  // gradients still to come in this backward
    bool launched = false;
    bool seen_done = false;
    Work work;
  };

  void verify_same_shapes();
  void broadcast_state();
  void on_gradient_ready(int index);
  void poll_completed();
  void finish_backward();
  void record(DdpEvent event);
  void wait_in_flight() noexcept;

  Module& module_;
  ProcessGroup& pg_;
  DdpOptions options_;
  std::vector<NamedParameter> params_;  // the module's, unprefixed
  std::vector<int> bucket_of_;          // parameter index -> bucket
  std::vector<std::size_t> slot_of_;    // parameter index -> position in its bucket
  std::vector<DdpBucket> buckets_;
  std::vector<BucketState> state_;
  std::vector<int> hook_ids_;
  std::size_t next_to_launch_ = 0;
  bool require_sync_ = true;  // false inside no_sync()
  bool sync_this_backward_ = false;
  bool forward_done_ = false;
  std::chrono::steady_clock::time_point backward_start_;
  std::vector<DdpEvent> events_;
  std::function<void(const DdpEvent&)> observer_;
  BucketHook bucket_hook_;
};

}  // namespace ringlab::training
