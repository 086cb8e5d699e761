#include "primitives/comm.hpp"

#include <cassert>
#include <stdexcept>

namespace ringlab {

std::vector<Chunk> split_even(std::size_t count, int parts) {
  std::vector<Chunk> chunks(static_cast<std::size_t>(parts));
  const std::size_t base = count / static_cast<std::size_t>(parts);
  const std::size_t extra = count % static_cast<std::size_t>(parts);
  std::size_t offset = 0;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    chunks[i] = {offset, base + (i < extra ? 1 : 0)};
    offset += chunks[i].count;
  }
  return chunks;
}

std::vector<Chunk> equal_blocks(std::size_t block, int parts) {
  std::vector<Chunk> chunks(static_cast<std::size_t>(parts));
  for (std::size_t i = 0; i < chunks.size(); ++i) chunks[i] = {i * block, block};
  return chunks;
}

Chunk span_of(std::span<const Chunk> chunks, int first, int last) {
  if (first >= last) return {first < static_cast<int>(chunks.size()) ? chunks[first].offset : 0, 0};
  return {chunks[first].offset, chunks[last - 1].end() - chunks[first].offset};
}

int floor_pow2(int n) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

namespace {
constexpr Tag kCollectiveBit = Tag{1} << 63;
constexpr unsigned kStepBits = 20;
}  // namespace

Comm::Comm(Transport& transport, std::uint64_t sequence)
    : transport_(transport),
      rank_(transport.rank()),
      size_(transport.size()),
      base_(kCollectiveBit | (Tag{sequence} << kStepBits)) {}

Tag Comm::tag(unsigned step) const {
  if (step >= (1u << kStepBits)) throw std::logic_error("collective step number out of range");
  return base_ | step;
}

void Comm::send(int dst, Elems data, unsigned step) {
  transport_.send(dst, tag(step), data.bytes());
}
void Comm::recv(int src, Elems data, unsigned step) {
  transport_.recv(src, tag(step), data.bytes());
}
void Comm::sendrecv(int dst, Elems send_data, int src, Elems recv_data, unsigned step) {
  transport_.sendrecv(dst, tag(step), send_data.bytes(), src, tag(step), recv_data.bytes());
}
std::unique_ptr<Request> Comm::isend(int dst, Elems data, unsigned step) {
  return transport_.isend(dst, tag(step), data.bytes());
}
std::unique_ptr<Request> Comm::irecv(int src, Elems data, unsigned step) {
  return transport_.irecv(src, tag(step), data.bytes());
}
void Comm::wait(Request& request) { request.wait(transport_.timeout()); }

Comm::Scratch Comm::scratch(std::size_t count, DType dtype) {
  Buffer buffer = transport_.allocate(count * element_size(dtype));
  Elems elems{buffer.storage.get(), count, dtype};
  return {std::move(buffer), elems};
}

void Comm::copy(Elems dst, Elems src) {
  assert(dst.count == src.count);
  transport_.copy(dst.bytes(), src.bytes());
}

void Comm::reduce(ReduceOp op, Elems acc, Elems in) {
  assert(acc.count == in.count);
  if (acc.count == 0) return;
  transport_.reduce(acc.dtype, op, acc.bytes(), in.bytes());
}

}  // namespace ringlab
