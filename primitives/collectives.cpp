// The collective table (collectives.hpp) and each row's two runners: one on
// laid-out buffers over a Comm, one on a ProcessGroup.
#include "primitives/collectives.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "primitives/algorithms.hpp"
#include "primitives/process_group.hpp"

namespace ringlab {

namespace {

// AVG's last step: the sum divided by the world size, in place.
void divide(Comm& comm, Elems result) {
  comm.transport().divide(result.dtype, result.bytes(), comm.size());
}

// ---- on laid-out buffers (ProcessGroup and the simulator) -------------------

// Runs the algorithm `name` of collective c's table, then checks that it
// finished every request it made (primitives/comm.hpp, rule 4).
template <typename Fn, typename... Args>
void run_algorithm(Comm& comm, std::span<const Algorithm<Fn>> table, Collective c,
                   std::string_view name, Args... args) {
  const Algorithm<Fn>& algorithm = find_algorithm(table, c, name);
  algorithm.run(comm, args...);
  comm.check_finished(collective_name(c), algorithm.name);
}

void run_broadcast(Comm& comm, std::string_view algorithm, const CollectiveCall& call) {
  run_algorithm(comm, broadcast_algorithms(), Collective::Broadcast, algorithm,
                call.first, call.root);
}
void run_scatter(Comm& comm, std::string_view algorithm, const CollectiveCall& call) {
  run_algorithm(comm, scatter_algorithms(), Collective::Scatter, algorithm,
                call.first, call.second, call.root);
}
void run_gather(Comm& comm, std::string_view algorithm, const CollectiveCall& call) {
  run_algorithm(comm, gather_algorithms(), Collective::Gather, algorithm,
                call.first, call.second, call.root);
}
void run_reduce(Comm& comm, std::string_view algorithm, const CollectiveCall& call) {
  run_algorithm(comm, reduce_algorithms(), Collective::Reduce, algorithm,
                call.first, wire_op(call.op), call.root);
  if (call.op == ReduceOp::AVG && comm.rank() == call.root) divide(comm, call.first);
}
void run_all_reduce(Comm& comm, std::string_view algorithm, const CollectiveCall& call) {
  run_algorithm(comm, all_reduce_algorithms(), Collective::AllReduce, algorithm,
                call.first, wire_op(call.op));
  if (call.op == ReduceOp::AVG) divide(comm, call.first);
}
void run_all_gather(Comm& comm, std::string_view algorithm, const CollectiveCall& call) {
  run_algorithm(comm, all_gather_algorithms(), Collective::AllGather, algorithm,
                call.first, call.blocks);
}
void run_reduce_scatter(Comm& comm, std::string_view algorithm, const CollectiveCall& call) {
  run_algorithm(comm, reduce_scatter_algorithms(), Collective::ReduceScatter, algorithm,
                call.first, call.blocks, wire_op(call.op));
  if (call.op == ReduceOp::AVG) {
    const Chunk own = call.blocks[static_cast<std::size_t>(comm.rank())];
    divide(comm, call.first.slice(own.offset, own.count));
  }
}
void run_all_to_all(Comm& comm, std::string_view algorithm, const CollectiveCall& call) {
  run_algorithm(comm, all_to_all_algorithms(), Collective::AllToAll, algorithm,
                call.first, call.blocks, call.second, call.second_blocks);
}
void run_barrier(Comm& comm, std::string_view algorithm, const CollectiveCall&) {
  run_algorithm(comm, barrier_algorithms(), Collective::Barrier, algorithm);
}

// ---- on a ProcessGroup (the benchmark, tests) --------------------------------

template <typename T>
T& need(T* argument, const char* collective, const char* what) {
  if (!argument)
    throw std::invalid_argument(std::string(collective) + " needs " + what +
                                " (GroupCall left it null)");
  return *argument;
}

void group_broadcast(ProcessGroup& pg, const GroupCall& c) {
  pg.broadcast(need(c.tensor, "broadcast", "a tensor"), c.root);
}
void group_scatter(ProcessGroup& pg, const GroupCall& c) {
  pg.scatter(need(c.tensor, "scatter", "a tensor"), need(c.inputs, "scatter", "an input list"),
             c.root);
}
void group_gather(ProcessGroup& pg, const GroupCall& c) {
  pg.gather(need(c.tensor, "gather", "a tensor"), need(c.outputs, "gather", "an output list"),
            c.root);
}
void group_reduce(ProcessGroup& pg, const GroupCall& c) {
  pg.reduce(need(c.tensor, "reduce", "a tensor"), c.root, c.op);
}
void group_all_reduce(ProcessGroup& pg, const GroupCall& c) {
  pg.all_reduce(need(c.tensor, "all_reduce", "a tensor"), c.op);
}
void group_all_gather(ProcessGroup& pg, const GroupCall& c) {
  pg.all_gather(need(c.outputs, "all_gather", "an output list"),
                need(c.tensor, "all_gather", "a tensor"));
}
void group_reduce_scatter(ProcessGroup& pg, const GroupCall& c) {
  pg.reduce_scatter(need(c.tensor, "reduce_scatter", "a tensor"),
                    need(c.inputs, "reduce_scatter", "an input list"), c.op);
}
void group_all_to_all(ProcessGroup& pg, const GroupCall& c) {
  pg.all_to_all(need(c.outputs, "all_to_all", "an output list"),
                need(c.inputs, "all_to_all", "an input list"));
}
void group_barrier(ProcessGroup& pg, const GroupCall&) { pg.barrier(); }

// ---- the table ----------------------------------------------------------------

constexpr BufferSpec kNoBuffer{};
constexpr BufferSpec kBuf{"buf", Extent::Block, Input::Whole};

// clang-format off
constexpr CollectiveInfo kTable[] = {
    // id, name, rooted, reduces, in_place, input, output, first, second, bus, default, runners
    {Collective::Broadcast, "broadcast", true, false, true, Shape::Tensor, Shape::Tensor,
     kBuf, kNoBuffer, BusFactor::One, "binomial", run_broadcast, group_broadcast},
    {Collective::Scatter, "scatter", true, false, false, Shape::RootList, Shape::Tensor,
     {"send", Extent::BlocksOnRoot, Input::PerRank}, {"out", Extent::Block, Input::None},
     BusFactor::RanksLessOneOfAll, "flat", run_scatter, group_scatter},
    {Collective::Gather, "gather", true, false, false, Shape::Tensor, Shape::RootList,
     {"in", Extent::Block, Input::Whole}, {"recv", Extent::BlocksOnRoot, Input::None},
     BusFactor::RanksLessOneOfAll, "flat", run_gather, group_gather},
    {Collective::Reduce, "reduce", true, true, true, Shape::Tensor, Shape::Tensor,
     kBuf, kNoBuffer, BusFactor::One, "gloo_ring", run_reduce, group_reduce},
    // auto, as NCCL and MPI choose for the caller; the lessons name the ring.
    {Collective::AllReduce, "all_reduce", false, true, true, Shape::Tensor, Shape::Tensor,
     kBuf, kNoBuffer, BusFactor::TwiceRanksLessOne, "auto", run_all_reduce, group_all_reduce},
    {Collective::AllGather, "all_gather", false, false, false, Shape::Tensor, Shape::List,
     {"buf", Extent::Blocks, Input::OwnBlock}, kNoBuffer,
     BusFactor::RanksLessOneOfAll, "ring", run_all_gather, group_all_gather},
    {Collective::ReduceScatter, "reduce_scatter", false, true, false, Shape::List, Shape::Tensor,
     {"buf", Extent::Blocks, Input::Whole}, kNoBuffer,
     BusFactor::RanksLessOneOfAll, "ring", run_reduce_scatter, group_reduce_scatter},
    {Collective::AllToAll, "all_to_all", false, false, false, Shape::List, Shape::List,
     {"send", Extent::Blocks, Input::Whole}, {"recv", Extent::Blocks, Input::None},
     BusFactor::RanksLessOneOfAll, "pairwise", run_all_to_all, group_all_to_all},
    {Collective::Barrier, "barrier", false, false, false, Shape::None, Shape::None,
     kNoBuffer, kNoBuffer, BusFactor::One, "dissemination", run_barrier, group_barrier},
};
// clang-format on

// collective_info indexes the table by the enum.
constexpr bool rows_in_enum_order() {
  for (std::size_t i = 0; i < std::size(kTable); ++i)
    if (kTable[i].id != kAllCollectives[i]) return false;
  return std::size(kTable) == std::size(kAllCollectives);
}
static_assert(rows_in_enum_order(), "one row per Collective, in the enum's order");

bool is_list(Shape s) { return s == Shape::List || s == Shape::RootList; }

}  // namespace

double CollectiveInfo::bus_factor(int ranks) const {
  const double n = ranks;
  switch (bus) {
    case BusFactor::One:
      return 1;
    case BusFactor::RanksLessOneOfAll:
      return (n - 1) / n;
    case BusFactor::TwiceRanksLessOne:
      return 2 * (n - 1) / n;
  }
  return 1;
}

std::size_t CollectiveInfo::size_blocks(int ranks) const {
  return is_list(input) || is_list(output) ? static_cast<std::size_t>(ranks) : 1;
}

std::span<const CollectiveInfo> collective_table() { return kTable; }

const CollectiveInfo& collective_info(Collective c) {
  const auto i = static_cast<std::size_t>(c);
  if (i >= std::size(kTable)) throw std::invalid_argument("unknown collective");
  return kTable[i];
}

const CollectiveInfo* find_collective(std::string_view name) {
  std::string normalized(name);
  std::replace(normalized.begin(), normalized.end(), '-', '_');
  for (const CollectiveInfo& row : kTable)
    if (row.name == normalized) return &row;
  return nullptr;
}

std::string_view collective_name(Collective c) {
  const auto i = static_cast<std::size_t>(c);
  return i < std::size(kTable) ? kTable[i].name : "?";
}

Collective parse_collective(std::string_view name) {
  if (const CollectiveInfo* row = find_collective(name)) return row->id;
  std::string valid;
  for (const CollectiveInfo& row : kTable)
    valid += (valid.empty() ? "" : ", ") + std::string(row.name);
  throw std::invalid_argument("unknown collective '" + std::string(name) + "': use one of " +
                              valid);
}

double bus_factor(std::string_view operation, int ranks) {
  const CollectiveInfo* row = find_collective(operation);
  return row ? row->bus_factor(ranks) : 1.0;
}

}  // namespace ringlab
