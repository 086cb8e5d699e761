// One torch.distributed process group of the `ringlab` backend, on the C++
// side: the TCP transport, met through the store torch hands the backend,
// and a ringlab ProcessGroup on it whose collectives the Python side
// (ringlab/torch.py) calls on views of the torch tensors' memory.
//
// It also says which algorithm ran (rank 0, on stderr, the first time each
// collective runs with each algorithm) and, when asked, records every
// message for a Perfetto trace: the same per-rank file `ringlab run --trace`
// merges (backends/traced_launch.hpp), or, on its own, every rank's file and
// rank 0's merge of them into DIR/trace.json.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "primitives/process_group.hpp"
#include "store/key_value_store.hpp"

namespace ringlab::sim {
class RecordingTransport;
}
namespace ringlab::tcp {
class TcpTransport;
}

namespace ringlab::python {

struct GroupSpec {
  int rank = 0;
  int size = 1;
  Duration timeout = kDefaultTimeout;
  // Where this rank listens for the others (RINGLAB_BIND_ADDR) and the job's
  // secret (RINGLAB_JOB_TOKEN; empty: an open job, loopback only).
  std::string bind_addr = "127.0.0.1";
  std::string job_token;
  // Algorithm per collective, and where each choice came from, for the line
  // that says which ran ("RINGLAB_ALGORITHMS", "the backend's options").
  std::map<Collective, std::string> algorithms;
  std::map<Collective, std::string> algorithm_sources;
  // Traces. trace_dir (RINGLAB_TRACE): every rank writes rank<r>.json
  // there, and rank 0 merges them into trace.json. launcher_trace_dir
  // (RINGLAB_TRACE_DIR, set by `ringlab run --trace`): write rank<r>.json
  // only; the launcher merges. Empty: no trace.
  std::string trace_dir;
  std::string launcher_trace_dir;
  std::int64_t trace_origin_ns = 0;  // 0: agreed through the store
  std::size_t trace_max_events = 200000;
};

class BridgeGroup {
 public:
  // Connects to the other ranks through `store` (tcp::connect); the store is
  // used for nothing after that.
  BridgeGroup(std::shared_ptr<store::KeyValueStore> store, GroupSpec spec);
  ~BridgeGroup();
  BridgeGroup(const BridgeGroup&) = delete;
  BridgeGroup& operator=(const BridgeGroup&) = delete;

  ProcessGroup& group() { return *group_; }
  int rank() const { return spec_.rank; }
  int size() const { return spec_.size; }

  // Says (rank 0, once per collective and algorithm) which algorithm runs
  // `c` on `bytes` bytes: the one in effect, or auto's choice.
  void announce(Collective c, std::size_t bytes);
  // Writes the trace (and, with trace_dir on rank 0, merges the ranks' files,
  // waiting up to the timeout for them); returns a line saying where it went
  // ("" when there is no trace). Once; later calls return "".
  std::string finish();

 private:
  std::string write_rank_file(const std::string& folder);
  std::string merge_rank_files();

  GroupSpec spec_;
  std::shared_ptr<tcp::TcpTransport> transport_;
  std::shared_ptr<sim::RecordingTransport> recorder_;
  std::unique_ptr<ProcessGroup> group_;
  std::mutex mutex_;
  std::set<std::pair<Collective, std::string>> announced_;
  bool finished_ = false;
};

}  // namespace ringlab::python
