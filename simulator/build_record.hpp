// Turns the per-rank logs of a recorded run into a Run: matches messages,
// computes every event's Lamport step, and follows provenance (and values)
// through every write.
//
// Only program order and message matching are used (the k-th send from s to
// d with tag t matches the k-th receive d posted from s with tag t, as every
// transport here delivers), never the order in which threads happened to
// run, so the Run is the same for every scheduling.
#pragma once

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
// a complete run (a receive completed that no send matches).
Run build_run(std::vector<RankLog> logs, RunInfo info);

}  // namespace ringlab::sim
