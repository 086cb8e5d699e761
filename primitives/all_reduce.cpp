// All-reduce: in place; on return every rank's buf holds the reduction of all
// ranks' bufs (the same bits on every rank).
//
// Nomenclature (P ranks, r = this rank, n elements of e bytes, N = n*e bytes):
//   block b     = split_even(n, P)[b] (ring): near-equal consecutive pieces;
//                 some are empty when n < P.
//   pof2, rem   = floor_pow2(P) and P - pof2.
//   the fold    = how recursive doubling and Rabenseifner handle a P that is
//                 not a power of two (MPICH's scheme): among ranks
//                 0 .. 2*rem-1, each even rank 2i sends its whole vector to
//                 the odd rank 2i+1, which reduces it into its own, and sits
//                 out; the pof2 ranks left are renumbered ("folded ranks")
//                     r < 2*rem (odd):  f = r / 2
//                     r >= 2*rem:       f = r - rem
//                 and run the power-of-two algorithm. At the end, the unfold:
//                 rank 2i+1 sends the result back to rank 2i.
//   group g     = split_even(n, pof2)[g] (Rabenseifner): the part of the
//                 vector folded rank g reduces.
//   segment     = a piece of the vector in the pipelined binary tree.
//
// Costs (steps = message rounds on the critical path; bytes sent per rank):
//   ring               2(P-1) steps; 2(P-1)/P * N bytes (reduce-scatter, then
//                      all-gather, of P blocks around the ring).
//   reduce_broadcast   2*ceil(log2 P) steps; binomial reduce to rank 0 (every
//                      rank but 0 sends N once) and binomial broadcast from 0
//                      (rank 0 sends N to each of its ceil(log2 P) children).
//   recursive_doubling log2 P steps of N bytes each: N*log2 P bytes. Not a
//                      power of two: log2(pof2) + 2 steps (fold, doubling
//                      among pof2 ranks, unfold); ranks 2i send N (the fold)
//                      and nothing else, ranks 2i+1 send N more (the unfold).
//   rabenseifner       2*log2 P steps; 2(P-1)/P * N bytes (recursive-halving
//                      reduce-scatter, recursive-doubling all-gather). Not a
//                      power of two: 2*log2(pof2) + 2 steps; the pof2 folded
//                      ranks send 2(pof2-1)/pof2 * N, ranks 2i+1 N more (the
//                      unfold), ranks 2i only N (the fold).
//   binary_tree        heap-shaped tree rooted at 0 (children 2r+1, 2r+2,
//                      depth d = floor(log2 P)); S = ceil(N / 256 KiB)
//                      segments pipelined: 2(d + S - 1) steps; a rank sends N up to its parent
//                      and N down to each child (at most 3N; root 2N).
#include <algorithm>
#include <memory>
#include <vector>

#include "primitives/algorithms.hpp"
#include "primitives/phases.hpp"

