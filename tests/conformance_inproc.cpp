// The conformance suite over the in-process transport: ranks are threads of
// one world (run_world).
#include "transport/inproc.hpp"
#include "transport_conformance.hpp"

namespace ringlab::conformance {

std::vector<Binding> bindings() {
  Binding inproc;
  inproc.name = "inproc";
  inproc.max_ranks = 9;
  inproc.algorithm_worlds = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  inproc.run = [](int size, Duration timeout, const RankBody& body) {
    std::vector<RankOutcome> outcomes(static_cast<std::size_t>(size));
    try {
      run_world(size, record_outcome(outcomes, body), timeout);
    } catch (const std::exception&) {
      // run_world rethrows the first failure; every rank's is in outcomes.
    }
    return outcomes;
  };
  return {inproc};
}

}  // namespace ringlab::conformance
