// One torch.distributed process group of the `ringlab` backend, on the C++
// side: the TCP transport, met through the store torch hands the backend,
// and a ringlab ProcessGroup on it whose collectives the Python side
// (ringlab/torch.py) calls on views of the torch tensors' memory.
//
// It reads the variables every ringlab rank reads, as a rank does
// (backends/rank_world.hpp): RINGLAB_BIND_ADDR, RINGLAB_JOB_TOKEN, and
// RINGLAB_TIMEOUT_MS, which wins over torch's timeout.
//
// It also says which algorithm ran (rank 0, on stderr, the first time each
// collective runs with each algorithm) and, for the group the Python side
// traces (the first of the process), records every message through the
// ranks' one trace path (backends/rank_trace.hpp): under `ringlab run
// --trace` its rank<r>.json for the launcher to merge; with RINGLAB_TRACE=DIR
// its DIR/rank<r>.json, the last rank to write merging every rank's into
// DIR/trace.json. Nothing waits for another rank's file, in finish() or in
// the destructor.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "primitives/process_group.hpp"
#include "store/key_value_store.hpp"

namespace ringlab::backends {
class RankRecorder;
}
namespace ringlab::tcp {
class TcpTransport;
}

namespace ringlab::python {

struct GroupSpec {
  int rank = 0;
  int size = 1;
  // torch's; RINGLAB_TIMEOUT_MS, when set, wins (timeout() says which ran).
  Duration timeout = kDefaultTimeout;
  // Algorithm per collective, and where each choice came from, for the line
  // that says which ran ("RINGLAB_ALGORITHMS", "the backend's options").
  std::map<Collective, std::string> algorithms;
  std::map<Collective, std::string> algorithm_sources;
  // The group the process traces, if its variables ask for a trace
  // (RINGLAB_TRACE_DIR, else RINGLAB_TRACE).
  bool trace = false;
};

class BridgeGroup {
 public:
  // Connects to the other ranks through `store` (tcp::connect); the store is
  // used for nothing after that. Throws std::invalid_argument, before it
  // meets them, naming a variable that is wrong (RINGLAB_TRACE=DIR where DIR
  // cannot be written).
  BridgeGroup(std::shared_ptr<store::Store> store, GroupSpec spec);
  ~BridgeGroup();
  BridgeGroup(const BridgeGroup&) = delete;
  BridgeGroup& operator=(const BridgeGroup&) = delete;

  ProcessGroup& group() { return *group_; }
  int rank() const { return spec_.rank; }
  int size() const { return spec_.size; }
  // The timeout of every wait: torch's, or RINGLAB_TIMEOUT_MS.
  Duration timeout() const { return spec_.timeout; }

  // Says (rank 0, once per collective and algorithm) which algorithm runs
  // `c` on `bytes` bytes: the one in effect, or auto's choice.
  void announce(Collective c, std::size_t bytes);
  // The name of the next collective's walkthrough in the trace ("bucket
  // 2"); nothing where the group is not traced.
  void label_next_collective(std::string label);
  // Writes the trace (and merges the ranks' files where this rank is the
  // last to write one); returns a line saying where it went or why it did
  // not ("" when there is nothing to say). Once; later calls return "".
  std::string finish();

 private:
  GroupSpec spec_;
  std::shared_ptr<tcp::TcpTransport> transport_;
  std::unique_ptr<backends::RankRecorder> recorder_;
  std::unique_ptr<ProcessGroup> group_;
  std::mutex mutex_;
  std::set<std::pair<Collective, std::string>> announced_;
  bool finished_ = false;
};

}  // namespace ringlab::python