namespace ringlab {

// Defined in reduce_scatter.cpp and all_gather.cpp (see there): the same
// loops as the selectable algorithms, starting at the given step number, so
// the two phases of one all-reduce never share a tag.

namespace {

using detail::folded_rank;
using detail::slice;
using detail::unfolded_rank;

unsigned log2_exact(int pof2) {
  unsigned k = 0;
  while ((1 << k) < pof2) ++k;
  return k;
}

}  // namespace

std::size_t tree_segments(std::size_t count, DType dtype) {
  const std::size_t per_segment = std::max<std::size_t>(1, kTreeSegmentBytes / element_size(dtype));
  const std::size_t segments = count / per_segment + (count % per_segment != 0 ? 1 : 0);
  return std::clamp<std::size_t>(segments, 1, kMaxTreeSegments);
}

// Steps 0 .. P-2: ring reduce-scatter (rank r ends with block r reduced).
// Steps P-1 .. 2P-3: ring all-gather of the reduced blocks.
void all_reduce_ring(Comm& comm, Elems buf, ReduceOp op) {
  const int P = comm.size();
  const auto blocks = split_even(buf.count, P);
  detail::reduce_scatter_ring_steps(comm, buf, blocks, op, 0);
  detail::all_gather_ring_steps(comm, buf, blocks, static_cast<unsigned>(P - 1));
}

// reduce_binomial to rank 0, then broadcast_binomial from rank 0 (both in their
// own files). Their messages travel the same tree edges in opposite
// directions (child -> parent, then parent -> child), so although both number
// their rounds from 0, no two messages share sender, receiver and tag.
void all_reduce_reduce_broadcast(Comm& comm, Elems buf, ReduceOp op) {
  reduce_binomial(comm, buf, op, 0);
  broadcast_binomial(comm, buf, 0);
}

// Step 0: the fold. Steps 1 .. log2(pof2): folded rank f swaps its whole
// vector with f ^ 2^(k-1) and reduces. Step log2(pof2) + 1: the unfold.
// Both partners compute lower-rank-data op higher-rank-data (the higher one
// reduces into the received copy and copies it back), so they hold the same
// bits even for ops whose operand order shows (max(+0, -0), NaN payloads).
void all_reduce_recursive_doubling(Comm& comm, Elems buf, ReduceOp op) {
  const int P = comm.size();
  const int r = comm.rank();
  const int pof2 = floor_pow2(P);
  const int rem = P - pof2;
  const unsigned unfold_step = log2_exact(pof2) + 1;

  if (folded_rank(r, rem) < 0) {  // even rank among the first 2*rem
    comm.send(r + 1, buf, 0);
    comm.recv(r + 1, buf, unfold_step);
    return;
  }
  auto scratch = comm.scratch(P > 1 ? buf.count : 0, buf.dtype);
  const Elems theirs = scratch.elems;
  if (r < 2 * rem) {
    comm.recv(r - 1, theirs, 0);
    comm.reduce(op, buf, theirs);
  }
  const int f = folded_rank(r, rem);
  unsigned step = 1;
  for (int mask = 1; mask < pof2; mask *= 2, ++step) {
    const int partner = f ^ mask;
    const int peer = unfolded_rank(partner, rem);
    comm.sendrecv(peer, buf, peer, theirs, step);
    if (f < partner) {
      comm.reduce(op, buf, theirs);
    } else {
      comm.reduce(op, theirs, buf);
      comm.copy(buf, theirs);
    }
  }
  if (r < 2 * rem) comm.send(r - 1, buf, unfold_step);
}

// Step 0: the fold. Steps 1 .. L (L = log2 pof2): recursive-halving
// reduce-scatter among the folded ranks over the pof2 groups, so folded rank
// f holds group f reduced. Steps L+1 .. 2L: recursive-doubling all-gather of
// the groups. Step 2L+1: the unfold. Each element is reduced on one rank only.
void all_reduce_rabenseifner(Comm& comm, Elems buf, ReduceOp op) {
  const int P = comm.size();
  const int r = comm.rank();
  const int pof2 = floor_pow2(P);
  const int rem = P - pof2;
  const unsigned L = log2_exact(pof2);
  const unsigned unfold_step = 2 * L + 1;

  if (folded_rank(r, rem) < 0) {  // even rank among the first 2*rem
    comm.send(r + 1, buf, 0);
    comm.recv(r + 1, buf, unfold_step);
    return;
  }
  if (r < 2 * rem) {
    auto theirs = comm.scratch(buf.count, buf.dtype);
    comm.recv(r - 1, theirs.elems, 0);
    comm.reduce(op, buf, theirs.elems);
  }
  const auto groups = split_even(buf.count, pof2);
  detail::reduce_scatter_halving_folded(comm, buf, groups, op, 1);
  detail::all_gather_doubling_folded(comm, buf, groups, L + 1);
  if (r < 2 * rem) comm.send(r - 1, buf, unfold_step);
}

// Tree: parent (r-1)/2, children 2r+1 and 2r+2 (those < P). The vector is cut
// into S segments. Up (segment j, step j): receive both children's partial
// of segment j (posted together), reduce them in child order into ours
// (acc = ours op child1 op child2), send the sum on to the parent without
// waiting for it, and go on to segment j+1. Down (segment j, step S+j):
// receive segment j from the parent, forward it to the children.
void all_reduce_binary_tree(Comm& comm, Elems buf, ReduceOp op) {
  const int P = comm.size();
  const int r = comm.rank();
  if (P == 1) return;
  const int parent = (r - 1) / 2;
  std::vector<int> children;
  for (int c : {2 * r + 1, 2 * r + 2})
    if (c < P) children.push_back(c);

  const std::size_t S = tree_segments(buf.count, buf.dtype);
  const auto segments = split_even(buf.count, static_cast<int>(S));
  std::size_t largest = 0;
  for (const Chunk& c : segments) largest = std::max(largest, c.count);

  std::vector<Comm::Scratch> from_child;
  for (std::size_t i = 0; i < children.size(); ++i)
    from_child.push_back(comm.scratch(largest, buf.dtype));

  // Sends are not waited for at once: those of the previous segment are
  // waited for after the current segment's are posted (at most two segments'
  // sends in flight), so a rank is already on segment j+1 while j travels.
  std::vector<std::unique_ptr<Request>> previous_sends;
  std::vector<std::unique_ptr<Request>> current_sends;
  auto next_segment = [&] {
    for (auto& request : previous_sends) comm.wait(*request);
    previous_sends = std::move(current_sends);
    current_sends.clear();
  };
  auto drain = [&] {
    next_segment();
    next_segment();
  };

  std::vector<std::unique_ptr<Request>> recvs;
  for (std::size_t j = 0; j < S; ++j) {
    const Elems mine = slice(buf, segments[j]);
    const auto step = static_cast<unsigned>(j);
    recvs.clear();
    for (std::size_t i = 0; i < children.size(); ++i)
      recvs.push_back(comm.irecv(children[i], from_child[i].elems.slice(0, mine.count), step));
    for (std::size_t i = 0; i < children.size(); ++i) {
      comm.wait(*recvs[i]);
      comm.reduce(op, mine, from_child[i].elems.slice(0, mine.count));
    }
    if (r != 0) current_sends.push_back(comm.isend(parent, mine, step));
    next_segment();
  }
  drain();  // the down phase overwrites what went up

  for (std::size_t j = 0; j < S; ++j) {
    const Elems mine = slice(buf, segments[j]);
    const auto step = static_cast<unsigned>(S + j);
    if (r != 0) comm.recv(parent, mine, step);
    for (int child : children) current_sends.push_back(comm.isend(child, mine, step));
    next_segment();
  }
  drain();
}

// Picks by size, as NCCL's and MPI's tuners do: for a small vector the
// number of message rounds decides (recursive doubling: log2 P rounds against
// the ring's 2(P-1)); for a large one the bytes each rank sends decide (the
// ring's 2(P-1)/P n against log2(P) n). Among the algorithms that send the
// fewest bytes, Rabenseifner needs 2 log2 P rounds against the ring's 2(P-1),
// which tells when ranks wait on each other; where P is not a power of two
// its fold sends more bytes, so the ring stays.
// Measurements: docs/benchmarks.md, "Measurements behind the code".
//
// Where the transport prefers fewer messages (more ranks than processors on
// a host, transport.hpp), a small vector's time is the processor time of its
// messages, shared by the ranks, rather than its rounds: reduce_broadcast
// sends 2(P-1) messages against recursive doubling's P log2 P (6 against 8
// on 4 ranks). On 2 ranks both send 2 messages, and recursive doubling does
// it in one round. Measurements: docs/benchmarks.md, "Measurements behind the code".
//
// Every rank sees the same count, world size and transport answer, so every
// rank picks the same algorithm.
std::string_view all_reduce_auto_choice(std::size_t bytes, int ranks, bool fewer_messages) {
  if (bytes <= kAllReduceAutoSmallBytes)
    return fewer_messages && ranks > 2 ? "reduce_broadcast" : "recursive_doubling";
  if (floor_pow2(ranks) == ranks) return "rabenseifner";
  return "ring";
}

void all_reduce_auto(Comm& comm, Elems buf, ReduceOp op) {
  const std::string_view name =
      all_reduce_auto_choice(buf.nbytes(), comm.size(), comm.transport().prefers_fewer_messages());
  find_algorithm(all_reduce_algorithms(), Collective::AllReduce, name).run(comm, buf, op);
}

}  // namespace ringlab
