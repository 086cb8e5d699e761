// Reduce: in place; the root ends with x_0 op x_1 op ... op x_{P-1} (x_q = rank
// q's input). What the other ranks hold afterwards depends on the algorithm
// and is spelled out below.
//
// ---- reduce_gloo_ring: Gloo's segmented ring reduce (gloo/reduce.cc), which
// PyTorch's Gloo backend runs in place on the user's tensor.
//
// Nomenclature (P ranks, n elements of e bytes, N = n*e bytes, M = 1 MiB):
//   segBytes = roundUp(min(ceil(N / 2P), M), e);  segE = segBytes / e elements
//   S        = roundUp(max(ceil(N / segBytes), 2P), P)    number of segments
//   spr      = S / P                                      segments per chunk
//   segment g  = elements [g*segE, (g+1)*segE) clipped to n (possibly empty);
//   chunk c    = segments [c*spr, (c+1)*spr), owned by rank c;
//   inbox      = a scratch buffer of two segment slots, slot i % 2 receives the
//                segment of iteration i.
// Iteration i = 0 .. S-1 on rank r (step 1 + i; the final gather is step 0):
//   1. if i >= 2: wait for the segment received at iteration i-2 and reduce it
//      into the local buffer (local = local op inbox), then wait for the send
//      of iteration i-2;
//   2. if i < S-2: receive segment ((r+2)*spr + i) mod S from r+1 into the
//      inbox and send segment ((r+1)*spr + i) mod S to r-1 (empty segments are
//      neither sent nor received).
// Rank r sends at iteration k*spr + s (k = 0..P-1) segment s of chunk r+1+k:
// the raw one for k = 0, for k >= 1 the one it received (and reduced) at
// iteration (k-1)*spr + s, two or more iterations earlier. So segment s of
// chunk c starts raw at rank c-1 and travels c-1 -> c-2 -> ... -> c, every
// rank folding its own value in front: rank c ends with
//   total_c = x_c op (x_{c+1} op (... op x_{c-1})).
// The ring keeps going past the owner for the iterations left before S-2: the
// owner forwards segments s < spr-2 of its finished chunk once more, to c-1,
// which folds them into its raw copy. Finally every non-root rank q sends
// chunk q to the root, which receives it in place. Nothing else is fixed up.
//
// Closed form (indices mod P; R(q, c) = x_q op (x_{q+1} op (... op x_{c-1})),
// the fold over the cyclic run q, q+1, ..., c-1 of ((c-1-q) mod P) + 1 ranks):
// element j is in segment g = j / segE, chunk c = g / spr, position s = g % spr.
//   root:                                   total_c   (= R(c, c), all P ranks)
//   non-root q == c:                        total_c
//   non-root q == c-1, s <  spr-2:          x_q op total_c
//   any other non-root q (q == c-1 included
//   for s >= spr-2, where it is x_q as is): R(q, c)
// When N <= 2P * M (tensors up to 2P MiB), spr = 2 and
// segE = ceil(n / 2P), so chunk c is elements [2c*segE, 2(c+1)*segE) and the
// third line never applies: rank q holds x_q op ... op x_{c-1}, the partial
// result of the ranks from itself up to the one before the chunk's owner.
// Article: P=4, n=2 int64 gives segE=1, both elements in chunk 0; rank 3 holds
// x_3 = [7,8], rank 2 x_2+x_3 = [12,14], rank 1 [15,18], rank 0 and the root 3
// total_0 = [16,20]. Beyond 2P MiB, segBytes = M and spr = ceil(ceil(N/M)/P).
// N = 0 and P = 1 return at once, as in Gloo.
// Cost: S-2 steps of one segment plus a final step; every rank sends
// (S-2)*segBytes ~ N*(P-1)/P bytes around the ring (a bit more when
// spr > 2) and a non-root rank ~N/P to the root; the root receives ~N*(P-1)/P.
//
// ---- reduce_flat: every non-root rank sends its buffer to the root (step 0);
// the root folds them in rank order, ((x_0 op x_1) op x_2) op ... .
// Non-root buffers are untouched. Cost: 1 step; a non-root rank sends N, the
// root receives (P-1)*N bytes in P-1 messages.
//
// ---- reduce_binomial: binomial tree on relative ranks v = (r - root + P) % P.
// Round k (mask 2^k, step k): a rank v with bit k set sends its partial to
// v - 2^k and is done; otherwise, if v + 2^k < P, it receives that child's
// partial and folds it in (local = local op child). An inner rank ends with
// the reduction of its subtree, relative ranks [v, v + min(lowbit(v), P-v)),
// grouped as ((x_v op T(v+1)) op T(v+2)) op T(v+4) ... (T = a child's
// subtree result); leaves are untouched. Cost: ceil(log2 P) steps; every
// non-root rank sends N once; a rank receives N per child (the root
// ceil(log2 P) * N).
#include <algorithm>
#include <array>
#include <memory>
#include <vector>

#include "primitives/algorithms.hpp"

