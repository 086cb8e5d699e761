// The conformance suite over nccl_rules: NCCL's point-to-point rules on CPU
// threads (transport/nccl_rules/nccl_rules.hpp). Like the NCCL binding it
// matches in posting order, does not buffer sends, launches on waits and
// runs a rank's groups in order, and refuses a receive from any source;
// unlike NCCL it sees a size mismatch and reports a deadlock at once. Every
// algorithm runs at world sizes 1 to 9.
#include "transport/nccl_rules/nccl_rules.hpp"
#include "transport_conformance.hpp"

namespace ringlab::conformance {

std::vector<Binding> bindings() {
  Binding rules;
  rules.name = "nccl_rules";
  rules.matches_tags = false;
  rules.buffers_sends = false;
  rules.survives_timeout = false;
  rules.receives_from_any_source = false;
  rules.launches_in_order = true;
  rules.detects_deadlock = true;
  rules.max_ranks = 9;
  rules.algorithm_worlds = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  rules.run = [](int size, Duration timeout, const RankBody& body) {
    std::vector<RankOutcome> outcomes(static_cast<std::size_t>(size));
    try {
      run_nccl_rules_world(size, record_outcome(outcomes, body), timeout);
    } catch (const std::exception&) {
      // run_nccl_rules_world rethrows the first failure; every rank's is in outcomes.
    }
    return outcomes;
  };
  return {rules};
}

}  // namespace ringlab::conformance
