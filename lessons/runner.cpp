#include "lessons/runner.hpp"

#include <memory>

#include "transport/inproc.hpp"

namespace ringlab::lessons {

void run_inproc(const Lesson& lesson, const RunOptions& options) {
  const int world = options.world_size > 0 ? options.world_size : lesson.default_world_size;
  run_world(
      world,
      [&](Transport& transport) {
        // The group owns its transport; this one lives as long as the thread.
        std::shared_ptr<Transport> borrowed(&transport, [](Transport*) {});
        ProcessGroup pg(borrowed, options.group);
        lesson.run(pg, options.args);
      },
      options.group.timeout);
}

void run_tour(const RunOptions& options) {
  for (const Lesson& lesson : all_lessons()) {
    const int world = options.world_size > 0 ? options.world_size : lesson.default_world_size;
    print("#", lesson.name, "(world", std::to_string(world) + "):", lesson.teaches);
    run_inproc(lesson, options);
    print("");
  }
}

}  // namespace ringlab::lessons
