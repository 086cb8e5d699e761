#include "exercise_mistakes.hpp"

#include "primitives/algorithms.hpp"

namespace ringlab::testing::mistakes {

namespace {
int mod(int a, int p) { return ((a % p) + p) % p; }
Elems chunk(Elems buf, const std::vector<Chunk>& chunks, int c) {
  return buf.slice(chunks[std::size_t(c)].offset, chunks[std::size_t(c)].count);
}
}  // namespace

void ring_all_reduce_wrong_chunk(Comm& comm, Elems buf, ReduceOp op) {
  const int P = comm.size(), r = comm.rank();
  const auto chunks = split_even(buf.count, P);
  auto scratch = comm.scratch(chunks.front().count, buf.dtype);
  for (int s = 0; s < P - 1; ++s) {
    const Elems into = chunk(buf, chunks, mod(r - s - 1, P));  // should be r - s - 2
    const Elems received = scratch.elems.slice(0, into.count);
    comm.sendrecv(mod(r + 1, P), chunk(buf, chunks, mod(r - s, P)), mod(r - 1, P), received,
                  static_cast<unsigned>(s));
    comm.reduce(op, into, received);
  }
  for (int s = 0; s < P - 1; ++s)
    comm.sendrecv(mod(r + 1, P), chunk(buf, chunks, mod(r - s, P)), mod(r - 1, P),
                  chunk(buf, chunks, mod(r - s - 1, P)), static_cast<unsigned>(P - 1 + s));
}

void ring_all_reduce_no_reduce(Comm& comm, Elems buf, ReduceOp) {
  const int P = comm.size(), r = comm.rank();
  const auto chunks = split_even(buf.count, P);
  for (int s = 0; s < P - 1; ++s)
    comm.sendrecv(mod(r + 1, P), chunk(buf, chunks, mod(r - s - 1, P)), mod(r - 1, P),
                  chunk(buf, chunks, mod(r - s - 2, P)), static_cast<unsigned>(s));
  for (int s = 0; s < P - 1; ++s)
    comm.sendrecv(mod(r + 1, P), chunk(buf, chunks, mod(r - s, P)), mod(r - 1, P),
                  chunk(buf, chunks, mod(r - s - 1, P)), static_cast<unsigned>(P - 1 + s));
}

void ring_all_reduce_blocking_sends(Comm& comm, Elems buf, ReduceOp op) {
  const int P = comm.size(), r = comm.rank();
  const auto chunks = split_even(buf.count, P);
  auto scratch = comm.scratch(chunks.front().count, buf.dtype);
  for (int s = 0; s < P - 1; ++s) {
    const Elems into = chunk(buf, chunks, mod(r - s - 2, P));
    const Elems received = scratch.elems.slice(0, into.count);
    comm.send(mod(r + 1, P), chunk(buf, chunks, mod(r - s - 1, P)), static_cast<unsigned>(s));
    comm.recv(mod(r - 1, P), received, static_cast<unsigned>(s));
    comm.reduce(op, into, received);
  }
  for (int s = 0; s < P - 1; ++s) {
    const auto step = static_cast<unsigned>(P - 1 + s);
    comm.send(mod(r + 1, P), chunk(buf, chunks, mod(r - s, P)), step);
    comm.recv(mod(r - 1, P), chunk(buf, chunks, mod(r - s - 1, P)), step);
  }
}

void ring_all_gather_wrong_peer(Comm& comm, Elems buf, std::span<const Chunk> blocks) {
  const int P = comm.size(), r = comm.rank();
  auto block = [&](int b) {
    return buf.slice(blocks[std::size_t(b)].offset, blocks[std::size_t(b)].count);
  };
  for (int s = 0; s < P - 1; ++s)
    comm.sendrecv(mod(r + 1, P), block(mod(r - s, P)), mod(r + 1, P), block(mod(r - s - 1, P)),
                  static_cast<unsigned>(s));
}

void recursive_doubling_always_sum(Comm& comm, Elems buf, ReduceOp) {
  all_reduce_recursive_doubling(comm, buf, ReduceOp::SUM);
}

void dissemination_barrier_one_round(Comm& comm) {
  const int P = comm.size(), r = comm.rank();
  if (P > 1) comm.sendrecv((r + 1) % P, Elems{}, (r - 1 + P) % P, Elems{}, 0);
}

void ddp_bucket_average_no_divide(Comm& comm, Elems grads, std::span<const Chunk> buckets) {
  for (const Chunk& c : buckets)
    all_reduce_ring(comm, grads.slice(c.offset, c.count), ReduceOp::SUM);
}

}  // namespace ringlab::testing::mistakes
