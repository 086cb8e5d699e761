// The training-step walkthroughs, ddp_step and horovod_step: one step of
// data-parallel training as ringlab's own DistributedDataParallel (or the
// Horovod-style DistributedOptimizer) ran it on virtual ranks
// (training_sim/recorded_step.hpp), shown frame by frame.
//
// A frame is a "tick" of one timeline with two lanes per rank, as a GPU has a
// compute stream and a communication stream:
//   compute   before (the broadcast parameters, the rank's batch), forward,
//             backward one layer per tick (the last layer first), then the
//             final wait, the divide by the world size, optimizer.step()
//   comm      the record's steps, one per tick, in order; a bucket's first
//             step comes no earlier than the tick after its all_reduce was
//             issued (when backward filled it; Horovod's last fusion buffer at
//             step()), so steps drawn beside a backward tick are the
//             communication hidden behind backward.
// Each layer's backward is drawn as long as one message step; the side
// panel's overlap model (training_sim/overlap.hpp) makes the same assumption
// and says what other bucket caps would hide.
//
// What each cell shows comes from the run: a bucket's gradients from the
// record (named when its all_reduce began), every message and reduction from
// the record's steps, the averages and parameters from the ranks' own
// tensors. A gradient slot stays empty until backward has produced it.
#pragma once

#include <string>
#include <vector>

#include "gui/frame.hpp"
#include "gui/walkthrough.hpp"
#include "training_sim/recorded_step.hpp"

namespace ringlab::gui {

struct TrainingTick {
  enum class Compute { Before, Forward, Backward, FinalWait, Divide, Update };
  Compute compute = Compute::Before;
  std::string layer;           // Backward: "net4"
  std::vector<int> gradients;  // Backward: the parameters it produced
  std::vector<int> issued;     // buckets whose all_reduce is issued now
  long long shown_step = -1;   // the record as of this tick (-1: nothing ran yet)
  bool step_runs = false;      // shown_step runs in this tick: its messages are drawn
};

struct TrainingWalk {
  training::RecordedStep step;
  std::vector<TrainingTick> ticks;
  std::vector<int> gradient_tick;  // per parameter: the tick that produced it
  std::vector<int> issue_tick;     // per bucket
  // Per bucket, the record's steps of its all_reduce (a step may belong to
  // two, when one rank starts the next while another finishes).
  std::vector<sim::Step> first_step, last_step;
  int backward_end = 0;  // the last backward tick
  int divide_tick = 0;
  int update_tick = 0;
  int steps_during_backward = 0;           // record steps drawn beside a backward tick
  std::vector<std::string> overlap_lines;  // the side panel's "hidden behind backward"
};

// Records the step for these settings (primitive ddp_step or horovod_step,
// elements = the bucket cap in gradient values) and lays out its ticks.
Act record_training_act(const Settings& settings);

// The sentence and the frame of tick `tick` of a training act.
std::string training_sentence(const Act& act, int tick);
FrameView build_training_frame(const Act& act, int tick, const std::string& sentence);

}  // namespace ringlab::gui
