// Scatter and gather: P blocks of b elements, block r belongs to rank r.
//
// Nomenclature (P ranks, blocks of b elements, B = b*e bytes):
//   rel(r)    = (r - root + P) % P; trees use relative ranks, the root is 0.
//   lowbit(v) = the lowest set bit of v (v > 0).
//   subtree   = in the binomial tree, rank v > 0 (relative) owns the relative
//               blocks [v, v + extent(v)) with extent(v) = min(lowbit(v), P - v);
//               the root owns all P. Rank v's children are v + m for the powers
//               of two m < lowbit(v) with v + m < P (for the root: m < P), and
//               child v + m's subtree is [v + m, v + m + min(m, P - v - m)).
//   held      = the buffer that holds a rank's subtree in relative block order:
//               relative block t at offset (t - v) * b. A leaf (extent 1) uses
//               its own out/in block; an inner rank a Comm::scratch buffer; the
//               root its send/recv buffer when root == 0, else a scratch copy
//               rotated so relative block t is absolute block (t + root) % P.
//
// Costs:
//   scatter_flat / gather_flat   1 step; the root sends (scatter) or receives
//        (gather) (P-1)*B bytes in P-1 messages; every other rank B.
//   scatter_binomial / gather_binomial   ceil(log2 P) steps (step k = round k,
//        the round with mask 2^k); the root sends/receives (P-1)*B bytes in
//        ceil(log2 P) messages; an inner rank v forwards (extent(v)-1)*B and
//        sends/receives extent(v)*B toward the root; a leaf moves B. The root
//        also copies (P-1)*B locally to rotate when root != 0.
#include <algorithm>
#include <memory>
#include <vector>

#include "primitives/algorithms.hpp"

namespace ringlab {

namespace {

int relative(int rank, int root, int size) { return (rank - root + size) % size; }
int absolute(int rel, int root, int size) { return (rel + root) % size; }

std::size_t to_size(int v) { return static_cast<std::size_t>(v); }

int lowbit(int v) { return v & -v; }

// Number of blocks in rank v's subtree (v relative).
int extent_of(int v, int size) { return v == 0 ? size : std::min(lowbit(v), size - v); }

// The first power of two >= size, and its exponent: the root's starting mask.
void top_mask(int size, int& mask, unsigned& round) {
  mask = 1;
  round = 0;
  while (mask < size) {
    mask <<= 1;
    ++round;
  }
}

unsigned log2_of(int pow2) {
  unsigned k = 0;
  while ((1 << k) < pow2) ++k;
  return k;
}

}  // namespace

// Flat scatter: the root sends block r straight to rank r (step 0).
void scatter_flat(Comm& comm, Elems send, Elems out, int root) {
  const int P = comm.size();
  const std::size_t b = out.count;
  if (comm.rank() != root) {
    comm.recv(root, out, 0);
    return;
  }
  std::vector<std::unique_ptr<Request>> sends;
  sends.reserve(to_size(P));
  for (int dst = 0; dst < P; ++dst)
    if (dst != root) sends.push_back(comm.isend(dst, send.slice(to_size(dst) * b, b), 0));
  comm.copy(out, send.slice(to_size(root) * b, b));
  for (auto& request : sends) comm.wait(*request);
}

// Binomial scatter: rank v receives its whole subtree from its parent in the
// round of lowbit(v), then hands each child its child-subtree, largest first.
void scatter_binomial(Comm& comm, Elems send, Elems out, int root) {
  const int P = comm.size();
  const std::size_t b = out.count;
  const int v = relative(comm.rank(), root, P);
  const int extent = extent_of(v, P);

  Comm::Scratch storage;
  Elems held;
  bool held_is_out = false;
  int mask = 0;
  unsigned round = 0;
  if (v == 0) {
    top_mask(P, mask, round);
    if (root == 0) {
      held = send.slice(0, to_size(P) * b);
    } else {
      // Rotate: relative blocks [0, P-root) are absolute [root, P), the rest [0, root).
      storage = comm.scratch(to_size(P) * b, out.dtype);
      held = storage.elems;
      const std::size_t tail = to_size(P - root) * b;
      comm.copy(held.slice(0, tail), send.slice(to_size(root) * b, tail));
      comm.copy(held.slice(tail, to_size(root) * b), send.slice(0, to_size(root) * b));
    }
  } else {
    mask = lowbit(v);
    round = log2_of(mask);
    if (extent == 1) {
      held = out;  // a leaf receives its block in place
      held_is_out = true;
    } else {
      storage = comm.scratch(to_size(extent) * b, out.dtype);
      held = storage.elems;
    }
    comm.recv(absolute(v - mask, root, P), held, round);
  }

  while (mask > 1) {
    mask >>= 1;
    --round;
    if (v + mask >= P) continue;
    const int child_extent = std::min(mask, P - v - mask);
    comm.send(absolute(v + mask, root, P),
              held.slice(to_size(mask) * b, to_size(child_extent) * b), round);
  }
  if (!held_is_out) comm.copy(out, held.slice(0, b));
}

// Flat gather: every rank sends its block straight to the root (step 0).
void gather_flat(Comm& comm, Elems in, Elems recv, int root) {
  const int P = comm.size();
  const std::size_t b = in.count;
  if (comm.rank() != root) {
    comm.send(root, in, 0);
    return;
  }
  std::vector<std::unique_ptr<Request>> recvs;
  recvs.reserve(to_size(P));
  for (int src = 0; src < P; ++src)
    if (src != root) recvs.push_back(comm.irecv(src, recv.slice(to_size(src) * b, b), 0));
  comm.copy(recv.slice(to_size(root) * b, b), in);
  for (auto& request : recvs) comm.wait(*request);
}

// Binomial gather, the mirror of scatter_binomial: in round k rank v receives
// child v + 2^k's subtree (if it exists) until the round of lowbit(v), in which
// it sends its completed subtree to its parent v - lowbit(v).
void gather_binomial(Comm& comm, Elems in, Elems recv, int root) {
  const int P = comm.size();
  const std::size_t b = in.count;
  const int v = relative(comm.rank(), root, P);
  const int extent = extent_of(v, P);

  Comm::Scratch storage;
  Elems held;
  if (v == 0 && root == 0) {
    held = recv.slice(0, to_size(P) * b);
    comm.copy(held.slice(0, b), in);
  } else if (extent == 1) {
    held = in;  // a leaf sends its block as it is
  } else {
    storage = comm.scratch(to_size(extent) * b, in.dtype);
    held = storage.elems;
    comm.copy(held.slice(0, b), in);
  }

  unsigned round = 0;
  for (int mask = 1; mask < P; mask <<= 1, ++round) {
    if (v & mask) {
      comm.send(absolute(v - mask, root, P), held.slice(0, to_size(extent) * b), round);
      break;
    }
    if (v + mask >= P) continue;
    const int child_extent = std::min(mask, P - v - mask);
    comm.recv(absolute(v + mask, root, P),
              held.slice(to_size(mask) * b, to_size(child_extent) * b), round);
  }

  if (v == 0 && root != 0) {
    // Un-rotate: relative [0, P-root) -> absolute [root, P), the rest -> [0, root).
    const std::size_t tail = to_size(P - root) * b;
    comm.copy(recv.slice(to_size(root) * b, tail), held.slice(0, tail));
    comm.copy(recv.slice(0, to_size(root) * b), held.slice(tail, to_size(root) * b));
  }
}

}  // namespace ringlab
