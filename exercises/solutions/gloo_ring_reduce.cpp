// ringlab exercise 9: Gloo's segmented ring reduce, a reference solution.
#include <algorithm>
#include <array>
#include <memory>
#include <vector>

#include "exercises/task.hpp"

using namespace ringlab;

void gloo_ring_reduce(Comm& comm, Elems buf, ReduceOp op, int root) {
  const int P = comm.size();
  const int r = comm.rank();
  const std::size_t n = buf.count, e = element_size(buf.dtype), N = n * e;
  if (N == 0 || P == 1) return;
  const std::size_t ranks = static_cast<std::size_t>(P);
  auto ceil_div = [](std::size_t a, std::size_t b) { return (a + b - 1) / b; };
  auto round_up = [&](std::size_t a, std::size_t b) { return ceil_div(a, b) * b; };

  // Gloo's segmentation: at least 2P segments, a multiple of P, at most 1 MiB each.
  const std::size_t segment_bytes =
      round_up(std::min(ceil_div(N, 2 * ranks), e * ((std::size_t{1} << 20) / e)), e);
  const std::size_t S = round_up(std::max(ceil_div(N, segment_bytes), 2 * ranks), ranks);
  const std::size_t spr = S / ranks, segE = segment_bytes / e;
  auto segment = [&](std::size_t g) {
    const std::size_t offset = std::min(g * segE, n);
    return buf.slice(offset, std::min(segE, n - offset));
  };
  const std::size_t me = static_cast<std::size_t>(r);
  auto sent_at = [&](std::size_t i) { return ((me + 1) * spr + i) % S; };
  auto received_at = [&](std::size_t i) { return ((me + 2) * spr + i) % S; };
  const int left = (r - 1 + P) % P, right = (r + 1) % P;

  auto inbox = comm.scratch(2 * segE, buf.dtype);  // two slots: iterations alternate
  std::array<std::unique_ptr<Request>, 2> receives, sends;
  for (std::size_t i = 0; i < S; ++i) {
    if (i >= 2) {  // what arrived two iterations ago: fold it in before it is sent on
      const Elems arrived = segment(received_at(i - 2));
      if (arrived.count > 0) {
        comm.wait(*receives[i % 2]);
        comm.reduce(op, arrived, inbox.elems.slice((i % 2) * segE, arrived.count));
      }
      if (sends[i % 2]) comm.wait(*sends[i % 2]);
      receives[i % 2].reset();
      sends[i % 2].reset();
    }
    if (i + 2 < S) {
      const auto step = static_cast<unsigned>(1 + i);
      const Elems incoming = segment(received_at(i));
      if (incoming.count > 0)
        receives[i % 2] =
            comm.irecv(right, inbox.elems.slice((i % 2) * segE, incoming.count), step);
      const Elems outgoing = segment(sent_at(i));
      if (outgoing.count > 0) sends[i % 2] = comm.isend(left, outgoing, step);
    }
  }

  // Every owner's chunk to the root (step 0).
  auto chunk = [&](int owner) {
    const std::size_t offset = std::min(static_cast<std::size_t>(owner) * spr * segE, n);
    return buf.slice(offset, std::min(spr * segE, n - offset));
  };
  if (r != root) {
    if (chunk(r).count > 0) comm.send(root, chunk(r), 0);
    return;
  }
  std::vector<std::unique_ptr<Request>> pending;
  for (int q = 0; q < P; ++q)
    if (q != root && chunk(q).count > 0) pending.push_back(comm.irecv(q, chunk(q), 0));
  for (auto& request : pending) comm.wait(*request);
  if (op == ReduceOp::AVG) comm.transport().divide(buf.dtype, buf.bytes(), P);  // the root only
}
