// Reduce-scatter: buf holds P blocks, blocks[r] belongs to rank r (counts may
// differ, some may be empty); on return blocks[r] on rank r holds that block
// reduced over all ranks. The other blocks are left as scratch.
//
// Nomenclature (P ranks, r = this rank, n = elements over all blocks, e bytes
// each, N = n*e bytes; ranks and block indices are taken mod P in the ring):
//   block b     = blocks[b], the part of buf that ends up reduced on rank b.
//   partial     = a block reduced over some of the ranks only.
//   pof2, rem   = floor_pow2(P) and P - pof2 (recursive halving only).
//   the fold    = how recursive halving handles a P that is not a power of
//                 two (MPICH's scheme): among ranks 0 .. 2*rem-1, each even
//                 rank 2i sends its whole buffer to the odd rank 2i+1, which
//                 reduces it into its own, and sits out; the pof2 ranks left
//                 are renumbered ("folded ranks")
//                     r < 2*rem (odd):  f = r / 2
//                     r >= 2*rem:       f = r - rem
//                 and the folded rank f is responsible for the blocks of the
//                 old ranks it stands for: group f = blocks 2f, 2f+1 for
//                 f < rem, block f+rem otherwise. Groups are consecutive runs
//                 of blocks, so "groups [a, b)" is one contiguous range of buf.
//   the delivery = after halving, rank 2i+1 holds blocks 2i and 2i+1 reduced;
//                 it sends block 2i to rank 2i.
//   segment     = at most kReduceSegmentBytes (1 MiB) of what a step sends
//                 and reduces (host memory; GPU memory is not cut): a step
//                 is one sendrecv per segment, each reduced as it arrives
//                 (phases.hpp, sendrecv_reduce), so steps count rounds of
//                 segments, not single messages.
//
// Costs (steps = message rounds on the critical path; bytes sent per rank):
//   ring               P-1 steps; a rank sends N - (its own block) bytes,
//                      (P-1)/P * N for equal blocks, and reduces as much.
//   recursive_halving  log2 P steps for a power of two, each rank sending
//                      N/2 + N/4 + ... = (P-1)/P * N bytes (equal blocks).
//                      Otherwise log2(pof2) + 2 steps: the fold (an even rank
//                      sends N bytes), log2(pof2) halving steps among the
//                      folded ranks, and the delivery (one block).
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "primitives/algorithms.hpp"
#include "primitives/phases.hpp"

