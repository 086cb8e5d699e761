#include "backends/backends.hpp"

#include "backends/traced_launch.hpp"

#include <mutex>
#include <stdexcept>
#include <utility>

#include "backends/rows.hpp"

namespace ringlab {

namespace backends {

namespace {

// One row per backend. The order is the order of --help; tcp is the default.
constexpr Backend kBackends[] = {
    {"inproc", "ranks as threads", run_inproc_world, nullptr},
    {"tcp", "ranks as processes over TCP; starts them itself unless run by ringlab run or torchrun",
     run_tcp_world, init_tcp_process_group, nullptr, run_tcp_process_world},
    {"nccl_rules",
     "ranks as threads whose messages keep NCCL's rules (matched in posting order, launched by "
     "a wait, unbuffered), without a GPU",
     run_nccl_rules_ranks, nullptr},
#ifdef RINGLAB_WITH_NCCL
    {"nccl",
     "the hand-written algorithms with every message sent by NCCL through GPU memory; ranks as "
     "threads, one GPU each, or as processes sharing fewer GPUs",
     run_nccl_ranks, init_nccl_process_group, nccl_cannot_run},
#endif
};

constexpr std::string_view kDefaultBackend = "tcp";

}  // namespace

std::span<const Backend> all_backends() { return kBackends; }

const Backend& find_backend(std::string_view name) {
  for (const Backend& backend : kBackends)
    if (backend.name == name) return backend;
  throw std::invalid_argument("unknown backend '" + std::string(name) + "': use one of " +
                              backends_help());
}

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const Backend& backend : kBackends) names.emplace_back(backend.name);
  return names;
}

std::string backends_help() {
  std::string help;
  for (const Backend& backend : kBackends)
    help += (help.empty() ? "" : ", ") + std::string(backend.name) + " (" +
            std::string(backend.help) + ")";
  return help;
}

std::string default_backend() { return std::string(kDefaultBackend); }

std::string cannot_run(std::string_view backend, int world) {
  for (const Backend& row : kBackends)
    if (row.name == backend) return row.cannot_run ? row.cannot_run(world) : std::string();
  return "";
}

void run_ranks(std::string_view backend, int world, const RankBody& body,
               const ProcessGroupOptions& group, TraceSession* trace) {
  const Backend& row = find_backend(backend);
  if (!trace) return row.run_world(world, body, group);
  if (!row.run_process_world)
    return run_traced_thread_world(row.run_world, row.name, world, body, group, *trace);
  row.run_process_world(
      world,
      [&](ProcessGroup& pg) {
        body(pg);
        return std::string();
      },
      group, trace);
}

std::vector<std::string> run_ranks_collecting(std::string_view backend, int world,
                                              const AnswerBody& body,
                                              const ProcessGroupOptions& group) {
  const Backend& row = find_backend(backend);
  if (row.run_process_world) return row.run_process_world(world, body, group, nullptr);
  // Threads of this process: their answers land here directly.
  std::vector<std::string> answers(static_cast<std::size_t>(world));
  std::mutex answering;
  row.run_world(
      world,
      [&](ProcessGroup& pg) {
        std::string answer = body(pg);
        const std::lock_guard lock(answering);
        answers[static_cast<std::size_t>(pg.rank())] = std::move(answer);
      },
      group);
  return answers;
}

}  // namespace backends

std::unique_ptr<ProcessGroup> init_process_group(std::string_view backend,
                                                 ProcessGroupOptions options) {
  const backends::Backend& chosen = backends::find_backend(backend);
  if (!chosen.init_process_group)
    throw std::invalid_argument(
        "init_process_group(\"" + std::string(backend) +
        "\"): this backend's ranks are threads of one process, so a process cannot join one; "
        "use \"tcp\" (start the program with ringlab run --nproc-per-node N -- PROGRAM), or run "
        "the ranks with backends::run_ranks");
  return chosen.init_process_group(std::move(options));
}

}  // namespace ringlab
