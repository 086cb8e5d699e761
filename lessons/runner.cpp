#include "lessons/runner.hpp"

namespace ringlab::lessons {

void run_lesson(const Lesson& lesson, const RunOptions& options) {
  const int world = options.world_size > 0 ? options.world_size : lesson.default_world_size;
  backends::run_ranks(
      options.backend, world, [&](ProcessGroup& pg) { lesson.run(pg, options.args); },
      options.group);
}

void run_tour(const RunOptions& options) {
  for (const Lesson& lesson : all_lessons()) {
    const int world = options.world_size > 0 ? options.world_size : lesson.default_world_size;
    print("#", lesson.name, "(world", std::to_string(world) + "):", lesson.teaches);
    run_lesson(lesson, options);
    print("");
  }
}

}  // namespace ringlab::lessons
