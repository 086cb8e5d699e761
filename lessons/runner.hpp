// Runs a lesson on every rank of a world, on the chosen backend
// (backends/backends.hpp).
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "backends/backends.hpp"
#include "lessons/lesson.hpp"

namespace ringlab::lessons {

struct RunOptions {
  int world_size = 0;   // 0: the lesson's default
  std::string backend;  // "": backends::default_backend()
  LessonArgs args;
  ProcessGroupOptions group;
  // --trace FILE: the worlds are traced into it (backends/traced_launch.hpp).
  backends::TraceSession* trace = nullptr;
};

// The backend the options name, or the default.
std::string backend_of(const RunOptions& options);
// The world size a run of `lesson` uses first: --world-size, or the lesson's default.
int world_size_of(const Lesson& lesson, const RunOptions& options);

// The group options a lesson runs with: the caller's, plus the algorithm its
// article implies where the caller named none for that collective.
ProcessGroupOptions lesson_group_options(const Lesson& lesson, const ProcessGroupOptions& group);

// Which algorithm the lesson's collective runs with these options, and why:
// "all_reduce algorithm ring (the article's)", "broadcast algorithm binomial
// (the default)", "... (as chosen)". "" for a point-to-point lesson.
std::string algorithm_statement(const Lesson& lesson, const ProcessGroupOptions& group);

// Throws std::invalid_argument, with one message saying what is wrong and
// what to do, for anything in `options` that cannot work with `lesson`: a
// world size the lesson (or this machine, for the backend) cannot run, a
// --root outside the world or for a lesson without one, an unknown backend
// or algorithm, a --backend for a lesson that runs every backend itself.
// run_lesson calls it before any rank starts.
void check_options(const Lesson& lesson, const RunOptions& options);

// Checks the options, then runs one lesson with backends::run_ranks (or lets
// a lesson that starts its own worlds run itself). Rank 0 of each world first
// writes "# lesson NAME: <algorithm_statement>" to stderr: stdout stays what
// the article's program prints.
void run_lesson(const Lesson& lesson, const RunOptions& options);

// Every lesson in turn, each after a "# name (world N): what it teaches
// [<algorithm_statement>]" header: the terminal tour of the README's main
// command. With a --world-size, a lesson that cannot run on that many ranks
// is skipped and its header says so and why. A lesson that runs itself on
// every backend (support) does so whatever --backend says. A lesson whose
// row has not_in_tour shows its header and that reason, and does not run.
// `from` names the lesson to start at ("": the first).
void run_tour(const RunOptions& options, std::string_view from = "");

// The lessons a tour from `from` shows, in order ("": all of them); throws
// std::invalid_argument, naming the lessons, when no lesson has that name.
std::span<const Lesson> tour_lessons(std::string_view from);
// "ringlab tour --from NAME" with the options that matter to the tour (-n,
// --backend, --algorithm): the command that goes on where a learner left.
std::string tour_command(const RunOptions& options, std::string_view from);

// The tour's header of one lesson, as run_tour prints it; false when the
// lesson does not run there (a world size it cannot use, or not_in_tour),
// after saying why.
bool print_tour_header(const Lesson& lesson, const RunOptions& options);
// What every lesson of a tour shares: the backend and the algorithms exist.
void check_tour_options(const RunOptions& options);

// The tour at the learner's pace, for a terminal (tour.cpp): one lesson at a
// time, each with its header, two lines on what to look at, the lesson run
// as `ringlab lesson` runs it (which says what to try next), and a prompt:
// Enter for the next lesson, n to run it again on another world size (the
// sizes it can use are named; Enter goes back, q quits), q to quit. Quit
// early, it says the command that goes on from the next lesson; at the end,
// the steps of start_here.hpp.
struct TourTerminal {
  // Writes the prompt and reads one line; nullopt when the input has ended.
  std::function<std::optional<std::string>(const std::string& prompt)> ask;
  // Runs the lesson with these options, its output on this terminal.
  std::function<void(const Lesson&, const RunOptions&)> run;
};
void run_paced_tour(const RunOptions& options, const TourTerminal& terminal,
                    std::string_view from = "");

}  // namespace ringlab::lessons
