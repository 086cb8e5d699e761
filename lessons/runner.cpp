#include "lessons/runner.hpp"

#include <memory>
#include <stdexcept>

#include "transport/inproc.hpp"

namespace ringlab::lessons {

namespace {

struct Backend {
  std::string name;
  std::string help;
  BackendRunner runner;
  bool preferred;
};

void run_threads(int world, const std::function<void(ProcessGroup&)>& body,
                 const ProcessGroupOptions& group);

std::vector<Backend>& backends() {
  static std::vector<Backend> registered{{"inproc", "ranks as threads", run_threads, false}};
  return registered;
}

}  // namespace

BackendRegistrar::BackendRegistrar(std::string name, std::string help, BackendRunner runner,
                                   bool preferred) {
  backends().push_back({std::move(name), std::move(help), std::move(runner), preferred});
}

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const auto& b : backends()) names.push_back(b.name);
  return names;
}

std::string backends_help() {
  std::string help;
  for (const auto& b : backends()) help += (help.empty() ? "" : ", ") + b.name + " (" + b.help + ")";
  return help;
}

std::string default_backend() {
  for (const auto& b : backends())
    if (b.preferred) return b.name;
  return "inproc";
}

void run_ranks(const std::string& backend, int world,
               const std::function<void(ProcessGroup&)>& body, const ProcessGroupOptions& group) {
  for (const auto& b : backends())
    if (b.name == backend) return b.runner(world, body, group);
  throw std::invalid_argument("unknown backend '" + backend + "': use one of " + backends_help());
}

namespace {
void run_threads(int world, const std::function<void(ProcessGroup&)>& body,
                 const ProcessGroupOptions& group) {
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
}  // namespace

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
