// The backends whose ranks are threads of this process: `inproc`
// (transport/inproc.hpp) and `nccl_rules` (NCCL's point-to-point rules,
// transport/nccl_rules/nccl_rules.hpp: matched in posting order, launched
// only by a wait, never buffered; no GPU needed). One adapter: a world of
// rank threads (transport/thread_world.hpp), a ProcessGroup on each.
#include <memory>

#include "backends/rows.hpp"
#include "transport/inproc.hpp"
#include "transport/nccl_rules/nccl_rules.hpp"

namespace ringlab::backends {

namespace {

void run_thread_ranks(ThreadWorld& world, const RankBody& body, const ProcessGroupOptions& group) {
  world.run(
      [&](Transport& transport) {
        // The group shares the transport, which lives as long as the thread.
        std::shared_ptr<Transport> borrowed(&transport, [](Transport*) {});
        ProcessGroup pg(borrowed, group);
        body(pg);
      },
      group.timeout);
}

}  // namespace

void run_inproc_world(int world, const RankBody& body, const ProcessGroupOptions& group) {
  InprocWorld threads(world);
  run_thread_ranks(threads, body, group);
}

void run_nccl_rules_ranks(int world, const RankBody& body, const ProcessGroupOptions& group) {
  NcclRulesWorld threads(world);
  run_thread_ranks(threads, body, group);
}

}  // namespace ringlab::backends
