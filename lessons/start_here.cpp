#include "lessons/start_here.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

namespace ringlab::lessons {

namespace {

constexpr NextStep kSteps[] = {
    {"ringlab lesson all_reduce",
     "the article's all_reduce, run for real: 4 processes over TCP"},
    {"ringlab gui --scenario ring_allreduce",
     "step through it: every message, every rank's buffers (needs a display)"},
    {"ringlab exercise start ring_all_reduce",
     "write the ring yourself; ringlab exercise check ring_all_reduce says what is wrong"},
};

}  // namespace

std::span<const NextStep> start_here() { return kSteps; }

void print_start_here(std::string_view heading) {
  std::string text(heading);
  text += '\n';
  for (const NextStep& step : kSteps) {
    std::string command(step.command);
    command.resize(std::max<std::size_t>(command.size() + 2, 40), ' ');
    text += "  " + std::to_string(&step - kSteps + 1) + ". " + command + std::string(step.why) +
            '\n';
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

}  // namespace ringlab::lessons
