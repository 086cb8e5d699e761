// The conformance suite over the simulator's fiber world (bytes moved, as
// when the simulator records values): every rank is a fiber of one thread,
// and time is virtual.
#include "simulator/fiber_world.hpp"
#include "transport_conformance.hpp"

namespace ringlab::conformance {

std::vector<Binding> bindings() {
  Binding fibers;
  fibers.name = "fibers";
  fibers.real_time = false;
  fibers.run = [](int size, Duration timeout, const RankBody& body) {
    std::vector<RankOutcome> outcomes(static_cast<std::size_t>(size));
    const RankBody recorded = record_outcome(outcomes, body);
    try {
      sim::FiberWorld world(size, /*move_data=*/true);
      world.run([&](Transport& t) {
        t.set_timeout(timeout);
        recorded(t);
      });
    } catch (const std::exception&) {
      // run() rethrows the first failure; every rank's is in outcomes.
    }
    return outcomes;
  };
  return {fibers};
}

}  // namespace ringlab::conformance
