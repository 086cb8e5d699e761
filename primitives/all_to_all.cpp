// All-to-all: every rank sends a (possibly different, possibly empty) block to
// every rank. send_blocks[d] is the part of send that goes to rank d;
// recv_blocks[s] is where the block from rank s lands in recv. The block r
// sends to d has the same size as the one d expects from r (the transport
// reports a mismatch as a CommError naming both ranks). send and recv must
// not overlap.
//
// Nomenclature (P ranks, r = this rank):
//   step s      = 1 .. P-1: r sends to dst = (r+s) % P and receives from
//                 src = (r-s+P) % P. Every pair of ranks meets in exactly one
//                 step, and each step is a permutation (a shift by s), so no
//                 rank receives from two ranks at once.
//   own block   = send_blocks[r] -> recv_blocks[r], copied locally (no step).
//
// Cost: P-1 steps; a rank sends the sum of its blocks but its own
// ((P-1)/P * N bytes for equal blocks of an N-byte send buffer).
#include <stdexcept>
#include <string>

#include "primitives/algorithms.hpp"

namespace ringlab {

namespace {

Elems slice(Elems buf, Chunk c) { return buf.slice(c.offset, c.count); }

void check_blocks(const Comm& comm, Elems buf, std::span<const Chunk> blocks, const char* which) {
  auto fail = [&](const std::string& why) {
    throw std::invalid_argument("rank " + std::to_string(comm.rank()) + ": all_to_all: " +
                                which + " " + why);
  };
  if (blocks.size() != static_cast<std::size_t>(comm.size()))
    fail("has " + std::to_string(blocks.size()) + " blocks for a world of " +
         std::to_string(comm.size()) + " ranks");
  for (std::size_t b = 0; b < blocks.size(); ++b)
    if (blocks[b].end() > buf.count)
      fail("block " + std::to_string(b) + " ends at element " + std::to_string(blocks[b].end()) +
           ", past the buffer's " + std::to_string(buf.count));
}

}  // namespace

void all_to_all_pairwise(Comm& comm, Elems send, std::span<const Chunk> send_blocks, Elems recv,
                         std::span<const Chunk> recv_blocks) {
  check_blocks(comm, send, send_blocks, "send_blocks");
  check_blocks(comm, recv, recv_blocks, "recv_blocks");
  const int P = comm.size();
  const int r = comm.rank();
  if (send_blocks[r].count != recv_blocks[r].count)
    throw std::invalid_argument("rank " + std::to_string(r) + ": all_to_all: sends itself " +
                                std::to_string(send_blocks[r].count) + " elements but expects " +
                                std::to_string(recv_blocks[r].count));
  comm.copy(slice(recv, recv_blocks[r]), slice(send, send_blocks[r]));
  for (int s = 1; s < P; ++s) {
    const int dst = (r + s) % P;
    const int src = (r - s + P) % P;
    comm.sendrecv(dst, slice(send, send_blocks[dst]), src, slice(recv, recv_blocks[src]),
                  static_cast<unsigned>(s));
  }
}

}  // namespace ringlab
