// A real run's collectives as Runs: the walkthroughs in a trace
// (walkthrough_file.hpp), every rank's cut of one collective given to
// build_run() together, so that what `ringlab sim` prints and the GUI draws
// for a simulated run they print and draw for a real one, unchanged.
//
//   for (const RealWalkthrough& w : real_walkthroughs(read_walkthroughs("trace.json")))
//     ... w.run ...   // steps, messages, every rank's buffers, provenance
//
// The steps are the algorithm's (the simulator's Lamport steps, from each
// rank's program order and the matching of its messages), not wall-clock
// slices; each event's wall-clock time and step are kept beside the Run for
// timings (real_timings.hpp).
//
// A run that failed: a rank that left no trace (killed) is "missing", one
// whose trace ends before this collective "not started"; what the others
// received from either is shown as sent from memory nobody named,
// travelling as late as its receiver allows, and what they waited for from
// it in vain is in Run::awaited, with the messages sent that never arrived
// (Message::delivered false).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "simulator/record.hpp"
#include "simulator/walkthrough_file.hpp"

namespace ringlab::sim {

// A buffer's sampled values (where they were not kept whole): its first
// elements, and the checksum of all of it (value_checksum).
struct SampledValues {
  bool taken = false;       // on host memory (else nothing was read)
  std::size_t elements = 0;
  std::vector<std::byte> bytes;
  std::uint64_t checksum = 0;
};

struct RankBufferSamples {
  int rank = 0;
  int region = -1;  // in the Run
  std::string name;
  DType dtype = DType::Float32;
  std::size_t count = 0;
  SampledValues before, after;
};

struct RealWalkthrough {
  std::string name;  // the program's label ("bucket 2"), else "all_reduce #3"
  std::uint32_t series = 0;
  std::size_t index = 0;  // the collective's position among the rank's (from 0)
  CollectiveMark mark;    // what every rank's mark agrees on (buffers left out)
  int ranks = 0;
  bool kept = true;          // false: the trace kept the marks only (its limits)
  std::vector<int> missing;      // ranks that left no trace (killed)
  std::vector<int> not_started;  // ranks whose trace ends before it (failed first)
  std::vector<int> failed;   // ranks where it did not end well (or not at all)
  Run run;                   // empty when !kept
  // Per rank (empty for a missing one): each event's wall-clock start and
  // end (ns from the trace's origin) and the step it ran in; when the
  // collective started and ended there.
  std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> wall_ns;
  std::vector<std::vector<Step>> event_steps;
  std::vector<std::pair<std::int64_t, std::int64_t>> span_ns;
  std::vector<RankBufferSamples> samples;  // rank by rank, buffer by buffer
};

// The walkthroughs of every collective in the entries, in the order of
// their worlds (series) and of the calls. Throws std::runtime_error where
// the ranks disagree on a collective (traces of different runs merged into
// one file), naming the ranks and the collective.
std::vector<RealWalkthrough> real_walkthroughs(const std::vector<RankWalkthroughs>& entries);

// The walkthroughs `which` names: its number (from 1) or its name; "" every
// one. Throws std::invalid_argument saying what `file` holds where none is.
std::vector<std::size_t> pick_walkthroughs(const std::vector<RealWalkthrough>& all,
                                           const std::string& which, const std::string& file);

// "all_reduce, algorithm ring, 4 ranks, 2 x int64 per rank (16 bytes), op sum":
// the words of `ringlab sim`'s first line.
std::string describe_collective(const CollectiveMark& mark, int ranks);
// `ringlab sim ...` for the same collective, algorithm, world and data size.
std::string sim_command_for(const CollectiveMark& mark, int ranks);

}  // namespace ringlab::sim
