// The walkthroughs in a trace file of a real run: what `ringlab replay` and
// `ringlab gui --trace` read. Each rank's trace (write_rank_trace) carries,
// in its "otherData" (which Chrome's trace format keeps for metadata, and
// Perfetto and chrome://tracing leave alone), under "ringlab_walkthroughs",
// one entry per rank: the collectives it marked, each cut out of its log
// (walkthrough_log.hpp) with every event, region and kept value;
// merge_traces() puts every rank's entries in one list. docs/replay.md
// describes the format.
//
// A value is written as its dtype's name and its raw bytes (base64), so a
// dtype added to ops/ needs nothing here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "simulator/walkthrough_log.hpp"

namespace ringlab::sim {

inline constexpr int kWalkthroughFormat = 1;
inline constexpr const char* kWalkthroughsKey = "ringlab_walkthroughs";

// One rank's walkthroughs, as one entry of "ringlab_walkthroughs".
struct RankWalkthroughs {
  int rank = 0;
  int world_size = 0;
  // The world's series (TraceOptions::flow_series): a program that starts
  // several worlds of fresh processes numbers them, so that the k-th
  // collective of one world is not taken for the k-th of another.
  std::uint32_t series = 0;
  std::string process;  // "ringlab (tcp)"
  // wall_ns, start_ns and end_ns are relative to the trace's origin here.
  std::vector<WalkthroughLog> walkthroughs;
};

struct WalkthroughFileOptions {
  std::uint32_t series = 0;
  std::string process;
  std::int64_t time_origin_ns = 0;  // subtracted from every time
  // Events kept over all walkthroughs; a walkthrough that does not fit is
  // kept as its mark alone (WalkthroughLog::kept false).
  std::size_t max_events = 0;
};

// The JSON text of one rank's entry.
std::string walkthroughs_json(const RankLog& log, const WalkthroughFileOptions& options);

// Every rank's entry in a trace file written by ringlab (one rank's, or a
// merged one), in the file's order. Throws std::runtime_error naming the
// file for one that cannot be read, is not a Chrome trace, or holds an entry
// ringlab cannot read; a trace without walkthroughs gives none.
std::vector<RankWalkthroughs> read_walkthroughs(const std::string& trace_path);

}  // namespace ringlab::sim
