// The `nccl_rules` backend: ranks as threads of this process whose messages
// follow NCCL's point-to-point rules (transport/nccl_rules/nccl_rules.hpp):
// matched in posting order, launched only by a wait, never buffered. No GPU
// is needed; an algorithm that runs here keeps the rules NCCL needs.
#include <memory>

#include "backends/rows.hpp"
#include "transport/nccl_rules/nccl_rules.hpp"

namespace ringlab::backends {

void run_nccl_rules_ranks(int world, const RankBody& body, const ProcessGroupOptions& group) {
  run_nccl_rules_world(
      world,
      [&](Transport& transport) {
        // The group shares the transport, which lives as long as the thread.
        std::shared_ptr<Transport> borrowed(&transport, [](Transport*) {});
        ProcessGroup pg(borrowed, group);
        body(pg);
      },
      group.timeout);
}

}  // namespace ringlab::backends
