// Small facts about a recorded training step that its timeline
// (training_walk.cpp) and its frames (training_frame.cpp) both ask.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "training_sim/recorded_step.hpp"

namespace ringlab::gui {

inline bool is_ddp(const training::RecordedStep& step) {
  return step.scenario.sync == training::GradientSync::Ddp;
}

inline std::string bucket_name(const training::RecordedStep& step, int bucket) {
  return training::bucket_region_name(step.scenario.sync, bucket);
}

// "net4" of "net4.weight".
inline std::string layer_of(const std::string& parameter) {
  return parameter.substr(0, parameter.find('.'));
}

// Per parameter: its bucket and where it starts in the bucket.
struct Slot {
  int bucket = -1;
  std::size_t offset = 0;
};
inline std::vector<Slot> slots_of(const training::RecordedStep& step) {
  std::vector<Slot> slots(step.parameter_names.size());
  for (std::size_t b = 0; b < step.buckets.size(); ++b)
    for (std::size_t s = 0; s < step.buckets[b].parameters.size(); ++s)
      slots[static_cast<std::size_t>(step.buckets[b].parameters[s])] = {static_cast<int>(b),
                                                                        step.buckets[b].offsets[s]};
  return slots;
}

}  // namespace ringlab::gui
