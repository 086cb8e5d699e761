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

namespace detail {

// The requests of one Comm that are not finished yet, and those dropped
// unfinished. One collective runs on one thread, so nothing here locks.
struct RequestLedger {
  struct Entry {
    const void* request;
    bool is_send;
    int peer;
    unsigned step;
  };
  std::vector<Entry> open;
  std::vector<Entry> dropped;

  void close(const void* request, bool drop) {
    for (std::size_t i = 0; i < open.size(); ++i) {
      if (open[i].request != request) continue;
      if (drop) dropped.push_back(open[i]);
      open[i] = open.back();
      open.pop_back();
      return;
    }
  }
};

}  // namespace detail

namespace {
constexpr Tag kCollectiveBit = Tag{1} << 63;
constexpr unsigned kStepBits = 20;

// A request of the transport, noted in its Comm's ledger until it finishes.
class TrackedRequest final : public Request {
 public:
  TrackedRequest(std::unique_ptr<Request> inner, std::shared_ptr<detail::RequestLedger> ledger)
      : inner_(std::move(inner)), ledger_(std::move(ledger)) {}
  ~TrackedRequest() override {
    if (!finished_) ledger_->close(this, /*drop=*/true);
  }
  void wait(Duration timeout) override {
    inner_->wait(timeout);
    finish();
  }
  bool test() override {
    const bool done = inner_->test();
    if (done) finish();
    return done;
  }

 private:
  void finish() {
    if (finished_) return;
    finished_ = true;
    ledger_->close(this, /*drop=*/false);
  }

  std::unique_ptr<Request> inner_;
  std::shared_ptr<detail::RequestLedger> ledger_;
  bool finished_ = false;
};

std::string describe(const detail::RequestLedger::Entry& e, Tag base) {
  return std::string(e.is_send ? "a send to" : "a receive from") + " rank " +
         std::to_string(e.peer) + " (" + describe_tag(base | e.step) + ")";
}
}  // namespace

Comm::Comm(Transport& transport, std::uint64_t sequence)
    : transport_(transport),
      rank_(transport.rank()),
      size_(transport.size()),
      base_(kCollectiveBit | (Tag{sequence} << kStepBits)),
      ledger_(std::make_shared<detail::RequestLedger>()) {}

std::unique_ptr<Request> Comm::tracked(std::unique_ptr<Request> request, bool is_send, int peer,
                                       unsigned step) {
  auto wrapped = std::make_unique<TrackedRequest>(std::move(request), ledger_);
  ledger_->open.push_back({wrapped.get(), is_send, peer, step});
  return wrapped;
}

void Comm::check_finished(std::string_view collective, std::string_view algorithm) const {
  const auto& open = ledger_->open;
  const auto& dropped = ledger_->dropped;
  if (open.empty() && dropped.empty()) return;
  std::string text = "rank " + std::to_string(rank_) + ": " + std::string(collective);
  if (!algorithm.empty()) text += " (" + std::string(algorithm) + ")";
  text += " returned with requests it did not finish:";
  for (const auto& e : open) text += " " + describe(e, base_) + " was never waited for;";
  for (const auto& e : dropped) text += " " + describe(e, base_) + " was dropped unfinished;";
  text += " an algorithm waits (Comm::wait) for every isend and irecv before it returns, or, "
          "under NCCL's rules, the operation would run in a later collective "
          "(primitives/comm.hpp, rule 4)";
  throw std::logic_error(text);
}

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
  return tracked(transport_.isend(dst, tag(step), data.bytes()), true, dst, step);
}
std::unique_ptr<Request> Comm::irecv(int src, Elems data, unsigned step) {
  return tracked(transport_.irecv(src, tag(step), data.bytes()), false, src, step);
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
