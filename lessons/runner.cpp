#include "lessons/runner.hpp"

#include <memory>
#include <stdexcept>

#include "transport/inproc.hpp"

namespace ringlab::lessons {

void run_ranks(const std::string& backend, int world,
               const std::function<void(ProcessGroup&)>& body, const ProcessGroupOptions& group) {
  if (backend != "inproc")
    throw std::invalid_argument("unknown backend '" + backend + "': use inproc");
  run_world(
      world,
      [&](Transport& transport) {
        // The group shares the transport, which lives as long as the thread.
        std::shared_ptr<Transport> borrowed(&transport, [](Transport*) {});
        ProcessGroup pg(borrowed, group);
        body(pg);
      },
      group.timeout);
}

void run_lesson(const Lesson& lesson, const RunOptions& options) {
  const int world = options.world_size > 0 ? options.world_size : lesson.default_world_size;
  run_ranks(options.backend, world, [&](ProcessGroup& pg) { lesson.run(pg, options.args); },
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
