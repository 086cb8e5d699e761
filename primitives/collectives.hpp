// One row per collective: what it is, what it takes, how to run it. Everyone
// who needs to know reads this table (the process group, the simulator, the
// benchmark, the cost model, the GUI) instead of comparing names.
// nccl-tests' per-collective descriptor (struct testColl) is the model.
//
// Adding an algorithm to a collective touches three places, none of them this
// table: its function in the family's file (e.g. all_reduce.cpp), its
// declaration in algorithms.hpp, and its entry in the collective's algorithm
// table in registry.cpp. ProcessGroup, the simulator, the benchmark, the GUI's
// lists and the test sweeps all read the algorithm tables.
//
// Adding a collective: the enum and kAllCollectives below, its row and runners
// in collectives.cpp, its algorithm table (registry.cpp), its ProcessGroup
// methods, and the benchmark's closed-form check (bench/bench.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "primitives/comm.hpp"

namespace ringlab {

class ProcessGroup;
class Tensor;

enum class Collective {
  Broadcast,
  Scatter,
  Gather,
  Reduce,
  AllReduce,
  AllGather,
  ReduceScatter,
  AllToAll,
  Barrier
};
inline constexpr Collective kAllCollectives[] = {
    Collective::Broadcast,     Collective::Scatter,   Collective::Gather,
    Collective::Reduce,        Collective::AllReduce, Collective::AllGather,
    Collective::ReduceScatter, Collective::AllToAll,  Collective::Barrier};

// One argument of the torch.distributed call, as a rank passes it.
enum class Shape : std::uint8_t {
  None,      // no such argument (barrier)
  Tensor,    // one tensor of n elements
  List,      // one tensor of n elements per rank, on every rank
  RootList,  // one tensor per rank on the root; an empty list (torch: None) elsewhere
};

// One buffer as the algorithms take it (algorithms.hpp), for blocks of n
// elements on P ranks.
enum class Extent : std::uint8_t {
  Absent,        // no buffer: Elems{}
  Block,         // n elements
  Blocks,        // P * n elements; block r is [r * n, (r + 1) * n)
  BlocksOnRoot,  // P * n elements on the root; absent elsewhere
};
// Which elements hold this rank's input when the call starts.
enum class Input : std::uint8_t {
  None,      // none: the collective fills it
  Whole,     // all of them
  OwnBlock,  // block r only (all_gather: nccl-tests' in-place offset)
  PerRank,   // all of them; block d is what rank d is to receive (scatter's list)
};
struct BufferSpec {
  std::string_view name;  // the algorithm's parameter: "buf", "send", "out", ...
  Extent extent = Extent::Absent;
  Input input = Input::None;

  bool present(bool is_root) const {
    return extent != Extent::Absent && (extent != Extent::BlocksOnRoot || is_root);
  }
  std::size_t count(int ranks, std::size_t n, bool is_root) const {
    if (!present(is_root)) return 0;
    return extent == Extent::Block ? n : static_cast<std::size_t>(ranks) * n;
  }
};

// nccl-tests' bus bandwidth factor (busbw = algbw * factor): what each rank's
// busiest link carries, per byte of the reported size, in an optimal algorithm.
enum class BusFactor : std::uint8_t {
  One,                // 1: broadcast, reduce (and barrier, which moves no data)
  RanksLessOneOfAll,  // (P-1)/P: every rank receives all blocks but its own
  TwiceRanksLessOne,  // 2(P-1)/P: all_reduce, a reduce-scatter then an all-gather
};

// The buffers of one call, laid out as the row's `first` and `second` say.
struct CollectiveCall {
  Elems first{};                           // buf, send or in
  Elems second{};                          // scatter's out, gather's recv, all_to_all's recv
  std::span<const Chunk> blocks{};         // first's blocks (Blocks, BlocksOnRoot)
  std::span<const Chunk> second_blocks{};  // second's blocks (all_to_all)
  int root = 0;                            // rooted collectives
  ReduceOp op = ReduceOp::SUM;             // the user's op; AVG divides at the end
};

// The arguments of one torch.distributed-style call, laid out as the row's
// `input` and `output` shapes say (lists empty where the shape is RootList and
// this rank is not the root).
struct GroupCall {
  Tensor* tensor = nullptr;                // the Tensor argument
  std::vector<Tensor>* inputs = nullptr;   // scatter_list, input_list
  std::vector<Tensor>* outputs = nullptr;  // gather_list, tensor_list, output_list
  int root = 0;
  ReduceOp op = ReduceOp::SUM;
};

struct CollectiveInfo {
  Collective id;
  std::string_view name;     // torch.distributed's: "all_reduce"
  bool rooted;               // takes src/dst
  bool reduces;              // takes a ReduceOp
  bool in_place;             // the input tensor is also the output
  Shape input, output;       // torch.distributed's arguments
  BufferSpec first, second;  // the algorithms' buffers
  BusFactor bus;
  // What a ProcessGroup runs when no algorithm is named (so `ringlab bench`
  // and every user program). The simulator and the GUI show the first of the
  // algorithm table instead (algorithm_names), which for all_reduce is the
  // ring: auto only hands over to one of the others.
  std::string_view default_algorithm;
  // Runs `algorithm` (a name of the row's table; "" = default_algorithm) on
  // laid-out buffers, then finishes AVG (divides the result by the world
  // size). The process group and the simulator both call this.
  void (*run)(Comm& comm, std::string_view algorithm, const CollectiveCall& call);
  // Calls the ProcessGroup method (pg.all_reduce(*call.tensor, call.op), ...).
  void (*run_group)(ProcessGroup& pg, const GroupCall& call);

  double bus_factor(int ranks) const;
  // nccl-tests' size counts the whole buffer: P blocks when a list is
  // involved, else one. bytes = blocks * count * element size.
  std::size_t size_blocks(int ranks) const;
};

std::span<const CollectiveInfo> collective_table();
const CollectiveInfo& collective_info(Collective c);
// The row of a name ("all_reduce"; '-' may stand for '_'), or nullptr.
const CollectiveInfo* find_collective(std::string_view name);

std::string_view collective_name(Collective c);  // "all_reduce", ...
// Throws std::invalid_argument listing the names when name is none of them.
Collective parse_collective(std::string_view name);

// nccl-tests' bus bandwidth factor of an operation by name on `ranks` ranks:
// its row's for a collective. Anything else is point-to-point traffic (the
// benchmark's sendrecv, the simulator's parameter server) and gets 1, as
// nccl-tests' sendrecv does: the bytes counted are the bytes that cross.
double bus_factor(std::string_view operation, int ranks);

}  // namespace ringlab
