// The `inproc` backend: every rank is a thread of this process.
#include "transport/inproc.hpp"

#include <memory>

#include "backends/rows.hpp"

namespace ringlab::backends {

void run_inproc_world(int world, const RankBody& body, const ProcessGroupOptions& group) {
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

}  // namespace ringlab::backends
