#include "exercises/cost.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "exercises/record.hpp"

namespace ringlab::exercises {

Cost measure(const Exercise& exercise, const Function& fn) {
  const Case c = cost_case(exercise);
  const Recorded recorded = record_case(exercise, fn, c, /*values=*/false);
  if (!recorded.run)
    throw std::runtime_error("on " + describe(exercise, c) + ": " + recorded.error);
  const sim::Run& run = *recorded.run;
  Cost cost;
  cost.steps = run.steps;
  if (!run.messages_sent.empty())
    cost.messages = *std::max_element(run.messages_sent.begin(), run.messages_sent.end());
  if (!run.bytes_sent.empty())
    cost.bytes = *std::max_element(run.bytes_sent.begin(), run.bytes_sent.end());
  return cost;
}

std::string cost_report(const Exercise& exercise, const Function& fn) {
  const Case c = cost_case(exercise);
  const Cost mine = measure(exercise, fn);
  const Cost theirs = measure(exercise, exercise.builtin_fn);
  const std::string builtin = "ringlab (" + std::string(exercise.builtin) + ")";
  const int width = static_cast<int>(std::max<std::size_t>(builtin.size(), 5));
  char line[256];
  std::string text =
      "cost on " + describe(exercise, c) + " (the busiest rank's messages and bytes):\n";
  std::snprintf(line, sizeof line, "  %-*s  %6s  %13s  %10s\n", width, "", "steps", "messages/rank",
                "bytes/rank");
  text += line;
  for (const auto& [who, cost] :
       {std::pair{std::string("yours"), mine}, std::pair{builtin, theirs}}) {
    std::snprintf(line, sizeof line, "  %-*s  %6u  %13zu  %10zu\n", width, who.c_str(), cost.steps,
                  cost.messages, cost.bytes);
    text += line;
  }
  text += "  to reach: " + std::string(exercise.cost) + "\n";
  if (mine.steps <= theirs.steps && mine.messages <= theirs.messages && mine.bytes <= theirs.bytes)
    text += "  yours costs no more than ringlab's.\n";
  else
    text += "  yours costs more than ringlab's: ringlab exercise show " +
            std::string(exercise.name) + " shows where its steps go.\n";
  return text;
}

}  // namespace ringlab::exercises
