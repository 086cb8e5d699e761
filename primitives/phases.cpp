#include "primitives/phases.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace ringlab::detail {

void check_blocks(const Comm& comm, Elems buf, std::span<const Chunk> blocks, bool consecutive,
                  const char* collective, const char* algorithm) {
  auto fail = [&](const std::string& why) {
    throw std::invalid_argument("rank " + std::to_string(comm.rank()) + ": " + collective + " " +
                                algorithm + ": " + why);
  };
  if (blocks.size() != static_cast<std::size_t>(comm.size()))
    fail(std::to_string(blocks.size()) + " blocks for a world of " + std::to_string(comm.size()) +
         " ranks");
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    if (blocks[b].end() > buf.count)
      fail("block " + std::to_string(b) + " ends at element " + std::to_string(blocks[b].end()) +
           ", past the buffer's " + std::to_string(buf.count));
    if (consecutive && b > 0 && blocks[b].offset != blocks[b - 1].end())
      fail("block " + std::to_string(b) + " does not start where block " + std::to_string(b - 1) +
           " ends; this algorithm needs consecutive blocks");
  }
}

namespace {
// Elements per segment. In GPU memory a range is not cut: the cache argument
// is about host memory, and on the GPU each segment would cost a group of
// NCCL calls and a kernel launch.
std::size_t segment_elems(Comm& comm, DType dtype) {
  if (comm.transport().memory() == MemoryKind::Device) return SIZE_MAX;
  return std::max<std::size_t>(1, kReduceSegmentBytes / element_size(dtype));
}
}  // namespace

std::size_t reduce_scratch_elems(Comm& comm, std::size_t count, DType dtype) {
  const std::size_t segment = segment_elems(comm, dtype);
  if (count <= segment) return count;
  // Pipelined: two halves, one arrives while the other is reduced.
  return comm.transport().overlaps_transfers() ? 2 * segment : segment;
}

namespace {

// How sendrecv_reduce cuts its two ranges: segments of per_segment elements;
// an empty range is still one (empty) message, as with a plain sendrecv.
struct Segments {
  std::size_t per_segment;
  std::size_t count(std::size_t elems) const {
    return elems == 0 ? 1 : (elems - 1) / per_segment + 1;
  }
  Elems piece(Elems range, std::size_t k) const {
    const std::size_t offset = k == 0 ? 0 : std::min(range.count, k * per_segment);
    return range.slice(offset, std::min(per_segment, range.count - offset));
  }
};

// Without a processor to spare: each segment a sendrecv, then its reduction.
void sendrecv_reduce_in_turn(Comm& comm, const Segments& cut, int dst, Elems out, int src,
                             Elems acc, ReduceOp op, unsigned step, Elems scratch) {
  const std::size_t sends = cut.count(out.count), receives = cut.count(acc.count);
  for (std::size_t k = 0; k < std::max(sends, receives); ++k) {
    const Elems into = cut.piece(acc, k);
    const Elems incoming = scratch.slice(0, into.count);
    if (k < sends && k < receives)
      comm.sendrecv(dst, cut.piece(out, k), src, incoming, step);
    else if (k < sends)
      comm.send(dst, cut.piece(out, k), step);
    else
      comm.recv(src, incoming, step);
    if (k < receives) comm.reduce(op, into, incoming);
  }
}

// With one: segment k+1 travels while segment k is reduced.
void sendrecv_reduce_pipelined(Comm& comm, const Segments& cut, int dst, Elems out, int src,
                               Elems acc, ReduceOp op, unsigned step, Elems scratch) {
  const std::size_t sends = cut.count(out.count), receives = cut.count(acc.count);
  // Segment k of the incoming side lands in half k % 2 of the scratch.
  auto incoming = [&](std::size_t k) {
    return scratch.slice(receives == 1 ? 0 : (k % 2) * cut.per_segment, cut.piece(acc, k).count);
  };
  // A send is waited for once the next segment has arrived (it may still be
  // leaving meanwhile, through a writer thread of the TCP transport); only
  // where nothing arrives any more is it waited for at once. Either way each
  // segment is posted after the one before arrived or went out, so the
  // simulator's clocks are those of one sendrecv per segment.
  std::unique_ptr<Request> receive, send, previous_send;
  auto post = [&](std::size_t k) {
    if (k < receives) receive = comm.irecv(src, incoming(k), step);
    if (k < sends) send = comm.isend(dst, cut.piece(out, k), step);
  };
  post(0);
  for (std::size_t k = 0; k < std::max(sends, receives); ++k) {
    if (k < receives) comm.wait(*receive);
    if (previous_send) comm.wait(*previous_send);
    previous_send = std::move(send);
    if (previous_send && k >= receives) {
      comm.wait(*previous_send);
      previous_send.reset();
    }
    post(k + 1);  // travels while segment k is reduced
    if (k < receives) comm.reduce(op, cut.piece(acc, k), incoming(k));
  }
  if (previous_send) comm.wait(*previous_send);
}

}  // namespace

void sendrecv_reduce(Comm& comm, int dst, Elems out, int src, Elems acc, ReduceOp op, unsigned step,
                     Elems scratch) {
  const Segments cut{segment_elems(comm, acc.dtype)};
  if (comm.transport().overlaps_transfers())
    sendrecv_reduce_pipelined(comm, cut, dst, out, src, acc, op, step, scratch);
  else
    sendrecv_reduce_in_turn(comm, cut, dst, out, src, acc, op, step, scratch);
}

}  // namespace ringlab::detail
