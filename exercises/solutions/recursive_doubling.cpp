// ringlab exercise 5: recursive-doubling all-reduce, a reference solution.
#include "exercises/task.hpp"

using namespace ringlab;

void recursive_doubling(Comm& comm, Elems buf, ReduceOp op) {
  const int P = comm.size();
  const int r = comm.rank();
  int pof2 = 1, rounds = 0;
  while (pof2 * 2 <= P) {
    pof2 *= 2;
    ++rounds;
  }
  const int rem = P - pof2;
  const unsigned last_step = rounds + 1;
  // comm.reduce adds for AVG: every rank divides the sum by P at the end.
  auto finish = [&] {
    if (op == ReduceOp::AVG) comm.transport().divide(buf.dtype, buf.bytes(), P);
  };

  // The fold: even ranks below 2*rem hand their data to the next rank and wait.
  if (r < 2 * rem && r % 2 == 0) {
    comm.send(r + 1, buf, 0);
    comm.recv(r + 1, buf, last_step);
    finish();
    return;
  }
  auto scratch = comm.scratch(buf.count, buf.dtype);
  const Elems theirs = scratch.elems;
  if (r < 2 * rem) {
    comm.recv(r - 1, theirs, 0);
    comm.reduce(op, buf, theirs);
  }
  const int f = r < 2 * rem ? r / 2 : r - rem;  // folded rank
  auto real = [rem](int g) { return g < rem ? 2 * g + 1 : g + rem; };
  unsigned step = 1;
  for (int mask = 1; mask < pof2; mask *= 2, ++step) {
    const int partner = f ^ mask;
    comm.sendrecv(real(partner), buf, real(partner), theirs, step);
    if (f < partner) {
      comm.reduce(op, buf, theirs);  // ours op theirs
    } else {
      comm.reduce(op, theirs, buf);  // theirs op ours: the same bits as the partner
      comm.copy(buf, theirs);
    }
  }
  if (r < 2 * rem) comm.send(r - 1, buf, last_step);  // the unfold
  finish();
}
