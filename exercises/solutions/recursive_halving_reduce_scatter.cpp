// ringlab exercise 10: recursive-halving reduce-scatter, a reference solution.
#include <algorithm>
#include <vector>

#include "exercises/task.hpp"

using namespace ringlab;

void recursive_halving_reduce_scatter(Comm& comm, Elems buf, std::span<const Chunk> blocks,
                                      ReduceOp op) {
  const int P = comm.size();
  const int r = comm.rank();
  const int pof2 = floor_pow2(P), rem = P - pof2;
  unsigned rounds = 0;
  while ((1 << rounds) < pof2) ++rounds;
  const unsigned delivery = rounds + 1;
  auto range = [&](std::span<const Chunk> parts, int first, int last) {
    const Chunk c = span_of(parts, first, last);
    return buf.slice(c.offset, c.count);
  };
  const Elems everything = range(blocks, 0, P);
  const Elems mine = range(blocks, r, r + 1);
  auto finish = [&] {  // comm.reduce added: the average is the sum over P
    if (op == ReduceOp::AVG) comm.transport().divide(buf.dtype, mine.bytes(), P);
  };

  // The fold: even ranks below 2*rem hand everything to the next rank.
  if (r < 2 * rem && r % 2 == 0) {
    comm.send(r + 1, everything, 0);
    comm.recv(r + 1, mine, delivery);
    finish();
    return;
  }
  auto scratch = comm.scratch(everything.count, buf.dtype);
  if (r < 2 * rem) {
    comm.recv(r - 1, scratch.elems, 0);
    comm.reduce(op, everything, scratch.elems);
  }
  // Folded rank f stands for a group of consecutive blocks.
  const int f = r < 2 * rem ? r / 2 : r - rem;
  auto real = [rem](int g) { return g < rem ? 2 * g + 1 : g + rem; };
  std::vector<Chunk> groups;
  for (int g = 0; g < pof2; ++g)
    groups.push_back(span_of(blocks, g < rem ? 2 * g : g + rem, real(g) + 1));

  int lo = 0;
  unsigned step = 1;
  for (int mask = pof2 / 2; mask >= 1; mask /= 2, ++step) {
    const int partner = f ^ mask;
    const int keep = (f & mask) ? lo + mask : lo, give = (f & mask) ? lo : lo + mask;
    const Elems kept = range(groups, keep, keep + mask);
    const Elems received = scratch.elems.slice(0, kept.count);
    comm.sendrecv(real(partner), range(groups, give, give + mask), real(partner), received, step);
    comm.reduce(op, kept, received);
    lo = keep;
  }
  if (r < 2 * rem) comm.send(r - 1, range(blocks, r - 1, r), delivery);  // the delivery
  finish();
}
