// RecordingTransport: wraps any Transport (in-process, fibers, TCP) and logs,
// in the rank's program order, every operation that moves or changes data:
// isend/irecv posts, completions, copies, reductions, divisions, scratch
// allocations and frees. Everything is forwarded to the wrapped transport
// unchanged, so the algorithms cannot tell the difference.
//
// Byte pointers are turned into (region, element range) through the buffers
// the rank named with name_buffer() and the scratch it allocated through this
// transport. Memory nobody named is logged as region -1 (byte ranges).
//
// One RecordingTransport per rank, used from that rank's thread only (like
// any Transport): the log needs no locks. build_run() (build_record.hpp)
// turns the logs of all ranks into a Run; a trace writer can read one rank's
// log on its own (wall-clock times are kept when RecordOptions::wall_clock).
// Made with a LiveRecord instead (every rank on one thread: fibers), it logs
// nothing and hands each event to the record being built as it happens.
//
// On a real run's rank (RecordOptions::collectives) it also hears from the
// ProcessGroup when each collective starts and ends (CollectiveObserver) and
// marks it in the log: the buffers named as the simulator names them, the
// algorithm that ran, and the values (whole for small buffers, else a sample
// and a checksum), so that each collective can be cut out of the log
// (walkthrough_log.hpp) and replayed as a Run.
#pragma once

#include <cstdint>
#include <limits>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "primitives/collective_observer.hpp"
#include "simulator/record.hpp"
#include "transport/transport.hpp"

namespace ringlab::sim {

enum class EventKind : std::uint8_t { PostSend, PostRecv, Complete, Copy, Reduce, Divide, Alloc, Free };

inline constexpr std::size_t kNoValues = std::numeric_limits<std::size_t>::max();

// One logged operation (48 bytes).
// Field use by kind:
//   PostSend/PostRecv: peer, tag, request, region/offset/count (the bytes sent
//                      from / landing in).
//   Complete:          request; failed: the wait threw (nothing arrived: a
//                      peer failed, or it timed out).
//   Copy/Reduce:       region/offset/count (destination), src_region/src_offset
//                      (same count), op (Reduce).
//   Divide:            region/offset/count, peer = the divisor.
//   Alloc/Free:        region.
// Offsets and counts are elements of the region's dtype (bytes for region -1).
struct Event {
  EventKind kind = EventKind::Copy;
  ReduceOp op = ReduceOp::SUM;
  bool failed = false;
  std::int32_t peer = -1;
  std::uint32_t request = 0;
  std::int32_t region = -1;
  std::int32_t src_region = -1;
  std::uint64_t offset = 0;
  std::uint64_t count = 0;
  std::uint64_t tag_or_src_offset = 0;  // Post*: the tag; Copy/Reduce: src offset
  Tag tag() const { return tag_or_src_offset; }
  std::uint64_t src_offset() const { return tag_or_src_offset; }
};

// A region as the rank saw it (ids are local to the rank, in creation order).
struct LoggedRegion {
  std::string name;
  RegionKind kind = RegionKind::User;
  DType dtype = DType::Float32;
  std::size_t count = 0;
  // Elements [input_offset, input_offset + input_count) are this rank's
  // input (provenance {rank}); the rest hold nothing yet.
  std::size_t input_offset = 0, input_count = 0;
  std::size_t initial_values = kNoValues;  // offset in RankLog::values
  std::uint64_t alloc_event = 0;           // index of its Alloc event (scratch)
};

// A sample of a buffer's values: its first `elements` elements (their bytes
// at `offset` in RankLog::values) and value_checksum() of all its bytes.
struct ValueSample {
  std::size_t offset = kNoValues;
  std::size_t elements = 0;
  std::uint64_t checksum = 0;
  bool taken() const { return offset != kNoValues; }
};

// FNV-1a (64 bits) over the bytes taken 8 at a time as little-endian
// words, then the last bytes one by one: fast enough to run over a
// gradient bucket twice per collective (docs/replay.md).
std::uint64_t value_checksum(ConstBytes bytes);

// One of a marked collective's buffers: the region named for it, as named
// then (initial_values: where the collective's values are kept whole), and
// its sample when the collective started and when it ended.
struct MarkedBuffer {
  int region = -1;
  LoggedRegion named;
  ValueSample before, after;
};

// A collective a ProcessGroup ran on this rank (CollectiveObserver): its
// events are [first_event, end_event) of the log.
struct CollectiveMark {
  Collective collective = Collective::AllReduce;
  std::string algorithm;  // the one that ran (auto's choice)
  std::size_t count = 0;  // as Scenario::count
  DType dtype = DType::Float32;
  ReduceOp op = ReduceOp::SUM;
  int root = 0;
  std::string label;  // the program's name for it ("bucket 2"); "" if none
  std::size_t first_event = 0;
  std::size_t end_event = kNoValues;  // kNoValues: it had not ended when the log was read
  bool ok = false;                    // ended, and the algorithm returned
  bool whole_values = false;          // every write's values were kept
  std::int64_t start_ns = 0, end_ns = 0;  // wall_clock only
  std::vector<MarkedBuffer> buffers;      // first, then second, where present
};

struct RankLog {
  int rank = -1;
  int world_size = 0;
  std::vector<LoggedRegion> regions;
  std::vector<Event> events;
  std::vector<CollectiveMark> collectives;  // RecordOptions::collectives only
  // Value mode (or collectives) only, parallel to events: dst bytes
  // before/after each write (PostRecv: before; Complete of a receive:
  // after), as offsets in `values`, kNoValues where not kept.
  std::vector<std::pair<std::size_t, std::size_t>> event_values;
  std::vector<std::byte> values;
  // wall_clock only, parallel to events: steady_clock_ns() at start and end.
  std::vector<std::pair<std::int64_t, std::int64_t>> wall_ns;
};

// The clock of RankLog::wall_ns (std::chrono::steady_clock, in ns): a trace's
// time origin is read on it too, so that the ranks of one machine, given the
// same origin, share one time axis.
std::int64_t steady_clock_ns();

struct RecordOptions {
  bool values = false;      // capture bytes before/after each write (host memory only)
  bool wall_clock = false;  // keep wall-clock times (for traces of real runs)
  // Element type assumed for scratch memory (inside a marked collective:
  // the collective's).
  DType scratch_dtype = DType::Float32;
  // Mark the collectives a ProcessGroup reports (RankLog::collectives). The
  // values of a collective whose buffers hold at most whole_values_bytes on
  // the rank that has the most are kept whole, while the log holds fewer
  // than value_budget_bytes of values; of every collective, each buffer's
  // first sample_elements elements and its checksum, before and after (host
  // memory only).
  bool collectives = false;
  std::size_t whole_values_bytes = 0;
  std::size_t value_budget_bytes = 0;
  std::size_t sample_elements = 16;
};

class LiveRecord;

class RecordingTransport final : public Transport, public CollectiveObserver {
 public:
  RecordingTransport(Transport& inner, RecordOptions options);
  // Live: events go to `live` (which must outlive every scratch buffer this
  // transport hands out); log() keeps only the regions.
  RecordingTransport(Transport& inner, RecordOptions options, LiveRecord& live);
  ~RecordingTransport() override;

