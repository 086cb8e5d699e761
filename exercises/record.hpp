// One case of an exercise recorded by the simulator: every rank a fiber over
// a recording transport, so every message, every write and the provenance of
// every element is known (simulator/record.hpp). `check` explains a failure
// from it, measures the cost on it, and `show` steps through it in the GUI.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "exercises/rank_run.hpp"
#include "simulator/build_record.hpp"
#include "simulator/record.hpp"
#include "simulator/recording_transport.hpp"

namespace ringlab::exercises {

struct Recorded {
  std::vector<RankOutcome> ranks;
  std::string error;               // the world's error ("deadlock: ...", a throw); "" if none
  std::vector<sim::RankLog> logs;  // per rank, when every rank returned
  sim::RunInfo info;
  std::optional<sim::Run> run;  // built from the logs, when every rank returned
};

// values: keep the values of every write (the buffers' contents step by
// step), as long as the case's buffers hold at most 16 MiB in all.
Recorded record_case(const Exercise& exercise, const Function& fn, const Case& c, bool values,
                     const std::string& algorithm = "yours");

// The logs and the run's description, to a stream and back (`show` records in
// the exercise's program and draws in ringlab's). Throws std::runtime_error
// for a stream that is not such a recording.
void write_recording(std::ostream& out, const std::vector<sim::RankLog>& logs,
                     const sim::RunInfo& info);
sim::Run read_recording(std::istream& in);

}  // namespace ringlab::exercises
