// Turns what the ranks of a recorded run did into a Run: matches messages,
// computes every event's Lamport step, and follows provenance (and values)
// through every write.
//
// One builder, fed two ways:
//  - build_run(logs): after the run, from each rank's RankLog (threads, the
//    parameter server, anything with a log). It replays every rank's log in
//    program order, a rank pausing at a receive whose send its peer has not
//    reached yet.
//  - LiveRecord: while the run goes on (fibers: every rank on one thread).
//    Each rank's RecordingTransport hands every event to the builder as it
//    happens instead of logging it, so no log is ever kept: what a 1024-rank
//    ring needs is the Run itself, not the Run and the logs behind it
//    (docs/benchmarks.md, "The simulator"). Fibers run a receive's completion only after
//    its send, so every event can be taken at once.
//
// Only program order and message matching are used (the k-th send from s to
// d with tag t matches the k-th receive d posted from s with tag t, as every
// transport here delivers), never the order in which ranks happened to run,
// so the Run is the same for every scheduling (rank sets may be numbered
// differently; their contents are the same).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "simulator/record.hpp"
#include "simulator/recording_transport.hpp"

namespace ringlab::sim {

struct RunInfo {
  std::string operation;
  std::string algorithm;
  std::vector<std::string> roles;  // empty: "rank r"
  DType dtype = DType::Float32;
  ReduceOp op = ReduceOp::SUM;
  int root = 0;
  std::size_t count = 0;
  bool values_recorded = false;
  std::string values_note;
};

// logs[r] must be rank r's log. Throws std::logic_error if the logs are not
// a complete run (a receive completed that no send matches). A wait that
// failed (Event::failed) completes nothing: its receive stays open
// (Run::awaited). event_steps, when given, gets the step each event of each
// rank ran in (the rank's clock after it): where a real run's wall-clock
// times fall among the steps.
Run build_run(std::vector<RankLog> logs, RunInfo info,
              std::vector<std::vector<Step>>* event_steps = nullptr);

class RecordBuilder;

// A Run built while the ranks run; pass it to each rank's RecordingTransport
// (recording_transport.hpp). Single-threaded: every rank must run on one
// thread (FiberWorld).
class LiveRecord {
 public:
  LiveRecord(int ranks, RunInfo info);
  ~LiveRecord();
  LiveRecord(const LiveRecord&) = delete;
  LiveRecord& operator=(const LiveRecord&) = delete;

  RecordBuilder& builder() { return *builder_; }
  // After every rank has returned.
  Run finish();

 private:
  std::unique_ptr<RecordBuilder> builder_;
};

}  // namespace ringlab::sim
