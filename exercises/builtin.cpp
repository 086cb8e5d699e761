#include "exercises/builtin.hpp"

#include "primitives/algorithms.hpp"

namespace ringlab::exercises {

void builtin_ping_pong(Comm& comm, Elems buf) {
  if (comm.size() < 2 || comm.rank() > 1) return;
  if (comm.rank() == 0) {
    comm.send(1, buf, 0);
    comm.recv(1, buf, 1);
    return;
  }
  auto theirs = comm.scratch(buf.count, buf.dtype);
  comm.recv(0, theirs.elems, 0);
  comm.reduce(ReduceOp::SUM, buf, theirs.elems);
  comm.send(0, buf, 1);
}

void builtin_ddp_bucket_average(Comm& comm, Elems grads, std::span<const Chunk> buckets) {
  for (const Chunk& bucket : buckets) {
    const Elems part = grads.slice(bucket.offset, bucket.count);
    all_reduce_ring(comm, part, ReduceOp::SUM);
    comm.transport().divide(part.dtype, part.bytes(), comm.size());
  }
}

}  // namespace ringlab::exercises
