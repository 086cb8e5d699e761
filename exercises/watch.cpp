#include "exercises/watch.hpp"

#include <string>

namespace ringlab::exercises {

namespace {

// A receive whose wait marks its rank as blocked on it, for the world.
class WatchedReceive final : public Request {
 public:
  WatchedReceive(std::unique_ptr<Request> inner, WatchWorld* world, int rank, int src, Tag tag)
      : inner_(std::move(inner)), world_(world), rank_(rank), src_(src), tag_(tag) {}
  void wait(Duration timeout) override {
    mark(true);
    inner_->wait(timeout);  // a throw leaves the mark: the deadlock report reads it
    mark(false);
  }
  bool test() override { return inner_->test(); }

 private:
  void mark(bool blocked) {
    if (!world_) return;
    const std::lock_guard lock(world_->mutex);
    if (blocked)
      world_->receiving[rank_] = {src_, tag_};
    else
      world_->receiving.erase(rank_);
  }
  std::unique_ptr<Request> inner_;
  WatchWorld* world_;
  int rank_, src_;
  Tag tag_;
};

class WatchingTransport final : public Transport {
 public:
  WatchingTransport(Transport& inner, PostLimit limit, WatchWorld* world)
      : inner_(inner), limit_(limit), world_(world) {
    set_timeout(inner.timeout());
  }
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  std::string_view name() const override { return inner_.name(); }

  std::unique_ptr<Request> isend(int dst, Tag tag, ConstBytes data) override {
    count(data.size());
    note_send(tag);
    return inner_.isend(dst, tag, data);
  }
  std::unique_ptr<Request> irecv(int src, Tag tag, MutBytes data) override {
    count(data.size());
    return std::make_unique<WatchedReceive>(inner_.irecv(src, tag, data), world_, rank(), src,
                                            tag);
  }
  void sendrecv(int dst, Tag send_tag, ConstBytes send_data, int src, Tag recv_tag,
                MutBytes recv_data) override {
    count(send_data.size());
    count(recv_data.size());
    note_send(send_tag);
    mark_receiving(src, recv_tag);  // a throw leaves the mark, as WatchedReceive's
    inner_.sendrecv(dst, send_tag, send_data, src, recv_tag, recv_data);
    clear_receiving();
  }
  MemoryKind memory() const override { return inner_.memory(); }
  Buffer allocate(std::size_t bytes) override { return inner_.allocate(bytes); }
  void copy(MutBytes dst, ConstBytes src) override { inner_.copy(dst, src); }
  void reduce(DType dtype, ReduceOp op, MutBytes acc, ConstBytes in) override {
    inner_.reduce(dtype, op, acc, in);
  }
  void divide(DType dtype, MutBytes data, int world_size) override {
    inner_.divide(dtype, data, world_size);
  }
  bool prefers_fewer_messages() const override { return inner_.prefers_fewer_messages(); }
  bool overlaps_transfers() const override { return inner_.overlaps_transfers(); }

 private:
  void count(std::size_t bytes) {
    ++messages_;
    bytes_ += bytes;
    if (messages_ <= limit_.messages && bytes_ <= limit_.bytes) return;
    throw RunawayError(
        "rank " + std::to_string(rank()) + " has posted " + std::to_string(messages_) +
        " sends and receives (" + std::to_string(bytes_) + " bytes) in this case, more than " +
        (messages_ > limit_.messages ? std::to_string(limit_.messages) + " messages"
                                     : std::to_string(limit_.bytes) + " bytes") +
        ", several times what any algorithm of this exercise needs: your loop never ends? A "
        "loop whose counter never moves (for (s = 0; s < P - 1;) without ++s) sends forever");
  }
  void note_send(Tag tag) {
    if (!world_) return;
    const std::lock_guard lock(world_->mutex);
    world_->sends_posted[rank()].insert(tag);
  }
  void mark_receiving(int src, Tag tag) {
    if (!world_) return;
    const std::lock_guard lock(world_->mutex);
    world_->receiving[rank()] = {src, tag};
  }
  void clear_receiving() {
    if (!world_) return;
    const std::lock_guard lock(world_->mutex);
    world_->receiving.erase(rank());
  }

  Transport& inner_;
  PostLimit limit_;
  WatchWorld* world_;
  std::size_t messages_ = 0, bytes_ = 0;
};

}  // namespace

PostLimit post_limit(int ranks, std::size_t count, std::size_t buffer_bytes) {
  const auto P = static_cast<std::size_t>(ranks);
  return {64 + 16 * P * P + 4 * count, (std::size_t{1} << 20) + 4 * P * buffer_bytes};
}

std::unique_ptr<Transport> watching_transport(Transport& inner, PostLimit limit,
                                              WatchWorld* world) {
  return std::make_unique<WatchingTransport>(inner, limit, world);
}

bool every_rank_receives_first(WatchWorld& world) {
  const std::lock_guard lock(world.mutex);
  if (world.receiving.size() < 2) return false;
  for (const auto& [rank, waiting] : world.receiving) {
    const auto& [src, tag] = waiting;
    if (!world.receiving.count(src)) return false;  // its source is not stuck receiving
    const auto sent = world.sends_posted.find(src);
    if (sent != world.sends_posted.end() && sent->second.count(tag)) return false;
  }
  return true;
}

}  // namespace ringlab::exercises
