// Broadcast: on return every rank's buf holds the root's buf.
//
// Nomenclature (P ranks, n elements of e bytes, N = n*e bytes):
//   rel(r)  = (r - root + P) % P, the rank relative to the root (root is 0);
//             trees and chains are built on relative ranks and mapped back
//             with abs(v) = (v + root) % P.
//   segment = a piece of the buffer in the pipelined chain.
//
// Costs (steps = message rounds on the critical path):
//   flat      1 step; the root sends (P-1)*N bytes, every other rank 0.
//   binomial  ceil(log2 P) steps; a rank sends N bytes to each of its children
//             (the root ceil(log2 P)*N), every rank but the root receives N once.
//   chain     P-2+S steps for S segments; every rank but the last in the chain
//             sends N bytes (in S pieces), every rank but the root receives N.
//             Time ~ (P-1 + S) * segment instead of (P-1) * N.
#include <algorithm>
#include <memory>
#include <vector>

#include "primitives/algorithms.hpp"

namespace ringlab {

namespace {

int relative(int rank, int root, int size) { return (rank - root + size) % size; }
int absolute(int rel, int root, int size) { return (rel + root) % size; }

// Pipelined chain: segments of at most this many bytes.
constexpr std::size_t kChainSegmentBytes = 256 * 1024;
// Keeps segment indices (used as step numbers) well inside the tag's step range.
constexpr std::size_t kMaxChainSegments = std::size_t{1} << 19;

}  // namespace

// Flat: the root sends the whole buffer to every other rank (step 0).
void broadcast_flat(Comm& comm, Elems buf, int root) {
  const int P = comm.size();
  if (P == 1) return;
  if (comm.rank() != root) {
    comm.recv(root, buf, 0);
    return;
  }
  std::vector<std::unique_ptr<Request>> sends;
  sends.reserve(static_cast<std::size_t>(P - 1));
  for (int dst = 0; dst < P; ++dst)
    if (dst != root) sends.push_back(comm.isend(dst, buf, 0));
  for (auto& request : sends) comm.wait(*request);
}

// Binomial tree on relative ranks. Round k (mask = 2^k, step k): every rank
// v < 2^k that already has the data sends it to v + 2^k (if < P). A rank v > 0
// receives in the round of its lowest set bit from v - lowbit(v), then sends
// to v + 2^j for the smaller rounds j, largest subtree first.
void broadcast_binomial(Comm& comm, Elems buf, int root) {
  const int P = comm.size();
  if (P == 1) return;
  const int v = relative(comm.rank(), root, P);

  int mask = 1;
  unsigned round = 0;
  while (mask < P) {
    if (v & mask) {
      comm.recv(absolute(v - mask, root, P), buf, round);
      break;
    }
    mask <<= 1;
    ++round;
  }
  // Now mask is v's lowest set bit (or the first power of two >= P for the
  // root); its children are v + mask/2, v + mask/4, ..., v + 1.
  while (mask > 1) {
    mask >>= 1;
    --round;
    if (v + mask < P) comm.send(absolute(v + mask, root, P), buf, round);
  }
}

// Pipelined chain root -> root+1 -> ... -> root+P-1. The buffer is cut into
// S segments (segment k, step k). A middle rank posts the receive of segment
// k+1 before forwarding segment k, so receiving and forwarding overlap; at
// most two of its sends are in flight.
void broadcast_chain(Comm& comm, Elems buf, int root) {
  const int P = comm.size();
  const std::size_t n = buf.count;
  if (P == 1 || n == 0) return;
  const int v = relative(comm.rank(), root, P);
  const bool has_prev = v != 0;
  const bool has_next = v != P - 1;
  const int prev = absolute(v - 1 + P, root, P);
  const int next = absolute(v + 1, root, P);

  std::size_t seg = std::max<std::size_t>(
      1, std::min(n, kChainSegmentBytes / element_size(buf.dtype)));
  seg = std::max(seg, (n + kMaxChainSegments - 1) / kMaxChainSegments);
  const std::size_t segments = (n + seg - 1) / seg;
  auto segment = [&](std::size_t k) {
    const std::size_t offset = k * seg;
    return buf.slice(offset, std::min(seg, n - offset));
  };
  auto step = [](std::size_t k) { return static_cast<unsigned>(k); };

  std::unique_ptr<Request> recv_request;
  std::unique_ptr<Request> send_request;  // the previous segment's send
  if (has_prev) recv_request = comm.irecv(prev, segment(0), 0);
  for (std::size_t k = 0; k < segments; ++k) {
    if (has_prev) {
      comm.wait(*recv_request);
      recv_request.reset();
      if (k + 1 < segments) recv_request = comm.irecv(prev, segment(k + 1), step(k + 1));
    }
    if (has_next) {
      auto request = comm.isend(next, segment(k), step(k));
      if (send_request) comm.wait(*send_request);
      send_request = std::move(request);
    }
  }
  if (send_request) comm.wait(*send_request);
}

}  // namespace ringlab
