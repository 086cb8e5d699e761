// run_paced_tour (runner.hpp): the tour one lesson at a time, for a learner at
// a terminal. The piped tour (run_tour) is untouched: this is another loop
// over the same headers.
#include <cstdlib>
#include <string>

#include "lessons/runner.hpp"

namespace ringlab::lessons {

namespace {

constexpr const char* kPrompt = "[Enter] next lesson, n: again on another world size, q: quit > ";

void print_look(const Lesson& lesson) {
  for (std::string_view line : lesson.look)
    if (!line.empty()) print("look:", line);
}

// The world size the learner types; nullopt when the input ends. Asks again
// until it is a number of ranks the lesson can run on.
std::optional<int> ask_world(const Lesson& lesson, const TourTerminal& terminal) {
  while (true) {
    const auto answer = terminal.ask("world size for " + std::string(lesson.name) + " (1-1024): ");
    if (!answer) return std::nullopt;
    char* end = nullptr;
    const long world = std::strtol(answer->c_str(), &end, 10);
    if (answer->empty() || *end != '\0' || world < 1 || world > 1024) {
      print("a world size is a whole number from 1 to 1024");
      continue;
    }
    if (const std::string why = world_problem(lesson, static_cast<int>(world)); !why.empty()) {
      print("not on " + std::to_string(world) + " ranks:", why);
      continue;
    }
    return static_cast<int>(world);
  }
}

// One lesson: header, what to look at, the run; true to go on to the next.
bool show(const Lesson& lesson, RunOptions options, const TourTerminal& terminal) {
  while (true) {
    if (print_tour_header(lesson, options)) {
      print_look(lesson);
      terminal.run(lesson, options);
    } else if (!lesson.try_next.empty()) {
      print("try:", lesson.try_next);
    }
    while (true) {
      const auto answer = terminal.ask(kPrompt);
      if (!answer || *answer == "q") return false;
      if (answer->empty()) return true;
      if (*answer == "n") break;
      print("Enter, n or q");
    }
    const auto world = ask_world(lesson, terminal);
    if (!world) return false;
    options.world_size = *world;
  }
}

}  // namespace

void run_paced_tour(const RunOptions& options, const TourTerminal& terminal) {
  check_tour_options(options);
  for (const Lesson& lesson : all_lessons()) {
    if (!show(lesson, options, terminal)) return;
    print("");
  }
}

}  // namespace ringlab::lessons