namespace ringlab {

namespace {

std::size_t round_up(std::size_t value, std::size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}
std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

// Gloo's ReduceOptions::kMaxSegmentSize.
constexpr std::size_t kGlooMaxSegmentBytes = std::size_t{1} << 20;

}  // namespace

void reduce_gloo_ring(Comm& comm, Elems buf, ReduceOp op, int root) {
  const std::size_t n = buf.count;
  const std::size_t e = element_size(buf.dtype);
  const std::size_t total_bytes = n * e;
  const int P = comm.size();
  const int r = comm.rank();
  if (total_bytes == 0 || P == 1) return;
  const std::size_t ranks = static_cast<std::size_t>(P);

  const std::size_t max_segment_bytes = e * (kGlooMaxSegmentBytes / e);
  const std::size_t segment_bytes =
      round_up(std::min(ceil_div(total_bytes, 2 * ranks), max_segment_bytes), e);
  const std::size_t num_segments =
      round_up(std::max(ceil_div(total_bytes, segment_bytes), 2 * ranks), ranks);
  const std::size_t spr = num_segments / ranks;  // segments per rank (chunk)
  const std::size_t seg_elems = segment_bytes / e;

  // Segment g (any g < num_segments) clipped to the buffer; empty past the end.
  auto segment = [&](std::size_t g) {
    const std::size_t offset = std::min(g * seg_elems, n);
    return buf.slice(offset, std::min(seg_elems, n - offset));
  };
  const std::size_t me = static_cast<std::size_t>(r);
  auto send_segment = [&](std::size_t i) { return ((me + 1) * spr + i) % num_segments; };
  auto recv_segment = [&](std::size_t i) { return ((me + 2) * spr + i) % num_segments; };
  auto step = [](std::size_t i) { return static_cast<unsigned>(1 + i); };

  const int send_rank = (r - 1 + P) % P;
  const int recv_rank = (r + 1) % P;
  Comm::Scratch inbox = comm.scratch(2 * seg_elems, buf.dtype);
  auto slot = [&](std::size_t i, std::size_t count) {
    return inbox.elems.slice((i % 2) * seg_elems, count);
  };
  std::array<std::unique_ptr<Request>, 2> recvs;
  std::array<std::unique_ptr<Request>, 2> sends;

  for (std::size_t i = 0; i < num_segments; ++i) {
    if (i >= 2) {
      // Fold in the segment received two iterations ago, before it is forwarded.
      const Elems received = segment(recv_segment(i - 2));
      if (received.count > 0) {
        comm.wait(*recvs[i % 2]);
        comm.reduce(op, received, slot(i, received.count));
      }
      if (sends[i % 2]) comm.wait(*sends[i % 2]);
      recvs[i % 2].reset();
      sends[i % 2].reset();
    }
    if (i + 2 < num_segments) {
      const Elems incoming = segment(recv_segment(i));
      if (incoming.count > 0)
        recvs[i % 2] = comm.irecv(recv_rank, slot(i, incoming.count), step(i));
      const Elems outgoing = segment(send_segment(i));
      if (outgoing.count > 0) sends[i % 2] = comm.isend(send_rank, outgoing, step(i));
    }
  }

  // Gather the owners' chunks to the root (step 0).
  auto chunk = [&](int owner) {
    const std::size_t offset = std::min(static_cast<std::size_t>(owner) * spr * seg_elems, n);
    return buf.slice(offset, std::min(spr * seg_elems, n - offset));
  };
  if (r == root) {
    std::vector<std::unique_ptr<Request>> pending;
    for (int q = 0; q < P; ++q) {
      if (q == root) continue;
      const Elems part = chunk(q);
      if (part.count > 0) pending.push_back(comm.irecv(q, part, 0));
    }
    for (auto& request : pending) comm.wait(*request);
  } else {
    const Elems part = chunk(r);
    if (part.count > 0) comm.send(root, part, 0);
  }
}

void reduce_flat(Comm& comm, Elems buf, ReduceOp op, int root) {
  const int P = comm.size();
  if (P == 1) return;
  if (comm.rank() != root) {
    comm.send(root, buf, 0);
    return;
  }
  // acc collects x_0 op x_1 op ... in rank order; it is buf itself when root
  // is 0 (x_0 is already there), else scratch copied back at the end.
  Comm::Scratch inbox = comm.scratch(buf.count, buf.dtype);
  Comm::Scratch acc_storage;
  Elems acc = buf;
  if (root != 0) {
    acc_storage = comm.scratch(buf.count, buf.dtype);
    acc = acc_storage.elems;
    comm.recv(0, acc, 0);
  }
  for (int q = 1; q < P; ++q) {
    if (q == root) {
      comm.reduce(op, acc, buf);
    } else {
      comm.recv(q, inbox.elems, 0);
      comm.reduce(op, acc, inbox.elems);
    }
  }
  if (root != 0) comm.copy(buf, acc);
}

void reduce_binomial(Comm& comm, Elems buf, ReduceOp op, int root) {
  const int P = comm.size();
  if (P == 1) return;
  const int v = (comm.rank() - root + P) % P;
  Comm::Scratch inbox;  // allocated by ranks that have a child
  bool have_inbox = false;
  unsigned round = 0;
  for (int mask = 1; mask < P; mask <<= 1, ++round) {
    if (v & mask) {
      comm.send((v - mask + root) % P, buf, round);
      return;
    }
    if (v + mask >= P) continue;
    if (!have_inbox) {
      inbox = comm.scratch(buf.count, buf.dtype);
      have_inbox = true;
    }
    comm.recv((v + mask + root) % P, inbox.elems, round);
    comm.reduce(op, buf, inbox.elems);
  }
}

}  // namespace ringlab
