// Every collective algorithm, hand-written on Comm, and the tables that name
// them. The process group picks one by name (collectives.hpp says which runs
// when none is named).
//
// Conventions shared by all algorithms:
// - Buffers are Elems in transport memory; counts are in elements.
// - `op` is already the wire op (AVG arrives as SUM; the caller divides).
// - A rank's message buffers for a step have the same size on both sides.
// - World size 1 and zero elements are valid and must not send anything odd.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "primitives/collectives.hpp"
#include "primitives/comm.hpp"

namespace ringlab {

// buf: every rank; on return every rank holds root's contents.
using BroadcastFn = void (*)(Comm&, Elems buf, int root);
// send: root only, size() blocks of out.count elements, block r for rank r
// (ignored elsewhere); out: every rank's block.
using ScatterFn = void (*)(Comm&, Elems send, Elems out, int root);
// in: every rank's block; recv: root only, size() blocks of in.count.
// The same type as ScatterFn (the parameters differ only in meaning): nothing
// may tell the two apart by type (see find_algorithm).
using GatherFn = void (*)(Comm&, Elems in, Elems recv, int root);
// In place. root ends with the reduction over all ranks; what other ranks'
// buffers hold afterwards is algorithm-specific (Gloo's ring leaves partial
// sums; the article prints them).
using ReduceFn = void (*)(Comm&, Elems buf, ReduceOp op, int root);
using AllReduceFn = void (*)(Comm&, Elems buf, ReduceOp op);
// buf holds size() blocks (blocks[r] belongs to rank r, counts may differ);
// rank r's block is filled on entry; on return all blocks are filled.
using AllGatherFn = void (*)(Comm&, Elems buf, std::span<const Chunk> blocks);
// buf holds size() blocks; on return blocks[r] on rank r holds the reduction of
// that block over all ranks; other blocks are scratch.
using ReduceScatterFn = void (*)(Comm&, Elems buf, std::span<const Chunk> blocks, ReduceOp op);
// send_blocks[d]: what this rank sends to rank d; recv_blocks[s]: where what
// rank s sends lands.
using AllToAllFn = void (*)(Comm&, Elems send, std::span<const Chunk> send_blocks, Elems recv,
                            std::span<const Chunk> recv_blocks);
using BarrierFn = void (*)(Comm&);

template <typename Fn>
struct Algorithm {
  std::string_view name;
  std::string_view summary;  // one line: how it moves data, and its cost
  Fn run;
};

// One table per collective (registry.cpp). Each lists first the algorithm the
// simulator and the GUI show when none is named: one algorithm's own
// messages. A ProcessGroup's default is the row's default_algorithm
// (collectives.hpp), which for all_reduce is auto.
std::span<const Algorithm<BroadcastFn>> broadcast_algorithms();
std::span<const Algorithm<ScatterFn>> scatter_algorithms();
std::span<const Algorithm<GatherFn>> gather_algorithms();
std::span<const Algorithm<ReduceFn>> reduce_algorithms();
std::span<const Algorithm<AllReduceFn>> all_reduce_algorithms();
std::span<const Algorithm<AllGatherFn>> all_gather_algorithms();
std::span<const Algorithm<ReduceScatterFn>> reduce_scatter_algorithms();
std::span<const Algorithm<AllToAllFn>> all_to_all_algorithms();
std::span<const Algorithm<BarrierFn>> barrier_algorithms();

// Names in table order, for command lines and the GUI.
std::vector<std::string> algorithm_names(Collective c);

// Throws std::invalid_argument: "unknown <collective> algorithm '<name>':
// use one of <valid>".
[[noreturn]] void unknown_algorithm(Collective c, std::string_view name,
                                    const std::vector<std::string_view>& valid);

// Looks a name up ("" or "default" = the row's default_algorithm); throws
// std::invalid_argument listing the valid names. Defined here rather than
// instantiated type by type in registry.cpp: ScatterFn and GatherFn are one
// type, so such a list could name one of them and leave the other out
// unseen; a template in the header serves every table, whatever its type.
template <typename Fn>
const Algorithm<Fn>& find_algorithm(std::span<const Algorithm<Fn>> table, Collective c,
                                    std::string_view name) {
  if (name.empty() || name == "default") name = collective_info(c).default_algorithm;
  for (const auto& a : table)
    if (a.name == name) return a;
  std::vector<std::string_view> valid;
  for (const auto& a : table) valid.push_back(a.name);
  unknown_algorithm(c, name, valid);
}

// ---- The algorithms (one file each family; see the block at each file's top).
// broadcast.cpp
void broadcast_flat(Comm&, Elems buf, int root);
void broadcast_binomial(Comm&, Elems buf, int root);
void broadcast_chain(Comm&, Elems buf, int root);  // pipelined chain
// scatter_gather.cpp
void scatter_flat(Comm&, Elems send, Elems out, int root);
void scatter_binomial(Comm&, Elems send, Elems out, int root);
void gather_flat(Comm&, Elems in, Elems recv, int root);
void gather_binomial(Comm&, Elems in, Elems recv, int root);
// reduce.cpp
void reduce_gloo_ring(Comm&, Elems buf, ReduceOp op, int root);  // default
void reduce_flat(Comm&, Elems buf, ReduceOp op, int root);
void reduce_binomial(Comm&, Elems buf, ReduceOp op, int root);
// barrier.cpp
void barrier_dissemination(Comm&);
// all_gather.cpp
void all_gather_ring(Comm&, Elems buf, std::span<const Chunk> blocks);
void all_gather_recursive_doubling(Comm&, Elems buf, std::span<const Chunk> blocks);
// reduce_scatter.cpp
void reduce_scatter_ring(Comm&, Elems buf, std::span<const Chunk> blocks, ReduceOp op);
void reduce_scatter_recursive_halving(Comm&, Elems buf, std::span<const Chunk> blocks,
                                      ReduceOp op);
// all_reduce.cpp
void all_reduce_ring(Comm&, Elems buf, ReduceOp op);  // listed first
void all_reduce_reduce_broadcast(Comm&, Elems buf, ReduceOp op);
void all_reduce_recursive_doubling(Comm&, Elems buf, ReduceOp op);
void all_reduce_rabenseifner(Comm&, Elems buf, ReduceOp op);
void all_reduce_binary_tree(Comm&, Elems buf, ReduceOp op);
void all_reduce_auto(Comm&, Elems buf, ReduceOp op);  // by size: one of the above; the default
// all_reduce_binary_tree pipelines the vector in segments of at most
// kTreeSegmentBytes, and at most kMaxTreeSegments of them (2 * segments step
// numbers must stay below 2^20); tree_segments says how many a vector of
// `count` elements gets. The simulator's closed form reads the same rule.
inline constexpr std::size_t kTreeSegmentBytes = 256 * 1024;
inline constexpr std::size_t kMaxTreeSegments = std::size_t{1} << 18;
std::size_t tree_segments(std::size_t count, DType dtype);
// all_reduce_auto: vectors up to this size take the algorithm with the
// fewest rounds (or, where the transport prefers it, the fewest messages).
inline constexpr std::size_t kAllReduceAutoSmallBytes = 64 << 10;
// The row all_reduce_auto runs for a vector of `bytes` on `ranks` ranks;
// fewer_messages: the transport's prefers_fewer_messages().
std::string_view all_reduce_auto_choice(std::size_t bytes, int ranks, bool fewer_messages);
// all_to_all.cpp
void all_to_all_pairwise(Comm&, Elems send, std::span<const Chunk> send_blocks, Elems recv,
                         std::span<const Chunk> recv_blocks);

}  // namespace ringlab
