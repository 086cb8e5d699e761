// ringlab exercise 7: pairwise all-to-all, a reference solution.
#include "exercises/task.hpp"

using namespace ringlab;

void pairwise_all_to_all(Comm& comm, Elems send, std::span<const Chunk> send_blocks, Elems recv,
                         std::span<const Chunk> recv_blocks) {
  const int P = comm.size();
  const int r = comm.rank();
  auto part = [](Elems buf, Chunk c) { return buf.slice(c.offset, c.count); };
  comm.copy(part(recv, recv_blocks[r]), part(send, send_blocks[r]));  // our own block
  for (int s = 1; s < P; ++s) {
    const int dst = (r + s) % P;
    const int src = (r - s + P) % P;
    comm.sendrecv(dst, part(send, send_blocks[dst]), src, part(recv, recv_blocks[src]), s);
  }
}
