// ringlab exercise 4: ring all-reduce, a reference solution.
#include <algorithm>

#include "exercises/task.hpp"

using namespace ringlab;

void ring_all_reduce(Comm& comm, Elems buf, ReduceOp op) {
  const int P = comm.size();
  const int r = comm.rank();
  auto mod = [P](int a) { return ((a % P) + P) % P; };
  const auto chunks = split_even(buf.count, P);
  auto chunk = [&](int c) { return buf.slice(chunks[c].offset, chunks[c].count); };
  auto scratch = comm.scratch(chunks.front().count, buf.dtype);  // the first chunk is the largest
  const int right = mod(r + 1), left = mod(r - 1);

  // Reduce-scatter: afterwards chunk r holds every rank's contribution.
  for (int s = 0; s < P - 1; ++s) {
    const Elems into = chunk(mod(r - s - 2));
    const Elems received = scratch.elems.slice(0, into.count);
    comm.sendrecv(right, chunk(mod(r - s - 1)), left, received, s);
    comm.reduce(op, into, received);
  }
  // All-gather: pass the reduced chunks on around the ring.
  for (int s = 0; s < P - 1; ++s)
    comm.sendrecv(right, chunk(mod(r - s)), left, chunk(mod(r - s - 1)), P - 1 + s);
  if (op == ReduceOp::AVG)  // comm.reduce added: the average is the sum over P
    comm.transport().divide(buf.dtype, buf.bytes(), P);
}
