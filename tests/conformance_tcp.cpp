// The conformance suite over TCP: every rank is a thread of this process
// that connects over loopback as a separate process would (test_tcp_util.hpp),
// and a rank whose body ends or throws closes its transport as an exiting
// process would. It runs twice: as the transport runs by default here, and
// with every send through a writer thread.
#include "test_tcp_util.hpp"
#include "transport_conformance.hpp"

namespace ringlab::conformance {

// A world whose ranks connect as separate processes would; `writers`: every
// send goes out through a writer thread (writers.hpp), as large sends
// do on a host with processors to spare.
Binding tcp_binding(bool writers) {
  Binding tcp;
  tcp.name = writers ? "tcp with writer threads" : "tcp";
  tcp.run = [writers](int size, Duration timeout, const RankBody& body) {
    std::vector<RankOutcome> outcomes(static_cast<std::size_t>(size));
    const RankBody recorded = record_outcome(outcomes, body);
    const int port = tcp::testing::free_port();
    // The rendezvous keeps its usual time; only the transport's waits get `timeout`.
    const auto errors = tcp::testing::run_rank_threads(size, [&](int rank) {
      tcp::WorldSpec r = tcp::testing::local_rendezvous(size, rank, port);
      if (writers) {
        r.processors = 2 * size;  // a processor to spare for every rank
        r.writer_bytes = 0;
      }
      auto transport = tcp::connect(r);
      transport->set_timeout(timeout);
      recorded(*transport);
    });
    // A rank that failed before its body started (in the rendezvous).
    for (std::size_t rank = 0; rank < errors.size(); ++rank)
      if (!errors[rank].empty() && outcomes[rank].kind == RankOutcome::Kind::Finished)
        outcomes[rank] = {RankOutcome::Kind::OtherFailure, "rendezvous: " + errors[rank], -1};
    return outcomes;
  };
  return tcp;
}

std::vector<Binding> bindings() { return {tcp_binding(false), tcp_binding(true)}; }

}  // namespace ringlab::conformance