  // Names the memory a rank passes to the algorithm; is_input: its contents
  // are this rank's input (provenance {rank}), else "nothing yet".
  // Returns the local region id. Naming memory that already is a region
  // (the same address and size, e.g. just returned by allocate()) renames it
  // instead: new name, dtype and inputs, values captured again (so name a
  // buffer again after filling it, before anything writes it). A renamed
  // scratch region becomes a User region; its Free is still logged.
  int name_buffer(ConstBytes memory, std::string name, DType dtype, bool is_input);
  // The same, with only elements [input_offset, input_offset + input_count)
  // being this rank's input (all_gather: its own block).
  int name_buffer(ConstBytes memory, std::string name, DType dtype, std::size_t input_offset,
                  std::size_t input_count);

  const RankLog& log() const;
  RankLog take_log();  // moves the log out (call after the rank is done)

  // RecordOptions::collectives: marks the collective (its buffers named
  // as the simulator names them), and its end.
  void collective_started(const CollectiveStart& start) noexcept override;
  void collective_ended(bool ok) noexcept override;
  // The label of the next collective marked ("bucket 2"), for a program
  // that knows better than the call order what it is.
  void label_next_collective(std::string label);

  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  std::string_view name() const override { return inner_.name(); }
  std::unique_ptr<Request> isend(int dst, Tag tag, ConstBytes data) override;
  std::unique_ptr<Request> irecv(int src, Tag tag, MutBytes data) override;
  // Recorded as isend/irecv; the wrapped transport is told the dtype.
  std::unique_ptr<Request> isend_typed(int dst, Tag tag, ConstBytes data, DType dtype) override;
  std::unique_ptr<Request> irecv_typed(int src, Tag tag, MutBytes data, DType dtype) override;
  // sendrecv: the base class's (both posted through isend/irecv above, then
  // waited on together).
  MemoryKind memory() const override { return inner_.memory(); }
  // The wrapped transport's answers, so that the algorithms choose on a
  // traced rank as on an untraced one (all_reduce's auto, the pipelined
  // reduce-scatter).
  bool prefers_fewer_messages() const override { return inner_.prefers_fewer_messages(); }
  bool overlaps_transfers() const override { return inner_.overlaps_transfers(); }
  Buffer allocate(std::size_t bytes) override;
  void copy(MutBytes dst, ConstBytes src) override;
  void reduce(DType dtype, ReduceOp op, MutBytes acc, ConstBytes in) override;
  void divide(DType dtype, MutBytes data, int world_size) override;

  struct State;

 private:
  // isend/irecv, the wrapped transport's call given (typed or not).
  std::unique_ptr<Request> record_send(int dst, Tag tag, ConstBytes data,
                                       const std::function<std::unique_ptr<Request>()>& post);
  std::unique_ptr<Request> record_recv(int src, Tag tag, MutBytes data,
                                       const std::function<std::unique_ptr<Request>()>& post);

  Event post_event(EventKind kind, int peer, Tag tag, ConstBytes data);

  Transport& inner_;
  std::shared_ptr<State> state_;
};

// Names a buffer if `transport` is a RecordingTransport; does nothing
// otherwise, so code written against Transport can annotate its buffers.
void name_buffer(Transport& transport, ConstBytes memory, std::string name, DType dtype,
                 bool is_input = false);

}  // namespace ringlab::sim
