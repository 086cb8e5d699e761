// One case of an exercise on one rank: its buffers laid out and filled (in
// the transport's memory, named for a recorder when there is one), the
// learner's function called on a Comm, and what it left checked against the
// closed form (cases.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "exercises/cases.hpp"
#include "exercises/watch.hpp"
#include "simulator/recording_transport.hpp"
#include "transport/transport.hpp"

namespace ringlab::exercises {

// What one rank was left with after one case.
struct RankOutcome {
  bool ran = false;          // this rank's part of the case was run (in this process)
  std::string error;         // what the function threw ("" if it returned)
  bool peer_failed = false;  // the error only says that another rank failed first
  // The first wrong element, if any: buffer (index into buffers_of), its name,
  // the element, what it held and what it should hold; wrong: how many.
  int buffer = -1;
  std::string buffer_name;
  std::size_t index = 0;
  double held = 0, expected = 0;
  std::size_t wrong = 0;
  // Barrier: the ranks this rank returned without having heard from.
  std::vector<int> not_heard;
  // What the check's evidence digests (evidence.hpp, result_bytes), once the
  // function returned.
  std::vector<std::byte> result;

  bool ok() const { return ran && error.empty() && wrong == 0 && not_heard.empty(); }
};

// Keeps track, for a barrier, of which ranks each rank has heard from: a
// message carries what its sender had heard when it was posted, and a
// receive adds that to the receiver's once it is waited for. The k-th receive
// of (source, tag) gets the k-th send's, as transports with tags match them.
// One per world, shared by its ranks' knowing transports.
struct KnowledgeWorld {
  using Key = std::tuple<int, int, Tag>;  // source, destination, tag
  std::mutex mutex;
  std::map<Key, std::vector<std::uint32_t>> sends;  // what each send carried (bit s: rank s)
  std::map<Key, std::size_t> receives_posted;
};

// Wraps a rank's transport and tracks what it has heard (KnowledgeWorld).
std::unique_ptr<Transport> knowing_transport(Transport& inner, KnowledgeWorld& world);
// The ranks the transport's rank has not heard from (itself excluded).
std::vector<int> not_heard_from(const Transport& knowing);

struct RankRun {
  Transport& inner;                             // where the buffers come from
  Transport& run_on;                            // what the function talks to (inner, or a wrapper)
  sim::RecordingTransport* recorder = nullptr;  // names the buffers, when recording
  std::uint64_t sequence = 0;                   // the Comm's collective number
  const Transport* knowing = nullptr;           // a knowing_transport, for a barrier
  WatchWorld* watch = nullptr;                  // the world's, where deadlocks are explained
};

// Runs the case on this rank, the function talking to run_on through a
// watching transport (watch.hpp: a rank that posts past post_limit throws
// RunawayError). What the function throws goes through (so the world fails
// at once); a wrong result does not throw: it is in the outcome.
RankOutcome run_case_on_rank(const Exercise& exercise, const Function& fn, const Case& c,
                             const RankRun& run);

// "rank 2: element 3 of buf holds 16, should hold 34 (and 5 more elements are
// wrong)"; "rank 0 returned from the barrier before hearing from ranks 1, 2".
std::string describe(const RankOutcome& outcome, int rank, DType dtype);
// A value as the case's dtype prints it: "16", "2.5".
std::string format_value(double value, DType dtype);

}  // namespace ringlab::exercises
