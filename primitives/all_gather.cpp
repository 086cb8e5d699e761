// All-gather: buf holds P blocks, blocks[r] belongs to rank r (counts may
// differ, some may be empty); rank r's block is filled on entry, on return
// every rank holds every block.
//
// Nomenclature (P ranks, r = this rank, n = elements over all blocks, e bytes
// each, N = n*e bytes; ranks and block indices are taken mod P in the ring):
//   block b     = blocks[b], the part of buf that rank b contributes.
//   pof2, rem   = floor_pow2(P) and P - pof2 (recursive doubling only).
//   the fold    = how recursive doubling handles a P that is not a power of
//                 two (MPICH's scheme): among ranks 0 .. 2*rem-1, each even
//                 rank 2i hands its block to the odd rank 2i+1 and sits out;
//                 the pof2 ranks left are renumbered ("folded ranks")
//                     r < 2*rem (odd):  f = r / 2
//                     r >= 2*rem:       f = r - rem
//                 and the folded rank f stands for the old ranks in its
//                 group: group f = blocks 2f, 2f+1 for f < rem, block f+rem
//                 otherwise. Groups are consecutive runs of blocks, so
//                 "groups [a, b)" is one contiguous range of buf.
//
// Costs (steps = message rounds on the critical path; bytes sent per rank):
//   ring                P-1 steps; a rank sends N - (its own block) bytes,
//                       (P-1)/P * N for equal blocks.
//   recursive_doubling  log2 P steps for a power of two, each rank sending
//                       (P-1)/P * N bytes (equal blocks), the range doubling
//                       every step. Otherwise log2(pof2) + 2 steps: the fold
//                       (an even rank sends its block), log2(pof2) doubling
//                       steps among the folded ranks, and the unfold (the
//                       odd rank sends its whole buffer, N bytes, back).
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

// Ring, steps first_step .. first_step + P-2. Step s: send block r-s to r+1,
// receive block r-s-1 from r-1 (which is the block r-1 received one step
// earlier, or its own at s = 0).
void all_gather_ring_steps(Comm& comm, Elems buf, std::span<const Chunk> blocks,
                           unsigned first_step) {
  const int P = comm.size();
  const int r = comm.rank();
  const int right = mod(r + 1, P);
  const int left = mod(r - 1, P);
  for (int s = 0; s < P - 1; ++s) {
    const Chunk out = blocks[mod(r - s, P)];
    const Chunk in = blocks[mod(r - s - 1, P)];
    comm.sendrecv(right, slice(buf, out), left, slice(buf, in),
                  first_step + static_cast<unsigned>(s));
  }
}

// Recursive doubling among the pof2 = groups.size() folded ranks; only those
// ranks call it. On entry folded rank f holds group f, on return all groups.
// Step k (mask = 2^k, step first_step + k): f and its partner f ^ mask each
// hold the mask groups of their aligned range [f & ~(mask-1), +mask) and swap
// them, so afterwards both hold the 2*mask groups of [f & ~(2*mask-1), +2*mask).
void all_gather_doubling_folded(Comm& comm, Elems buf, std::span<const Chunk> groups,
                                unsigned first_step) {
  const int pof2 = static_cast<int>(groups.size());
  const int rem = comm.size() - pof2;
  const int f = folded_rank(comm.rank(), rem);
  unsigned step = first_step;
  for (int mask = 1; mask < pof2; mask *= 2, ++step) {
    const int partner = f ^ mask;
    const int mine = f & ~(mask - 1);
    const int theirs = partner & ~(mask - 1);
    const Chunk out = span_of(groups, mine, mine + mask);
    const Chunk in = span_of(groups, theirs, theirs + mask);
    const int peer = unfolded_rank(partner, rem);
    comm.sendrecv(peer, slice(buf, out), peer, slice(buf, in), step);
  }
}

}  // namespace detail

void all_gather_ring(Comm& comm, Elems buf, std::span<const Chunk> blocks) {
  check_blocks(comm, buf, blocks, false, "all_gather", "ring");
  detail::all_gather_ring_steps(comm, buf, blocks, 0);
}

// Step 0: the fold (even rank 2i < 2*rem sends block 2i to rank 2i+1).
// Steps 1 .. log2(pof2): doubling among the folded ranks over their groups.
// Step log2(pof2) + 1: the unfold (rank 2i+1 sends all blocks to rank 2i).
// For a power of two rem = 0: no fold, groups are the blocks themselves.
void all_gather_recursive_doubling(Comm& comm, Elems buf, std::span<const Chunk> blocks) {
  check_blocks(comm, buf, blocks, true, "all_gather", "recursive_doubling");
  const int P = comm.size();
  const int r = comm.rank();
  const int pof2 = floor_pow2(P);
  const int rem = P - pof2;
  unsigned log2_pof2 = 0;
  while ((1 << log2_pof2) < pof2) ++log2_pof2;
  const unsigned unfold_step = log2_pof2 + 1;
  const Elems everything = slice(buf, span_of(blocks, 0, P));

  if (folded_rank(r, rem) < 0) {  // even rank among the first 2*rem
    comm.send(r + 1, slice(buf, blocks[r]), 0);
    comm.recv(r + 1, everything, unfold_step);  // also rewrites its own block, unchanged
    return;
  }
  if (r < 2 * rem) comm.recv(r - 1, slice(buf, blocks[r - 1]), 0);

  std::vector<Chunk> groups(static_cast<std::size_t>(pof2));
  for (int f = 0; f < pof2; ++f)
    groups[f] = span_of(blocks, f < rem ? 2 * f : f + rem, unfolded_rank(f, rem) + 1);
  detail::all_gather_doubling_folded(comm, buf, groups, 1);

  if (r < 2 * rem) comm.send(r - 1, everything, unfold_step);
}

}  // namespace ringlab
