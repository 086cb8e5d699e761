// A recorded Run printed step by step: every message with where it came from
// and went, then every rank's buffers and the inputs in them. `ringlab sim`
// prints simulated runs with it and `ringlab replay` real ones, so that both
// print the same lines for the same collective, algorithm, world and data.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "simulator/record.hpp"

namespace ringlab::cli {

// "buf[0:2]", "scratch#0[1:2]", "(unnamed memory)".
std::string where(const sim::Run& run, const sim::Location& location);

// What is printed for one buffer after "Rank r has data ": the default,
// the Tensor as PyTorch prints it. after_step: the step just applied (-1:
// before anything ran).
using BufferText =
    std::function<std::string(int region, const sim::Replay& replay, long long after_step)>;

struct StepPrinting {
  // Also the messages that carry 0 bytes (empty chunks of a ring with fewer
  // elements than ranks); a run whose every message is empty (the barrier's
  // tokens) shows them anyway.
  bool show_empty = false;
  BufferText buffer_text;  // nullptr: the Tensor
  // Lines printed after step k's buffers (nullptr: none).
  std::function<void(sim::Step k)> after_step;
  // Words after a message's line (" -- never arrived"); nullptr: none.
  std::function<std::string(const sim::Message& m)> message_note;
};

// Every rank's user buffers (only: those named so; empty: all) as they are
// at `replay`'s position, with the inputs in each.
void print_buffers(const sim::Run& run, const sim::Replay& replay,
                   const std::vector<std::string>& only = {}, const BufferText& text = nullptr);

// "before the first message (step 0):", its buffers, then each step's
// messages and the buffers after it.
void print_steps(const sim::Run& run, const StepPrinting& how = {});

}  // namespace ringlab::cli
