// The simulator's record: what a collective (or the parameter server) did on
// N virtual ranks, step by step. This is the data model the GUI draws and the
// cost model and trace writer read.
//
//   Run run = sim::simulate({.collective = Collective::AllReduce,
//                            .algorithm = "ring", .ranks = 4, .count = 8});
//   sim::Replay replay(run);
//   replay.seek(3);                                   // after step 3
//   replay.tensor(run.buffer_of(1, "buf"));            // Rank 1's data
//   replay.provenance_at(run.buffer_of(1, "buf"), 0);  // {0, 3}: "r0+r3"
//   replay.seek(1);                                   // back: cheap too
//
// Nomenclature:
//   step      the logical (Lamport) clock. Every rank starts at 0. An
//             isend/irecv is stamped with its rank's clock when posted; a
//             message travels in step max(send stamp, recv stamp) + 1, and
//             waiting for it moves the receiver's clock there; waiting for a
//             send moves the sender's clock to its stamp + 1. A ring of P
//             ranks therefore takes P-1 steps per pass. Local copies and
//             reductions happen "in" the step of the rank's clock, after the
//             step's receives. Step 0 is local set-up before any message.
//   region    a buffer of one rank: a user buffer the scenario passes to the
//             algorithm ("buf", "send", "recv", ...) or a scratch allocation
//             the algorithm made through Transport::allocate ("scratch#2").
//   location  an element range [offset, offset + count) of a region.
//   write     one change to a region (a delta): a received message landing,
//             a local copy, a reduction, a division. It stores the
//             provenance (and, when recorded, the values) of the range
//             before and after, so a Replay moves forward and backward.
//   provenance which ranks' inputs an element now contains (a RankSet),
//             kept per run of equal elements, not per element.
//
// The record is a pure function of the scenario: it is derived from each
// rank's program order and message matching, never from wall-clock
// interleaving, so threads or fibers, any scheduling, give the same Run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "primitives/algorithms.hpp"
#include "ops/dtype.hpp"
#include "ops/reduce_op.hpp"
#include "ops/tensor.hpp"
#include "transport/transport.hpp"

namespace ringlab::sim {

using Step = std::uint32_t;
inline constexpr Step kNoStep = std::numeric_limits<Step>::max();

// A set of ranks as sorted, disjoint, non-adjacent half-open intervals
// [first, last). Small for what algorithms build (a ring's partial sum is
// one or two intervals), so 1024-rank provenance stays cheap.
class RankSet {
 public:
  RankSet() = default;
  static RankSet single(int rank) { return RankSet({{rank, rank + 1}}); }
  static RankSet range(int first, int last) { return RankSet({{first, last}}); }

  bool empty() const { return intervals_.empty(); }
  bool contains(int rank) const;
  std::size_t count() const;
  RankSet unite(const RankSet& other) const;
  const std::vector<std::pair<int, int>>& intervals() const { return intervals_; }
  std::vector<int> ranks() const;
  // "r0+r1+r2" for up to 8 ranks, else "r0..r511+r768..r1023"; "-" if empty.
  std::string to_string() const;
  bool operator==(const RankSet&) const = default;

