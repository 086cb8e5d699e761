// ringlab exercise 11: Rabenseifner's all-reduce, a reference solution.
#include <vector>

#include "exercises/task.hpp"

using namespace ringlab;

void rabenseifner_all_reduce(Comm& comm, Elems buf, ReduceOp op) {
  const int P = comm.size();
  const int r = comm.rank();
  const int pof2 = floor_pow2(P), rem = P - pof2;
  unsigned L = 0;
  while ((1 << L) < pof2) ++L;
  auto finish = [&] {  // comm.reduce added: the average is the sum over P
    if (op == ReduceOp::AVG) comm.transport().divide(buf.dtype, buf.bytes(), P);
  };

  // The fold: even ranks below 2*rem hand their vector over and wait for the result.
  if (r < 2 * rem && r % 2 == 0) {
    comm.send(r + 1, buf, 0);
    comm.recv(r + 1, buf, 2 * L + 1);
    finish();
    return;
  }
  auto scratch = comm.scratch(buf.count, buf.dtype);
  if (r < 2 * rem) {
    comm.recv(r - 1, scratch.elems, 0);
    comm.reduce(op, buf, scratch.elems);
  }
  const int f = r < 2 * rem ? r / 2 : r - rem;
  auto real = [rem](int g) { return g < rem ? 2 * g + 1 : g + rem; };
  const std::vector<Chunk> groups = split_even(buf.count, pof2);
  auto range = [&](int first, int last) {
    const Chunk c = span_of(groups, first, last);
    return buf.slice(c.offset, c.count);
  };

  // Recursive halving: afterwards folded rank f holds group f reduced.
  int lo = 0;
  unsigned step = 1;
  for (int mask = pof2 / 2; mask >= 1; mask /= 2, ++step) {
    const int partner = f ^ mask;
    const int keep = (f & mask) ? lo + mask : lo, give = (f & mask) ? lo : lo + mask;
    const Elems kept = range(keep, keep + mask);
    const Elems received = scratch.elems.slice(0, kept.count);
    comm.sendrecv(real(partner), range(give, give + mask), real(partner), received, step);
    comm.reduce(op, kept, received);
    lo = keep;
  }
  // Recursive doubling: swap finished ranges until every group is everywhere.
  for (int mask = 1; mask < pof2; mask *= 2, ++step) {
    const int partner = f ^ mask;
    const int mine = f & ~(mask - 1), theirs = partner & ~(mask - 1);
    comm.sendrecv(real(partner), range(mine, mine + mask), real(partner),
                  range(theirs, theirs + mask), step);
  }
  if (r < 2 * rem) comm.send(r - 1, buf, 2 * L + 1);  // the unfold
  finish();
}
