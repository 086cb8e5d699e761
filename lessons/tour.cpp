// run_paced_tour (runner.hpp): the tour one lesson at a time, for a learner at
// a terminal. The piped tour (run_tour) is untouched: this is another loop
// over the same headers.
#include <cstdlib>
#include <string>
#include <vector>

#include "lessons/runner.hpp"
#include "lessons/start_here.hpp"

namespace ringlab::lessons {

namespace {

constexpr const char* kPrompt = "[Enter] next lesson, n: again on another world size, q: quit > ";
constexpr int kMaxWorld = 1024;  // the largest --world-size (tools/lesson_commands.cpp)

void print_look(const Lesson& lesson) {
  for (std::string_view line : lesson.look)
    if (!line.empty()) print("look:", line);
}

// The world sizes, 1 to kMaxWorld, the lesson can run on.
std::vector<int> world_sizes(const Lesson& lesson) {
  std::vector<int> sizes;
  for (int world = 1; world <= kMaxWorld; ++world)
    if (world_problem(lesson, world).empty()) sizes.push_back(world);
  return sizes;
}

// "1-1024", "2-16", "2", "1, 2 or 4": runs of three or more as a range.
std::string sizes_text(const std::vector<int>& sizes) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < sizes.size();) {
    std::size_t j = i;
    while (j + 1 < sizes.size() && sizes[j + 1] == sizes[j] + 1) ++j;
    if (j >= i + 2) {
      parts.push_back(std::to_string(sizes[i]) + "-" + std::to_string(sizes[j]));
    } else {
      for (std::size_t k = i; k <= j; ++k) parts.push_back(std::to_string(sizes[k]));
    }
    i = j + 1;
  }
  std::string text;
  for (std::size_t i = 0; i < parts.size(); ++i)
    text += (i == 0 ? "" : i + 1 == parts.size() ? " or " : ", ") + parts[i];
  return text;
}

// What the learner answered to "world size for ...": a world to run the
// lesson on, back to the lesson's prompt (world 0), or quit the tour.
struct WorldChoice {
  bool quit = false;
  int world = 0;
};

WorldChoice ask_world(const Lesson& lesson, const TourTerminal& terminal) {
  const std::vector<int> sizes = world_sizes(lesson);
  const std::string name(lesson.name);
  if (sizes.size() == 1) {  // nothing to choose: say why instead of asking
    const int other = sizes[0] == 1 ? 2 : 1;
    print(name + " runs on " + std::to_string(sizes[0]) + " rank" + (sizes[0] == 1 ? "" : "s") +
          " only: " + world_problem(lesson, other));
    return {};
  }
  const std::string prompt =
      "world size for " + name + " (" + sizes_text(sizes) + "; Enter: back, q: quit): ";
  while (true) {
    const auto answer = terminal.ask(prompt);
    if (!answer || *answer == "q") return {.quit = true};
    if (answer->empty()) return {};
    char* end = nullptr;
    const long world = std::strtol(answer->c_str(), &end, 10);
    if (*end != '\0' || world < 1 || world > kMaxWorld) {
      print("a world size is a whole number: " + sizes_text(sizes) + " for " + name);
      continue;
    }
    if (const std::string why = world_problem(lesson, static_cast<int>(world)); !why.empty()) {
      print("not on " + std::to_string(world) + " ranks:", why);
      continue;
    }
    return {.world = static_cast<int>(world)};
  }
}

// One lesson: header, what to look at, the run; true to go on to the next.
bool show(const Lesson& lesson, RunOptions options, const TourTerminal& terminal) {
  bool run = true;
  while (true) {
    if (run && print_tour_header(lesson, options)) {
      print_look(lesson);
      terminal.run(lesson, options);
    } else if (run && !lesson.try_next.empty()) {
      print("try:", lesson.try_next);
    }
    run = false;
    const auto answer = terminal.ask(kPrompt);
    if (!answer || *answer == "q") return false;
    if (answer->empty()) return true;
    if (*answer != "n") {
      print("Enter, n or q");
      continue;
    }
    const WorldChoice choice = ask_world(lesson, terminal);
    if (choice.quit) return false;
    if (choice.world == 0) continue;  // back to this lesson's prompt
    options.world_size = choice.world;
    run = true;
  }
}

}  // namespace

std::string tour_command(const RunOptions& options, std::string_view from) {
  std::string command = "ringlab tour --from " + std::string(from);
  if (options.world_size > 0) command += " -n " + std::to_string(options.world_size);
  if (!options.backend.empty()) command += " --backend " + options.backend;
  for (const auto& [collective, name] : options.group.algorithms)
    command += " --algorithm " + std::string(collective_name(collective)) + "=" + name;
  return command;
}

void run_paced_tour(const RunOptions& options, const TourTerminal& terminal,
                    std::string_view from) {
  check_tour_options(options);
  const std::span<const Lesson> lessons = tour_lessons(from);
  for (const Lesson& lesson : lessons) {
    const bool go_on = show(lesson, options, terminal);
    print("");
    if (go_on) continue;
    if (&lesson == &lessons.back()) break;
    const Lesson& next = *(&lesson + 1);
    print("you left the tour after " + std::string(lesson.name) + "; to go on from " +
          std::string(next.name) + ": " + tour_command(options, next.name));
    return;
  }
  print_start_here("what next (ringlab start and README's first screen name the same steps):");
}

}  // namespace ringlab::lessons