 private:
  explicit RankSet(std::vector<std::pair<int, int>> intervals)
      : intervals_(std::move(intervals)) {}
  std::vector<std::pair<int, int>> intervals_;
};

// Provenance sets are interned in Run::rank_sets; runs refer to them by id.
using SetId = std::uint32_t;
inline constexpr SetId kNoInputs = 0;  // Run::rank_sets[0] is the empty set

// Element offsets and counts in a record are 32-bit (a recorded buffer holds
// fewer than 2^32 elements; simulate() refuses bigger ones), which keeps a
// message's record small (docs/benchmarks.md, "The simulator").
using Elem = std::uint32_t;

// Elements [offset, offset + count) all have provenance rank_sets[set].
struct ProvRun {
  Elem offset = 0;
  Elem count = 0;
  SetId set = kNoInputs;
  bool operator==(const ProvRun&) const = default;
};

// A slice of Run::prov_runs (runs are stored in one arena, not per write, so a
// 1024-rank record does not pay a heap block per delta).
struct RunSpan {
  std::uint32_t begin = 0;
  std::uint32_t count = 0;
};

enum class RegionKind : std::uint8_t { User, Scratch, Unknown };

struct Region {
  int id = -1;
  int rank = -1;
  std::string name;          // "buf", "send", "recv", "params", "scratch#3"
  RegionKind kind = RegionKind::User;
  DType dtype = DType::Float32;
  std::size_t count = 0;     // elements
  Step created = 0;          // the step it was allocated in (0 for user buffers)
  Step freed = kNoStep;      // the step it was released in, kNoStep if never
  // Provenance and values before anything ran (values: count * element size
  // bytes in Run::values, at initial_values; unset if !Run::values_recorded).
  std::vector<ProvRun> initial_provenance;
  std::size_t initial_values = 0;
};

// An element range of a region; region -1 when the bytes were in memory the
// recorder was not told about (then offset/count are bytes).
struct Location {
  int region = -1;
  Elem offset = 0;
  Elem count = 0;
  bool operator==(const Location&) const = default;
};

struct Message {
  Tag tag = 0;
  std::uint32_t id = 0;     // index in Run::messages
  Step step = 0;            // the step it travels in (= its receive completes)
  Step send_step = 0;       // sender's stamp + 1 (< step when the receiver was late)
  int src = -1;
  int dst = -1;
  // The reduction the receiver applied to what arrived ("sum"), if it reduced
  // it into another buffer; -1 if it kept or copied it.
  int reduced_by_write = -1;  // index in Run::writes
  Location from;              // in the sender's region
  Location to;                // in the receiver's region
  RunSpan payload;            // provenance of what travelled (offsets in `from`'s region)
  std::size_t bytes = 0;
  bool reduced = false;
  ReduceOp reduce_op = ReduceOp::SUM;
  // Its receive completed. Always, in a run that ended; a real run that
  // failed (a rank died mid-collective) may have sent messages that never
  // arrived (they travel, unreceived, in their send step).
  bool delivered = false;
};

// A receive a rank posted that no message matched (a real run that failed:
// its sender died first, or the wait ran out of time): `dst` waited, from
// step `step` on, for `bytes` bytes from `src` into `to`. (One a message
// matched but never completed is that Message, delivered false.)
struct Awaited {
  int src = -1;
  int dst = -1;
  Tag tag = 0;
  Step step = 0;
  Location to;
  std::size_t bytes = 0;
};

enum class WriteKind : std::uint8_t { Receive, Copy, Reduce, Divide };

struct Write {
  Step step = 0;
  int rank = -1;
  std::uint32_t seq = 0;    // position in the rank's program order
  WriteKind kind = WriteKind::Copy;
  ReduceOp op = ReduceOp::SUM;  // Reduce only
  int message = -1;         // Receive: index in Run::messages
  Location dst;
  Location src;             // Copy/Reduce: the local source; Receive: the sender's range
  RunSpan before, after;    // provenance of dst's range (offsets in dst's region)
};

// Values of a write's dst range before and after it, dst.count * element
// size bytes each, at these offsets in Run::values (Run::write_values[i] for
// Run::writes[i], only if Run::values_recorded).
struct WriteValues {
  std::size_t before = 0, after = 0;
};

enum class ValueMode : std::uint8_t { Auto, On, Off };
// How the virtual ranks run (`ringlab sim --engine`).
enum class RankExecution : std::uint8_t {
  Fibers,   // all ranks on one thread, cooperatively (fast; 1024 ranks is fine)
  Threads   // run_world: one thread per rank over the in-process transport
};

struct Scenario {
  Collective collective = Collective::AllReduce;
  std::string algorithm;        // "" = the table's default
  int ranks = 4;                // 1 .. 1024
  // Elements of the tensor each rank passes to torch: all_reduce/broadcast/
  // reduce: the tensor; all_gather/gather: the input; reduce_scatter/scatter:
  // the output; all_to_all: each of the P blocks. Buffers are P times that
  // where the collective needs P blocks.
  std::size_t count = 4;
  DType dtype = DType::Float32;
  ReduceOp op = ReduceOp::SUM;  // the wire op (AVG is simulated as SUM + divide)
  int root = 0;
  // Rank r's element i of its input; default: the articles' 1 + 2r + i
  // (rank r holds [1+2r, 2+2r, ...]). For scatter, root's block d is
  // input(d, i); for all_to_all, rank r's block d is input(r, d*count + i).
  std::function<double(int rank, std::size_t i)> input = nullptr;
  // Values are recorded (as deltas) when On, or when Auto and the total user
  // buffer size is at most value_budget_bytes; otherwise only provenance and
  // messages are (and the ranks move no bytes at all).
  ValueMode values = ValueMode::Auto;
  std::size_t value_budget_bytes = std::size_t{64} << 20;
  RankExecution execution = RankExecution::Fibers;
};

double default_input(int rank, std::size_t i);  // 1 + 2*rank + i

struct Run {
  std::string operation;        // "all_reduce", ..., "parameter_server"
  std::string algorithm;        // the resolved name ("ring")
  int ranks = 0;
  std::vector<std::string> roles;  // per rank: "rank 0" / "server 1" / "worker 0"
  DType dtype = DType::Float32;
  ReduceOp op = ReduceOp::SUM;
  int root = 0;
  std::size_t count = 0;        // Scenario::count
  Step steps = 0;               // the last step (0 if nothing was sent)

