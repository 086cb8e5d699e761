// One data-parallel training step, recorded: ringlab's own
// DistributedDataParallel (or the Horovod-style DistributedOptimizer) runs a
// forward, a backward and an SGD step on P threads, each rank's process group
// over the simulator's RecordingTransport, so every message of the gradient
// all_reduces, every buffer state and its provenance are the ones the code
// produced. Around the record, each rank's compute side is kept: its batch,
// its loss, each gradient as backward produced it, the moment each bucket's
// all_reduce was issued, the averaged gradients and the parameters before and
// after the update. The GUI's ddp_step and horovod_step walkthroughs show it.
//
//   RecordedStep step = record_training_step({.ranks = 2, .bucket_floats = 4});
//   step.run                       // the all_reduces: regions "bucket 0", ...
//   step.ranks[1].events           // gradient ready, all_reduce issued, in order
//   step.ranks[1].after            // the parameters after optimizer.step()
//
// The model is small enough to show every number (walkthrough_model): four
// Linear layers without bias, 1 -> 2 -> 1 -> 2 -> 1, so each of net1.weight ..
// net4.weight holds two weights and backward produces them one layer at a
// time, net4 first. Rank r holds two samples, x = 1 + 2r + k (k = 0, 1), each
// with the target y = 2; the loss is MSELoss (mean). Rank r builds its model
// with weights that differ by 0.25 r; the constructor of
// DistributedDataParallel (or hvd::broadcast_parameters) makes them rank 0's.
//
// What is recorded: only the step itself. DDP's constructor (its shape check
// and broadcast) runs before the recorder starts. The record is a pure
// function of the scenario: a bucket's buffer is named for the recorder (its
// values then being the rank's gradients, its provenance the rank) on the
// process group's worker thread, just before the first operation that touches
// it, so nothing depends on how the rank's thread and its worker interleave.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "simulator/record.hpp"
#include "training/module.hpp"

namespace ringlab::training {

enum class GradientSync {
  Ddp,      // DistributedDataParallel: fixed buckets, each all-reduced once full
  Horovod,  // hvd::DistributedOptimizer: fusion buffers, the last one at step()
};

struct StepScenario {
  GradientSync sync = GradientSync::Ddp;
  int ranks = 2;  // 1 .. 16
  // DDP: the bucket cap (bucket_cap_mb, and the first bucket's) in float32
  // gradients; Horovod: the fusion threshold, likewise.
  std::size_t bucket_floats = 4;
  std::string algorithm = "ring";  // the process group's all_reduce
  double lr = 0.1;                 // Horovod scales it by size(), as seed 003 does
};

// The walkthrough's model, as rank `rank` builds it before synchronization.
std::unique_ptr<Sequential> walkthrough_model(int rank);
// Rank `rank`'s batch: inputs [2, 1] and targets [2, 1].
FloatTensor walkthrough_inputs(int rank);
FloatTensor walkthrough_targets(int rank);

// One of the step's gradient buffers: a DDP bucket or a Horovod fusion buffer.
struct GradientBucket {
  std::vector<int> parameters;       // indices into parameter_names, in buffer order
  std::vector<std::size_t> offsets;  // where each gradient starts in the buffer
  std::size_t numel = 0;
};

// What a rank's compute side did, in its order.
struct StepEvent {
  enum class Kind {
    GradientReady,    // backward finished parameter `index`'s gradient
    AllReduceIssued,  // bucket `index` was full and its all_reduce was issued
  };
  Kind kind = Kind::GradientReady;
  int index = 0;
  bool after_backward = false;  // issued by step() (Horovod's last fusion buffer)
};

using Values = std::vector<std::vector<float>>;  // per parameter, row-major

struct RankRecord {
  std::vector<float> inputs, targets;  // the rank's batch, one value per sample
  Values initial;                      // as the rank built its model
  Values before;                       // after the broadcast from rank 0
  float loss = 0;
  Values local_gradients;     // each gradient as backward produced it
  Values averaged_gradients;  // .grad once synchronized (the average over ranks)
  Values after;               // after optimizer.step()
  std::vector<StepEvent> events;
  std::vector<int> bucket_regions;  // per bucket: its region in RecordedStep::run
};

struct RecordedStep {
  StepScenario scenario;
  double lr = 0;  // the learning rate SGD used
  std::vector<std::string> parameter_names;
  std::vector<std::size_t> parameter_sizes;
  std::vector<GradientBucket> buckets;  // the same on every rank
  std::vector<RankRecord> ranks;
  // The gradient all_reduces, one after another on each rank; bucket b is
  // region "bucket b" (DDP) or "fusion buffer b" (Horovod) of every rank.
  sim::Run run;
};

// The name of bucket b's region in RecordedStep::run.
std::string bucket_region_name(GradientSync sync, int bucket);

// Throws std::invalid_argument for ranks outside 1..16, a bucket cap of 0
// or an unknown algorithm.
RecordedStep record_training_step(const StepScenario& scenario);

}  // namespace ringlab::training
