// What an exercise file includes: the functions of `ringlab exercise`, one
// per exercise, each written by the learner against Comm, the same API every
// algorithm in primitives/ is written against (primitives/comm.hpp).
//
// The Comm of one call (comm):
//   comm.rank(), comm.size()             this rank, the world size P
//   comm.send(dst, data, step)           blocking send of `data` (an Elems)
//   comm.recv(src, data, step)           blocking receive into `data`
//   comm.sendrecv(dst, out, src, in, step)   both at once: never deadlocks
//   comm.isend / comm.irecv(..., step)   non-blocking; comm.wait(*request)
//   comm.scratch(count, dtype).elems     temporary space (freed with it)
//   comm.copy(dst, src)                  dst = src, element-wise
//   comm.reduce(op, acc, in)             acc = acc op in, element-wise
// `step` numbers a message exchange: a send and the receive it is meant for
// use the same step. Elems is a typed range: buf.slice(offset, count),
// buf.count, buf.dtype. split_even(count, P) cuts a count into P chunks.
//
// Buffers come in every dtype: bool, uint8, int8, int16, int32, int64,
// float16, bfloat16, float32, float64. Let Elems and comm's calls handle the
// element type (slice counts elements, reduce and copy know the dtype); code
// that assumes 8-byte int64 elements, or any one size, fails.
// An op is any of SUM, PRODUCT, MIN, MAX, the bitwise BAND, BOR, BXOR (on
// integers and bool) and AVG (on floats): comm.reduce(op, ...) applies it, adding for
// AVG, and a function that takes an op divides by P at the end for AVG:
//   if (op == ReduceOp::AVG) comm.transport().divide(part.dtype, part.bytes(), comm.size());
// on the part of buf that holds its result.
//
// A message's receive buffer has the message's size: a receive of 3 elements
// for a send of 2 is an error naming both ranks. Under NCCL's rules (the
// nccl_rules backend, where this build has it) the messages between two
// ranks match in the order they are posted, steps play no part, and nothing
// moves until a rank waits: a blocking send completes only once its receive
// is posted.
//
// The function must return to its caller: the check counts a case only once
// every rank's call has returned and its buffers hold the right values, so
// ending the program (exit, _exit, an atexit handler) fails the check.
#pragma once

#include <span>

#include "primitives/comm.hpp"

// 1. ping_pong: rank 0 sends buf to rank 1; rank 1 adds it to its own buf and
//    sends the sum back, into rank 0's buf. Other ranks keep their buf.
void ping_pong(ringlab::Comm& comm, ringlab::Elems buf);

// 2. binomial_broadcast: every rank ends with root's buf.
void binomial_broadcast(ringlab::Comm& comm, ringlab::Elems buf, int root);

// 3. ring_reduce_scatter: buf holds P blocks; rank r ends with block r
//    reduced (op) over all ranks. The other blocks are scratch.
void ring_reduce_scatter(ringlab::Comm& comm, ringlab::Elems buf,
                         std::span<const ringlab::Chunk> blocks, ringlab::ReduceOp op);

// 4. ring_all_reduce: every rank ends with buf reduced (op) over all ranks.
void ring_all_reduce(ringlab::Comm& comm, ringlab::Elems buf, ringlab::ReduceOp op);

// 5. recursive_doubling: the same all-reduce in log2 P rounds.
void recursive_doubling(ringlab::Comm& comm, ringlab::Elems buf, ringlab::ReduceOp op);

// 6. ring_all_gather: buf holds P blocks, rank r's own block r filled;
//    every rank ends with every block.
void ring_all_gather(ringlab::Comm& comm, ringlab::Elems buf,
                     std::span<const ringlab::Chunk> blocks);

// 7. pairwise_all_to_all: send_blocks[d] of send goes to rank d, and what
//    rank s sends lands in recv_blocks[s] of recv.
void pairwise_all_to_all(ringlab::Comm& comm, ringlab::Elems send,
                         std::span<const ringlab::Chunk> send_blocks, ringlab::Elems recv,
                         std::span<const ringlab::Chunk> recv_blocks);

// 8. dissemination_barrier: no rank returns before every rank has called it.
void dissemination_barrier(ringlab::Comm& comm);

// 9. gloo_ring_reduce: root ends with buf reduced (op) over all ranks, and
//    every other rank with the partial result Gloo's segmented ring leaves.
void gloo_ring_reduce(ringlab::Comm& comm, ringlab::Elems buf, ringlab::ReduceOp op, int root);

// 10. recursive_halving_reduce_scatter: ring_reduce_scatter's result in
//     log2 P rounds.
void recursive_halving_reduce_scatter(ringlab::Comm& comm, ringlab::Elems buf,
                                      std::span<const ringlab::Chunk> blocks,
                                      ringlab::ReduceOp op);

// 11. rabenseifner_all_reduce: recursive halving, then recursive doubling.
void rabenseifner_all_reduce(ringlab::Comm& comm, ringlab::Elems buf, ringlab::ReduceOp op);

// 12. binary_tree_all_reduce: up a binary tree to rank 0, then down it.
void binary_tree_all_reduce(ringlab::Comm& comm, ringlab::Elems buf, ringlab::ReduceOp op);

// 13. ddp_bucket_average: grads (float32) is cut into buckets, listed in the
//     order DDP's backward fills them; every rank ends with the average of
//     grads over all ranks.
void ddp_bucket_average(ringlab::Comm& comm, ringlab::Elems grads,
                        std::span<const ringlab::Chunk> buckets);