  std::vector<Region> regions;
  std::vector<Message> messages;  // sorted by (step, src, dst, the sender's order)
  std::vector<Awaited> awaited;   // by (dst, the order posted); empty in a run that ended
  std::vector<Write> writes;      // sorted by (step, rank, seq)
  std::vector<RankSet> rank_sets; // interned provenance; [0] is empty
  std::vector<ProvRun> prov_runs; // arena behind every RunSpan
  std::span<const ProvRun> runs(RunSpan s) const { return {prov_runs.data() + s.begin, s.count}; }

  bool values_recorded = false;
  std::string values_note;        // why not, when not
  std::vector<std::byte> values;  // arena for initial values and write deltas
  std::vector<WriteValues> write_values;  // per write, where values are recorded

  // Index ranges per step k in 0..steps: messages [message_begin[k],
  // message_begin[k+1]), writes [write_begin[k], write_begin[k+1]).
  std::vector<std::size_t> message_begin, write_begin;

  std::span<const Message> messages_in(Step k) const;
  std::span<const Write> writes_in(Step k) const;
  // The region named `name` of `rank` (the first such); -1 if none.
  int buffer_of(int rank, std::string_view name) const;
  std::vector<int> regions_of(int rank) const;
  const RankSet& set(SetId id) const { return rank_sets[id]; }

  // Totals per rank, for checks against textbook formulas.
  std::vector<std::size_t> bytes_sent, bytes_received, messages_sent;
  std::size_t total_bytes() const;
};

// Runs the scenario's algorithm from primitives/ unchanged on virtual ranks
// over a recording transport. Throws std::invalid_argument for a bad
// scenario (unknown algorithm, ranks out of 1..1024, root out of range, a
// buffer of 2^32 elements or more) and CommError if the algorithm deadlocks
// or fails, naming the ranks.
Run simulate(const Scenario& scenario);

// Every rank's buffers after any step, moved forward or back through the
// writes' deltas (cost proportional to what changed in between).
class Replay {
 public:
  explicit Replay(const Run& run);  // positioned before step 0's writes

  void seek(Step step);     // state after every write of steps <= step
  void rewind();            // back to the inputs, before step 0
  // Where it stands: -1 before step 0, else the last step applied.
  long long position() const { return position_; }

  const std::vector<ProvRun>& provenance(int region) const;
  const RankSet& provenance_at(int region, std::size_t element) const;
  // Raw bytes of a region (empty if values were not recorded).
  std::span<const std::byte> values(int region) const;
  // The region as a Tensor (zeros if values were not recorded), so
  // `replay.tensor(r).to_string()` prints like the articles.
  Tensor tensor(int region) const;

 private:
  void apply(const Write& w, bool forward);

  const Run& run_;
  long long position_ = -1;
  std::size_t applied_ = 0;  // writes [0, applied_) are applied
  std::vector<std::vector<ProvRun>> provenance_;
  std::vector<std::vector<std::byte>> values_;
};

}  // namespace ringlab::sim
