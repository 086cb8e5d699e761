// ringlab exercise 3: ring reduce-scatter, a reference solution.
#include <algorithm>

#include "exercises/task.hpp"

using namespace ringlab;

void ring_reduce_scatter(Comm& comm, Elems buf, std::span<const Chunk> blocks, ReduceOp op) {
  const int P = comm.size();
  const int r = comm.rank();
  auto mod = [P](int a) { return ((a % P) + P) % P; };
  auto block = [&](int b) { return buf.slice(blocks[b].offset, blocks[b].count); };

  std::size_t largest = 0;
  for (const Chunk& c : blocks) largest = std::max(largest, c.count);
  auto scratch = comm.scratch(largest, buf.dtype);

  for (int s = 0; s < P - 1; ++s) {
    const Elems out = block(mod(r - s - 1));
    const Elems in = block(mod(r - s - 2));
    const Elems received = scratch.elems.slice(0, in.count);
    comm.sendrecv(mod(r + 1), out, mod(r - 1), received, s);
    comm.reduce(op, in, received);  // what we send next step
  }
  if (op == ReduceOp::AVG)  // comm.reduce added: the average is the sum over P
    comm.transport().divide(buf.dtype, block(r).bytes(), P);
}
