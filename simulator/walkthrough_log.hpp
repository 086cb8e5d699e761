// One collective of a real run, as one rank logged it: cut out of the rank's
// RankLog at the marks its ProcessGroup made (RecordOptions::collectives),
// into a log of its own that build_run() takes together with the other
// ranks' cuts of the same collective, as it takes the simulator's logs.
//
// A cut holds the collective's buffers (named as the simulator names them,
// with the values they held when it started, where those were kept), then
// the scratch memory the algorithm allocated (named scratch#0, scratch#1, ...
// in the order this collective allocated it, as in a simulated run), and the
// events between the marks, their requests numbered from 0. Memory the
// algorithm touched that is neither is region -1, in bytes.
#pragma once

#include <cstddef>
#include <vector>

#include "simulator/recording_transport.hpp"

namespace ringlab::sim {

struct WalkthroughLog {
  // The mark, its buffers' regions those of `log` (0, 1) and their samples'
  // offsets in log.values; first_event 0 and end_event the events' count.
  CollectiveMark mark;
  RankLog log;
  // When this rank's k-th marked collective started and ended: its
  // position among the rank's marks (the ranks of one job make the same
  // calls in the same order, so k names one collective on every rank).
  std::size_t index = 0;
  // False: only the mark was kept (the trace's limits); log holds no events.
  bool kept = true;
};

// Every marked collective of `log`, in order. A collective still running
// when the log was read (a rank that failed in it) ends at the log's end.
std::vector<WalkthroughLog> cut_walkthroughs(const RankLog& log);

}  // namespace ringlab::sim
