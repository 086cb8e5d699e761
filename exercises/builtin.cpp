#include "exercises/builtin.hpp"

#include "primitives/algorithms.hpp"

namespace ringlab::exercises {

namespace {

void divide(Comm& comm, Elems part) {
  comm.transport().divide(part.dtype, part.bytes(), comm.size());
}

void all_reduce_with(void (*algorithm)(Comm&, Elems, ReduceOp), Comm& comm, Elems buf,
                     ReduceOp op) {
  algorithm(comm, buf, wire_op(op));
  if (op == ReduceOp::AVG) divide(comm, buf);
}

void reduce_scatter_with(void (*algorithm)(Comm&, Elems, std::span<const Chunk>, ReduceOp),
                         Comm& comm, Elems buf, std::span<const Chunk> blocks, ReduceOp op) {
  algorithm(comm, buf, blocks, wire_op(op));
  const Chunk own = blocks[static_cast<std::size_t>(comm.rank())];
  if (op == ReduceOp::AVG) divide(comm, buf.slice(own.offset, own.count));
}

}  // namespace

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
    divide(comm, part);
  }
}

void builtin_ring_reduce_scatter(Comm& comm, Elems buf, std::span<const Chunk> blocks,
                                 ReduceOp op) {
  reduce_scatter_with(reduce_scatter_ring, comm, buf, blocks, op);
}
void builtin_halving_reduce_scatter(Comm& comm, Elems buf, std::span<const Chunk> blocks,
                                    ReduceOp op) {
  reduce_scatter_with(reduce_scatter_recursive_halving, comm, buf, blocks, op);
}
void builtin_ring_all_reduce(Comm& comm, Elems buf, ReduceOp op) {
  all_reduce_with(all_reduce_ring, comm, buf, op);
}
void builtin_recursive_doubling(Comm& comm, Elems buf, ReduceOp op) {
  all_reduce_with(all_reduce_recursive_doubling, comm, buf, op);
}
void builtin_rabenseifner(Comm& comm, Elems buf, ReduceOp op) {
  all_reduce_with(all_reduce_rabenseifner, comm, buf, op);
}
void builtin_binary_tree(Comm& comm, Elems buf, ReduceOp op) {
  all_reduce_with(all_reduce_binary_tree, comm, buf, op);
}

void builtin_gloo_ring_reduce(Comm& comm, Elems buf, ReduceOp op, int root) {
  reduce_gloo_ring(comm, buf, wire_op(op), root);
  if (op == ReduceOp::AVG && comm.rank() == root) divide(comm, buf);
}

}  // namespace ringlab::exercises
