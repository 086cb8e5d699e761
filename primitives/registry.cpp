// The algorithm tables: names a learner can pick, with a one-line summary.
// Adding an algorithm: its entry here, its function in the family's file and
// its declaration in algorithms.hpp (nothing else; see collectives.hpp). The
// first entry of each table is what the simulator and the GUI show when no
// algorithm is named; ProcessGroup runs the row's default_algorithm.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "primitives/algorithms.hpp"

namespace ringlab {

namespace {

constexpr Algorithm<BroadcastFn> kBroadcast[] = {
    {"binomial", "binomial tree from the root: ceil(log2 P) rounds, n bytes per sender",
     broadcast_binomial},
    {"flat", "the root sends to every rank in turn: P-1 sends of n bytes from the root",
     broadcast_flat},
    {"chain", "pipelined chain root -> root+1 -> ...: segments overlap along the chain",
     broadcast_chain},
};
constexpr Algorithm<ScatterFn> kScatter[] = {
    {"flat", "the root sends each rank its block: P-1 sends", scatter_flat},
    {"binomial", "binomial tree: each hop carries a whole subtree's blocks, log2 P rounds",
     scatter_binomial},
};
constexpr Algorithm<GatherFn> kGather[] = {
    {"flat", "every rank sends its block to the root: P-1 receives at the root", gather_flat},
    {"binomial", "binomial tree: subtrees' blocks are merged on the way, log2 P rounds",
     gather_binomial},
};
constexpr Algorithm<ReduceFn> kReduce[] = {
    {"gloo_ring",
     "Gloo's segmented ring toward lower ranks, then chunks to the root; leaves partial sums "
     "on the other ranks",
     reduce_gloo_ring},
    {"flat", "every rank sends its vector to the root, which reduces in rank order", reduce_flat},
    {"binomial", "binomial tree toward the root: log2 P rounds of n bytes", reduce_binomial},
};
constexpr Algorithm<AllReduceFn> kAllReduce[] = {
    {"ring", "ring reduce-scatter then ring all-gather: 2(P-1) steps, 2(P-1)/P n bytes per rank",
     all_reduce_ring},
    {"reduce_broadcast", "binomial reduce to rank 0, then binomial broadcast: 2 log2 P rounds",
     all_reduce_reduce_broadcast},
    {"recursive_doubling", "log2 P rounds, each exchanging the whole vector with a partner",
     all_reduce_recursive_doubling},
    {"rabenseifner",
     "recursive-halving reduce-scatter + recursive-doubling all-gather: 2 log2 P rounds, "
     "2(P-1)/P n bytes",
     all_reduce_rabenseifner},
    {"binary_tree", "reduce up a binary tree rooted at 0, then broadcast down it",
     all_reduce_binary_tree},
    {"auto",
     "recursive doubling up to 64 KiB (fewest rounds; reduce_broadcast, fewest messages, where "
     "ranks outnumber a host's processors); above, the fewest bytes: rabenseifner for a "
     "power-of-two world, else ring",
     all_reduce_auto},
};
constexpr Algorithm<AllGatherFn> kAllGather[] = {
    {"ring", "P-1 steps, each passing one block to the right neighbour", all_gather_ring},
    {"recursive_doubling", "log2 P rounds exchanging doubling ranges of blocks",
     all_gather_recursive_doubling},
};
constexpr Algorithm<ReduceScatterFn> kReduceScatter[] = {
    {"ring", "P-1 steps, each passing one partially reduced block to the right",
     reduce_scatter_ring},
    {"recursive_halving", "log2 P rounds exchanging halving ranges of blocks",
     reduce_scatter_recursive_halving},
};
constexpr Algorithm<AllToAllFn> kAllToAll[] = {
    {"pairwise", "P-1 steps; in step s rank r sends to r+s and receives from r-s",
     all_to_all_pairwise},
};
constexpr Algorithm<BarrierFn> kBarrier[] = {
    {"dissemination", "ceil(log2 P) rounds; round k signals rank r+2^k", barrier_dissemination},
};

template <typename Fn>
std::vector<std::string> names_of(std::span<const Algorithm<Fn>> table) {
  std::vector<std::string> names;
  for (const auto& a : table) names.emplace_back(a.name);
  return names;
}

// Calls fn(table) with the table of collective c.
template <typename Visitor>
decltype(auto) with_table(Collective c, Visitor&& fn) {
  switch (c) {
    case Collective::Broadcast: return fn(broadcast_algorithms());
    case Collective::Scatter: return fn(scatter_algorithms());
    case Collective::Gather: return fn(gather_algorithms());
    case Collective::Reduce: return fn(reduce_algorithms());
    case Collective::AllReduce: return fn(all_reduce_algorithms());
    case Collective::AllGather: return fn(all_gather_algorithms());
    case Collective::ReduceScatter: return fn(reduce_scatter_algorithms());
    case Collective::AllToAll: return fn(all_to_all_algorithms());
    case Collective::Barrier: return fn(barrier_algorithms());
  }
  throw std::invalid_argument("unknown collective");
}

}  // namespace

std::span<const Algorithm<BroadcastFn>> broadcast_algorithms() { return kBroadcast; }
std::span<const Algorithm<ScatterFn>> scatter_algorithms() { return kScatter; }
std::span<const Algorithm<GatherFn>> gather_algorithms() { return kGather; }
std::span<const Algorithm<ReduceFn>> reduce_algorithms() { return kReduce; }
std::span<const Algorithm<AllReduceFn>> all_reduce_algorithms() { return kAllReduce; }
std::span<const Algorithm<AllGatherFn>> all_gather_algorithms() { return kAllGather; }
std::span<const Algorithm<ReduceScatterFn>> reduce_scatter_algorithms() { return kReduceScatter; }
std::span<const Algorithm<AllToAllFn>> all_to_all_algorithms() { return kAllToAll; }
std::span<const Algorithm<BarrierFn>> barrier_algorithms() { return kBarrier; }

std::vector<std::string> algorithm_names(Collective c) {
  return with_table(c, [](auto table) { return names_of(table); });
}

void unknown_algorithm(Collective c, std::string_view name,
                       const std::vector<std::string_view>& valid) {
  std::string list;
  for (const auto v : valid) list += (list.empty() ? "" : ", ") + std::string(v);
  throw std::invalid_argument("unknown " + std::string(collective_name(c)) + " algorithm '" +
                              std::string(name) + "': use one of " + list);
}

}  // namespace ringlab