namespace ringlab {

namespace {

using detail::check_blocks;
using detail::folded_rank;
using detail::mod;
using detail::slice;
using detail::unfolded_rank;

}  // namespace

namespace detail {

// Ring, steps first_step .. first_step + P-2. Step s: send the partial of
// block r-s-1 to r+1; receive the partial of block r-s-2 from r-1 into
// scratch and reduce it into our copy (acc = ours op theirs). The partial
// sent at step s is the one reduced at step s-1 (our own data at s = 0), so
// after step P-2 block r (= r-(P-2)-2) holds all P contributions.
void reduce_scatter_ring_steps(Comm& comm, Elems buf, std::span<const Chunk> blocks, ReduceOp op,
                               unsigned first_step) {
  const int P = comm.size();
  if (P == 1) return;
  const int r = comm.rank();
  const int right = mod(r + 1, P);
  const int left = mod(r - 1, P);
  std::size_t largest = 0;
  for (const Chunk& c : blocks) largest = std::max(largest, c.count);
  auto scratch = comm.scratch(reduce_scratch_elems(comm, largest, buf.dtype), buf.dtype);
  for (int s = 0; s < P - 1; ++s) {
    const Chunk out = blocks[mod(r - s - 1, P)];
    const Chunk in = blocks[mod(r - s - 2, P)];
    sendrecv_reduce(comm, right, slice(buf, out), left, slice(buf, in), op,
                    first_step + static_cast<unsigned>(s), scratch.elems);
  }
}

// Recursive halving among the pof2 = groups.size() folded ranks; only those
// ranks call it (after the fold, if any). On return folded rank f holds group
// f reduced over all ranks; the rest of its buffer is scratch.
// Step k (step first_step + k, mask = pof2 / 2^(k+1)): f holds partials of
// the 2*mask groups [lo, lo + 2*mask); it keeps the half its partner f ^ mask
// does not (the upper half if f & mask), sends the other half to the partner,
// receives the partner's copy of the kept half and reduces it in.
void reduce_scatter_halving_folded(Comm& comm, Elems buf, std::span<const Chunk> groups,
                                   ReduceOp op, unsigned first_step) {
  const int pof2 = static_cast<int>(groups.size());
  if (pof2 == 1) return;
  const int rem = comm.size() - pof2;
  const int f = folded_rank(comm.rank(), rem);
  const std::size_t largest =
      std::max(span_of(groups, 0, pof2 / 2).count, span_of(groups, pof2 / 2, pof2).count);
  auto scratch = comm.scratch(reduce_scratch_elems(comm, largest, buf.dtype), buf.dtype);
  int lo = 0;  // f's range of groups is [lo, lo + 2*mask)
  unsigned step = first_step;
  for (int mask = pof2 / 2; mask >= 1; mask /= 2, ++step) {
    const int partner = f ^ mask;
    const int keep_lo = (f & mask) ? lo + mask : lo;
    const int give_lo = (f & mask) ? lo : lo + mask;
    const Chunk keep = span_of(groups, keep_lo, keep_lo + mask);
    const Chunk give = span_of(groups, give_lo, give_lo + mask);
    const int peer = unfolded_rank(partner, rem);
    sendrecv_reduce(comm, peer, slice(buf, give), peer, slice(buf, keep), op, step,
                    scratch.elems);
    lo = keep_lo;
  }
}

}  // namespace detail

void reduce_scatter_ring(Comm& comm, Elems buf, std::span<const Chunk> blocks, ReduceOp op) {
  check_blocks(comm, buf, blocks, false, "reduce_scatter", "ring");
  detail::reduce_scatter_ring_steps(comm, buf, blocks, op, 0);
}

// Step 0: the fold (even rank 2i < 2*rem sends all its blocks to 2i+1).
// Steps 1 .. log2(pof2): halving among the folded ranks over their groups.
// Step log2(pof2) + 1: the delivery (rank 2i+1 sends block 2i to rank 2i).
// For a power of two rem = 0: no fold, groups are the blocks themselves.
void reduce_scatter_recursive_halving(Comm& comm, Elems buf, std::span<const Chunk> blocks,
                                      ReduceOp op) {
  check_blocks(comm, buf, blocks, true, "reduce_scatter", "recursive_halving");
  const int P = comm.size();
  const int r = comm.rank();
  const int pof2 = floor_pow2(P);
  const int rem = P - pof2;
  unsigned log2_pof2 = 0;
  while ((1 << log2_pof2) < pof2) ++log2_pof2;
  const unsigned delivery_step = log2_pof2 + 1;
  const Elems everything = slice(buf, span_of(blocks, 0, P));

  if (folded_rank(r, rem) < 0) {  // even rank among the first 2*rem
    comm.send(r + 1, everything, 0);
    comm.recv(r + 1, slice(buf, blocks[r]), delivery_step);
    return;
  }
  if (r < 2 * rem) {
    auto theirs = comm.scratch(everything.count, buf.dtype);
    comm.recv(r - 1, theirs.elems, 0);
    comm.reduce(op, everything, theirs.elems);
  }

  std::vector<Chunk> groups(static_cast<std::size_t>(pof2));
  for (int f = 0; f < pof2; ++f)
    groups[f] = span_of(blocks, f < rem ? 2 * f : f + rem, unfolded_rank(f, rem) + 1);
  detail::reduce_scatter_halving_folded(comm, buf, groups, op, 1);

  if (r < 2 * rem) comm.send(r - 1, slice(buf, blocks[r - 1]), delivery_step);
}

}  // namespace ringlab
