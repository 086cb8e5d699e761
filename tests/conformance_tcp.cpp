// The conformance suite over TCP: every rank is a thread of this process
// that connects over loopback as a separate process would (test_tcp_util.hpp),
// and a rank whose body ends or throws closes its transport as an exiting
// process would.
#include "test_tcp_util.hpp"
#include "transport_conformance.hpp"

namespace ringlab::conformance {

std::vector<Binding> bindings() {
  Binding tcp;
  tcp.name = "tcp";
  tcp.run = [](int size, Duration timeout, const RankBody& body) {
    std::vector<RankOutcome> outcomes(static_cast<std::size_t>(size));
    const RankBody recorded = record_outcome(outcomes, body);
    const int port = tcp::testing::free_port();
    // The rendezvous keeps its usual time; only the transport's waits get `timeout`.
    const auto errors = tcp::testing::run_rank_threads(size, [&](int rank) {
      auto transport = tcp::connect(tcp::testing::local_rendezvous(size, rank, port));
      transport->set_timeout(timeout);
      recorded(*transport);
    });
    // A rank that failed before its body started (in the rendezvous).
    for (std::size_t rank = 0; rank < errors.size(); ++rank)
      if (!errors[rank].empty() && outcomes[rank].kind == RankOutcome::Kind::Finished)
        outcomes[rank] = {RankOutcome::Kind::OtherFailure, "rendezvous: " + errors[rank], -1};
    return outcomes;
  };
  return {tcp};
}

}  // namespace ringlab::conformance
