// Pieces shared by the all_gather, reduce_scatter and all_reduce families:
// the ring and recursive phases (all_reduce runs them with its own step
// numbers) and the fold that lets recursive algorithms run on a world size
// that is not a power of two. Internal to primitives/: not selectable
// algorithms, so not in algorithms.hpp.
//
// The fold (MPICH's scheme; pof2 = floor_pow2(P), rem = P - pof2): among
// ranks 0 .. 2*rem-1 each even rank 2i hands its data to the odd rank 2i+1
// and sits out; the pof2 ranks left are renumbered ("folded ranks")
//     r < 2*rem (odd):  f = r / 2
//     r >= 2*rem:       f = r - rem
// and folded rank f stands for the blocks of its old ranks (group f = blocks
// 2f, 2f+1 for f < rem, block f+rem otherwise).
#pragma once

#include <span>

#include "primitives/comm.hpp"

namespace ringlab::detail {

inline int mod(int a, int p) { return ((a % p) + p) % p; }

// Folded rank of r (-1 for an even rank among the first 2*rem, which sits out).
inline int folded_rank(int r, int rem) {
  return r < 2 * rem ? (r % 2 == 1 ? r / 2 : -1) : r - rem;
}
// The real rank that plays folded rank f.
inline int unfolded_rank(int f, int rem) { return f < rem ? 2 * f + 1 : f + rem; }

inline Elems slice(Elems buf, Chunk c) { return buf.slice(c.offset, c.count); }

// Checks that blocks are P blocks inside buf, and consecutive (each starting
// where the previous ends) when the algorithm sends ranges of blocks as one
// message. Throws std::invalid_argument naming the rank, collective and
// algorithm.
void check_blocks(const Comm& comm, Elems buf, std::span<const Chunk> blocks, bool consecutive,
                  const char* collective, const char* algorithm);

// Sends out to dst while receiving acc.count elements from src and reducing
// them into acc (acc = acc op received), all as step `step`. Both sides are
// cut into segments of at most kReduceSegmentBytes, exchanged in order, so
// each received segment is reduced while it is still in cache. Where the
// transport overlaps transfers (Transport::overlaps_transfers) the exchange
// is pipelined: once segment k has arrived (and gone out), segment k+1 is
// posted both ways before segment k is reduced, so the next segment travels
// while this one is reduced, into the other half of a two-segment scratch.
// Elsewhere each segment is a sendrecv, then its reduction. scratch must hold
// reduce_scratch_elems(comm, acc.count, acc.dtype) elements. Pipelined or
// not, each segment is posted only after the one before it has
// arrived, so segment k+1 travels one (Lamport) step after segment k, as if
// each were a sendrecv of its own (the simulator's steps, record.hpp). The
// sender of a range and its receiver cut it alike, as both know its size.
// Ranges in GPU memory are not cut (one segment).
inline constexpr std::size_t kReduceSegmentBytes = 1024 * 1024;
std::size_t reduce_scratch_elems(Comm& comm, std::size_t count, DType dtype);
void sendrecv_reduce(Comm& comm, int dst, Elems out, int src, Elems acc, ReduceOp op, unsigned step,
                     Elems scratch);

// Ring phases over steps first_step .. first_step + P-2.
void reduce_scatter_ring_steps(Comm& comm, Elems buf, std::span<const Chunk> blocks, ReduceOp op,
                               unsigned first_step);
void all_gather_ring_steps(Comm& comm, Elems buf, std::span<const Chunk> blocks,
                           unsigned first_step);
// Recursive phases among the pof2 = groups.size() folded ranks; only those
// ranks call them.
void reduce_scatter_halving_folded(Comm& comm, Elems buf, std::span<const Chunk> groups,
                                   ReduceOp op, unsigned first_step);
void all_gather_doubling_folded(Comm& comm, Elems buf, std::span<const Chunk> groups,
                                unsigned first_step);

}  // namespace ringlab::detail
