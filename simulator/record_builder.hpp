// The builder behind build_run and LiveRecord (build_record.hpp): takes one
// rank's events in its program order and keeps the Run up to date. Internal
// to simulator/.
//
// Every call below is one event of `rank` (one entry of its RankLog, whose
// index is the write's seq), but for add_region and rename_region, which
// name memory and are not events. A receive's completion may be given only
// once its message was sent (received() says so).
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "simulator/build_record.hpp"
#include "simulator/provenance.hpp"
#include "simulator/record.hpp"
#include "simulator/recording_transport.hpp"
#include "simulator/unmatched.hpp"

namespace ringlab::sim {

class RecordBuilder {
 public:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};

  RecordBuilder(int ranks, RunInfo info);

  // Memory rank `rank` named (user buffers) or allocated (scratch); local ids
  // count from 0 per rank in creation order. initial: its bytes, where values
  // are recorded.
  void add_region(int rank, int local, const LoggedRegion& region, ConstBytes initial);
  // Memory named again (name_buffer on a region it already is): new name,
  // dtype, count and inputs; its provenance starts again from those inputs.
  void rename_region(int rank, int local, const LoggedRegion& region, ConstBytes initial);

  // A send posted: returns the message. If it completes a receive posted
  // before it, matched_receive() is that receive until the next call.
  std::uint32_t post_send(int rank, int peer, Tag tag, int local_region, std::uint64_t offset,
                          std::uint64_t count);
  // A receive posted into (local_region, offset, count); before: the bytes
  // there now. Returns the receive.
  std::uint32_t post_recv(int rank, int peer, Tag tag, int local_region, std::uint64_t offset,
                          std::uint64_t count, ConstBytes before);
  bool received(std::uint32_t receive) const;
  std::uint32_t matched_receive() const { return matched_; }
  int receiver(std::uint32_t receive) const;

  void complete_send(int rank, std::uint32_t message);
  // after: the bytes of the receive's range now.
  void complete_recv(int rank, std::uint32_t receive, ConstBytes after);
  // A request completed that changes nothing here (an unmatched one, or a
  // wait that failed).
  void nothing(int rank);
  // The rank's clock: the step its last event ran in.
  Step clock(int rank) const { return ranks_[static_cast<std::size_t>(rank)].clock; }
  // Copy, Reduce or Divide (the Event's fields, local region ids).
  void local_write(int rank, const Event& e, ConstBytes before, ConstBytes after);
  void alloc(int rank, int local);
  void free(int rank, int local);

  Run finish();

 private:
  struct Landing {
    int region;
    Elem offset, count;
    std::uint32_t message;
  };
  struct RankState {
    Step clock = 0;
    std::uint32_t seq = 0;         // the next event's index in program order
    std::uint32_t sends = 0;       // messages sent so far (the sort key's last part)
    std::vector<int> regions;      // local id -> global id
    std::deque<Landing> landings;  // the last few receives that landed
  };
  struct Receive {  // a posted receive until it completes
    std::uint32_t message = kNone;
    int rank = -1;
    int src = -1;
    Tag tag = 0;
    Location to;
    Step stamp = 0;
    std::size_t values_before = 0;
    bool open = false;  // posted, not completed
  };
  RankState& rank(int r) { return ranks_[static_cast<std::size_t>(r)]; }
  int global(int r, int local) const;
  std::size_t esize(int region) const;
  Location location(int r, int local_region, std::uint64_t offset, std::uint64_t count) const;
  std::size_t keep_values(ConstBytes bytes);
  void match(std::uint32_t message, std::uint32_t receive);
  RunSpan read_runs(const Location& where);
  std::vector<ProvRun> moved(std::span<const ProvRun> source, Elem src_offset, int src_region,
                             Elem dst_offset, Elem dst_count, int dst_region) const;
  std::size_t write(Write w, std::span<const ProvRun> after, ConstBytes before_values,
                    ConstBytes after_values);
  void initial_state(Region& region, const LoggedRegion& logged, int rank, ConstBytes initial);
  // finish()'s parts, in order.
  void collect_awaited();
  void release_matching_state();
  void order_regions();
  void sort_by_step(Step last);
  void count_totals();

  RunInfo info_;
  Run run_;
  SetTable sets_;
  std::vector<RankState> ranks_;
  std::vector<ProvState> prov_;  // per global region
  std::vector<Receive> receives_;
  std::vector<std::uint32_t> free_receives_;
  std::vector<detail::Unmatched> waiting_;  // per receiving rank
  std::uint32_t matched_ = kNone;
  std::vector<ProvRun> scratch_a_, scratch_b_, scratch_c_;  // reused buffers of runs
};

}  // namespace ringlab::sim
