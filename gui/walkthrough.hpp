// What the GUI can step through, and how its settings turn into recorded runs.
// The simulator records; nothing here runs or knows an algorithm.
//
// A walkthrough is one or more "acts" (scatter_gather is a scatter, then a
// gather), each a sim::Run. The cursor moves over frames: every act has a
// "before" frame (its inputs) and one frame after each of its steps 1..steps
// (step 0, local set-up with no messages, is folded into step 1's frame).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ops/reduce_op.hpp"
#include "simulator/cost.hpp"
#include "simulator/record.hpp"

namespace ringlab::gui {

inline constexpr int kMinRanks = 2;
inline constexpr int kMaxRanks = 16;
inline constexpr int kMaxElements = 64;

// The "primitive" control: every collective by its torch name, plus the
// composite walkthroughs and the two training steps (training_walk.hpp).
inline constexpr const char* kScatterGather = "scatter_gather";
inline constexpr const char* kParameterServer = "parameter_server";
inline constexpr const char* kDdpStep = "ddp_step";
inline constexpr const char* kHorovodStep = "horovod_step";
bool is_training_step(const std::string& primitive);
std::vector<std::string> primitive_names();          // all_reduce first
std::vector<std::string> algorithm_names(const std::string& primitive);  // default first

struct Settings {
  std::string primitive = "all_reduce";
  std::string algorithm;   // "" = the primitive's default
  int ranks = 4;           // world size (parameter server: servers + workers)
  // Elements of each rank's tensor (parameter server: keys each server owns;
  // training steps: the bucket cap, or fusion threshold, in gradient values).
  int elements = 2;
  ReduceOp op = ReduceOp::SUM;
  int root = -1;           // -1: the article's root (reduce: last rank; others: 0)
  // The collectives' element type; unset: the articles' int64 (float32 for
  // AVG, which needs a floating type). The training steps and the parameter
  // server keep their float32.
  std::optional<DType> dtype;
};

// The dtype the collectives of these settings run in.
DType collective_dtype(const Settings& settings);

// --scenario names: ring_allreduce, scatter_gather, parameter_server,
// ddp_step, horovod_step, and every collective's name ("reduce", ...). Throws
// std::invalid_argument listing them for an unknown name.
std::vector<std::string> scenario_names();
Settings scenario_settings(const std::string& name, int ranks);
// Each primitive's defaults: the articles' 4 ranks and 2 elements, except the
// ring walkthrough (one element per chunk), the parameter server (2
// servers, 3 workers, 8 keys each) and the training steps (2 ranks, ring,
// buckets of 4 gradients for DDP, a fusion threshold of 6 for Horovod).
Settings primitive_defaults(const std::string& primitive);

// The root a run uses for these settings.
int effective_root(const Settings& settings);

struct TrainingWalk;  // training_walk.hpp

struct Act {
  std::string title;       // "scatter (flat, root 0)"
  sim::Run run;
  sim::Prediction prediction;
  // Training steps only: the compute side around the run, and the frames
  // ("ticks") it is shown in; the act's frames are its ticks, not its steps.
  std::shared_ptr<const TrainingWalk> training;
};

// Records every act (throws std::invalid_argument when the settings are not
// valid, e.g. a bitwise op on floats, saying what to change).
std::vector<Act> record_acts(const Settings& settings);

// The cost model the side panel reports (the simulator's defaults).
sim::CostModel gui_cost_model();

}  // namespace ringlab::gui
