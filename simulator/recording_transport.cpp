#include "simulator/recording_transport.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <utility>

#include "simulator/build_record.hpp"
#include "simulator/record_builder.hpp"

namespace ringlab::sim {

std::int64_t steady_clock_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The rank's log and its address map, shared with the deleters of scratch
// buffers (which may run after an algorithm returns).
struct RecordingTransport::State {
  RecordOptions options;
  RankLog log;
  RecordBuilder* live = nullptr;        // live: events go here, not to the log
  std::vector<std::byte> before_bytes;  // live: a write's bytes before it
  std::uint32_t next_request = 0;
  int scratch_count = 0;
  bool host_memory = true;
  // RecordOptions::collectives: the collective being marked (-1: none), its
  // buffers' memory, whether its values are kept whole, the next one's label.
  int open_mark = -1;
  struct OpenBuffer {
    Elems elems;
    bool lent;  // the program's memory (not scratch of this transport's)
  };
  std::vector<OpenBuffer> open_buffers;
  bool whole_now = false;
  std::string next_label;
  DType scratch_dtype_outside = DType::Float32;

  struct Mapped {
    std::size_t bytes;
    int region;
  };
  std::map<std::uintptr_t, Mapped> by_address;  // base address -> region

  struct Resolved {
    int region = -1;
    std::uint64_t offset = 0;  // elements (bytes for region -1)
    std::uint64_t count = 0;
  };
  Resolved resolve(ConstBytes bytes) const {
    if (bytes.empty()) return resolve_empty(bytes.data());
    const auto address = reinterpret_cast<std::uintptr_t>(bytes.data());
    auto it = by_address.upper_bound(address);
    if (it != by_address.begin()) {
      --it;
      const std::uintptr_t base = it->first;
      if (address + bytes.size() <= base + it->second.bytes) {
        const std::size_t esize = element_size(log.regions[static_cast<std::size_t>(it->second.region)].dtype);
        return {it->second.region, (address - base) / esize, bytes.size() / esize};
      }
    }
    // Memory nobody named (a stack token, say): keep the size, not the address,
    // so the log does not depend on where the allocator put things.
    return {-1, 0, bytes.size()};
  }
  // An empty chunk of a named buffer (a ring's block when there are fewer
  // elements than ranks) is named too: "buf[2:2]". Its address may be the
  // end of one region and the start of the next; split_even puts empty
  // chunks last, so the region it ends wins.
  Resolved resolve_empty(const std::byte* data) const {
    if (data == nullptr || by_address.empty()) return {-1, 0, 0};
    const auto address = reinterpret_cast<std::uintptr_t>(data);
    auto it = by_address.upper_bound(address);  // the first region starting after it
    if (it == by_address.begin()) return {-1, 0, 0};
    --it;  // the last region starting at or before it
    auto inside = [&](std::map<std::uintptr_t, Mapped>::const_iterator r, bool at_start) {
      const std::uintptr_t base = r->first;
      return (at_start ? base <= address : base < address) && address <= base + r->second.bytes;
    };
    auto at = [&](std::map<std::uintptr_t, Mapped>::const_iterator r) -> Resolved {
      const std::size_t esize =
          element_size(log.regions[static_cast<std::size_t>(r->second.region)].dtype);
      return {r->second.region, (address - r->first) / esize, 0};
    };
    if (inside(it, false)) return at(it);
    if (it != by_address.begin() && inside(std::prev(it), false)) return at(std::prev(it));
    if (inside(it, true)) return at(it);
    return {-1, 0, 0};
  }

  bool capturing() const { return (options.values || whole_now) && host_memory; }
  bool keeps_event_values() const { return options.values || options.collectives; }
  std::size_t capture(ConstBytes bytes) {
    const std::size_t at = log.values.size();
    log.values.insert(log.values.end(), bytes.begin(), bytes.end());
    return at;
  }

  std::size_t push(const Event& event, std::size_t before = kNoValues) {
    log.events.push_back(event);
    if (keeps_event_values()) log.event_values.emplace_back(before, kNoValues);
    if (options.wall_clock) {
      const auto t = steady_clock_ns();
      log.wall_ns.emplace_back(t, t);
    }
    return log.events.size() - 1;
  }
  // has_after: the event changed `after` (a write), so its new bytes are kept.
  void finish(std::size_t index, ConstBytes after, bool has_after = true) {
    if (has_after && capturing()) log.event_values[index].second = capture(after);
    if (options.wall_clock) log.wall_ns[index].second = steady_clock_ns();
  }

  template <typename Apply>
  void local(const Event& event, MutBytes dst, Apply apply);

  ValueSample sample(Elems elems);
  void start_mark(RecordingTransport& self, const CollectiveStart& start);
  void end_mark(bool ok);

  int add_region(ConstBytes memory, LoggedRegion region) {
    const int id = static_cast<int>(log.regions.size());
    if (live)
      live->add_region(log.rank, id, region, capturing() ? memory : ConstBytes{});
    else if (capturing())
      region.initial_values = capture(memory);
    log.regions.push_back(std::move(region));
    if (!memory.empty())
      by_address[reinterpret_cast<std::uintptr_t>(memory.data())] = {memory.size(), id};
    return id;
  }
};

namespace {

// Forwards to the wrapped request and logs the completion once, in the
// rank's program order (wait, or the first test() that says done).
class RecordedRequest final : public Request {
 public:
  RecordedRequest(std::unique_ptr<Request> inner, std::shared_ptr<RecordingTransport::State> state,
                  std::uint32_t id, bool is_recv, MutBytes landing)
      : inner_(std::move(inner)),
        state_(std::move(state)),
        id_(id),
        is_recv_(is_recv),
        landing_(landing) {}

  void wait(Duration timeout) override {
    if (state_->live) {
      if (done_) return;
      inner_->wait(timeout);
      complete_live();
      return;
    }
    const std::size_t index = begin_completion();
    try {
      inner_->wait(timeout);
    } catch (...) {
      fail_completion(index);
      throw;
    }
    end_completion(index);
  }
  bool test() override {
    if (done_) return true;
    if (!inner_->test()) return false;
    if (state_->live)
      complete_live();
    else
      end_completion(begin_completion());
    return true;
  }

 private:
  // Live: id_ is the builder's message (send) or receive.
  void complete_live() {
    done_ = true;
    RecordBuilder& b = *state_->live;
    if (is_recv_)
      b.complete_recv(state_->log.rank, id_,
                      state_->capturing() ? ConstBytes(landing_) : ConstBytes{});
    else
      b.complete_send(state_->log.rank, id_);
  }
  std::size_t begin_completion() {
    if (done_) return kNoValues;
    Event event;
    event.kind = EventKind::Complete;
    event.request = id_;
    return state_->push(event);
  }
  // The wait threw: its Complete stays in the log, marked failed.
  void fail_completion(std::size_t index) {
    if (done_ || index == kNoValues) return;
    state_->log.events[index].failed = true;
    if (state_->options.wall_clock) state_->log.wall_ns[index].second = steady_clock_ns();
  }
  void end_completion(std::size_t index) {
    if (done_ || index == kNoValues) return;
    done_ = true;
    state_->finish(index, landing_, is_recv_);
  }

  std::unique_ptr<Request> inner_;
  std::shared_ptr<RecordingTransport::State> state_;
  std::uint32_t id_;
  bool is_recv_;      // a send changes nothing of ours
  MutBytes landing_;
  bool done_ = false;
};

}  // namespace

RecordingTransport::RecordingTransport(Transport& inner, RecordOptions options)
    : inner_(inner), state_(std::make_shared<State>()) {
  state_->options = options;
  state_->scratch_dtype_outside = options.scratch_dtype;
  state_->host_memory = inner.memory() == MemoryKind::Host;
  state_->log.rank = inner.rank();
  state_->log.world_size = inner.size();
  set_timeout(inner.timeout());
}

RecordingTransport::RecordingTransport(Transport& inner, RecordOptions options, LiveRecord& live)
    : RecordingTransport(inner, options) {
  state_->options.wall_clock = false;
  state_->live = &live.builder();
}

RecordingTransport::~RecordingTransport() = default;

int RecordingTransport::name_buffer(ConstBytes memory, std::string buffer_name, DType dtype,
                                    bool is_input) {
  const std::size_t count = memory.size() / element_size(dtype);
  return name_buffer(memory, std::move(buffer_name), dtype, 0, is_input ? count : 0);
}

int RecordingTransport::name_buffer(ConstBytes memory, std::string buffer_name, DType dtype,
                                    std::size_t input_offset, std::size_t input_count) {
  if (!memory.empty()) {
    auto it = state_->by_address.find(reinterpret_cast<std::uintptr_t>(memory.data()));
    if (it != state_->by_address.end() && it->second.bytes == memory.size()) {
      LoggedRegion& existing = state_->log.regions[static_cast<std::size_t>(it->second.region)];
      {
        existing.name = std::move(buffer_name);
        existing.kind = RegionKind::User;  // named by the program now; still freed like scratch
        existing.dtype = dtype;
        existing.count = memory.size() / element_size(dtype);
        existing.input_offset = input_offset;
        existing.input_count = input_count;
        if (state_->live)
          state_->live->rename_region(state_->log.rank, it->second.region, existing,
                                      state_->capturing() ? memory : ConstBytes{});
        else if (state_->capturing())
          existing.initial_values = state_->capture(memory);
        return it->second.region;
      }
    }
  }
  LoggedRegion region;
  region.name = std::move(buffer_name);
  region.kind = RegionKind::User;
  region.dtype = dtype;
  region.count = memory.size() / element_size(dtype);
  region.input_offset = input_offset;
  region.input_count = input_count;
  return state_->add_region(memory, std::move(region));
}

const RankLog& RecordingTransport::log() const { return state_->log; }
RankLog RecordingTransport::take_log() { return std::move(state_->log); }

// The event that posts a send or receive of `data` to or from `peer`.
Event RecordingTransport::post_event(EventKind kind, int peer, Tag tag, ConstBytes data) {
  const auto where = state_->resolve(data);
  Event event;
  event.kind = kind;
  event.peer = peer;
  event.tag_or_src_offset = tag;
  event.request = state_->next_request++;
  event.region = where.region;
  event.offset = where.offset;
  event.count = where.count;
  return event;
}

std::unique_ptr<Request> RecordingTransport::isend(int dst, Tag tag, ConstBytes data) {
  return record_send(dst, tag, data, [&] { return inner_.isend(dst, tag, data); });
}
std::unique_ptr<Request> RecordingTransport::isend_typed(int dst, Tag tag, ConstBytes data,
                                                         DType dtype) {
  return record_send(dst, tag, data, [&] { return inner_.isend_typed(dst, tag, data, dtype); });
}
std::unique_ptr<Request> RecordingTransport::irecv(int src, Tag tag, MutBytes data) {
  return record_recv(src, tag, data, [&] { return inner_.irecv(src, tag, data); });
}
std::unique_ptr<Request> RecordingTransport::irecv_typed(int src, Tag tag, MutBytes data,
                                                         DType dtype) {
  return record_recv(src, tag, data, [&] { return inner_.irecv_typed(src, tag, data, dtype); });
}

std::unique_ptr<Request> RecordingTransport::record_send(
    int dst, Tag tag, ConstBytes data, const std::function<std::unique_ptr<Request>()>& post) {
  const Event event = post_event(EventKind::PostSend, dst, tag, data);
  if (state_->live) {
    const std::uint32_t message =
        state_->live->post_send(rank(), dst, tag, event.region, event.offset, event.count);
    auto request = post();
    return std::make_unique<RecordedRequest>(std::move(request), state_, message, false,
                                             MutBytes{});
  }
  const std::size_t index = state_->push(event);
  auto request = post();
  state_->finish(index, {}, false);
  return std::make_unique<RecordedRequest>(std::move(request), state_, event.request, false,
                                           MutBytes{});
}

std::unique_ptr<Request> RecordingTransport::record_recv(
    int src, Tag tag, MutBytes data, const std::function<std::unique_ptr<Request>()>& post) {
  const Event event = post_event(EventKind::PostRecv, src, tag, data);
  if (state_->live) {
    // Before the wrapped irecv: it may copy a queued message in at once.
    const std::uint32_t receive =
        state_->live->post_recv(rank(), src, tag, event.region, event.offset, event.count,
                                state_->capturing() ? ConstBytes(data) : ConstBytes{});
    auto request = post();
    return std::make_unique<RecordedRequest>(std::move(request), state_, receive, true, data);
  }
  // Before the wrapped irecv: it may copy a queued message in at once.
  const std::size_t before = state_->capturing() ? state_->capture(data) : kNoValues;
  const std::size_t index = state_->push(event, before);
  auto request = post();
  state_->finish(index, {}, false);
  return std::make_unique<RecordedRequest>(std::move(request), state_, event.request, true, data);
}

Buffer RecordingTransport::allocate(std::size_t bytes) {
  Buffer inner_buffer = inner_.allocate(bytes);
  // Zero host scratch when values are recorded, so the record does not
  // depend on what the allocator left there.
  if (state_->capturing() && bytes > 0) std::memset(inner_buffer.storage.get(), 0, bytes);
  LoggedRegion region;
  region.name = "scratch#" + std::to_string(state_->scratch_count++);
  region.kind = RegionKind::Scratch;
  region.dtype = state_->options.scratch_dtype;
  region.count = bytes / element_size(region.dtype);
  region.alloc_event = state_->log.events.size();
  const int id = state_->add_region(inner_buffer.span(), std::move(region));
  if (state_->live) {
    state_->live->alloc(rank(), id);
  } else {
    Event event;
    event.kind = EventKind::Alloc;
    event.region = id;
    state_->finish(state_->push(event), {}, false);
  }
  // The returned storage keeps the wrapped one alive; dropping it logs the
  // free and forgets the address (an allocator may hand it out again).
  std::byte* address = inner_buffer.storage.get();
  std::shared_ptr<std::byte[]> storage(
      address, [state = state_, keep = inner_buffer.storage, id](std::byte* p) {
        if (state->live) {
          state->live->free(state->log.rank, id);
        } else {
          Event free_event;
          free_event.kind = EventKind::Free;
          free_event.region = id;
          state->push(free_event);
        }
        auto it = state->by_address.find(reinterpret_cast<std::uintptr_t>(p));
        if (it != state->by_address.end() && it->second.region == id) state->by_address.erase(it);
      });
  return Buffer{std::move(storage), bytes};
}

// A local write: logged (with the bytes before and after, where values are
// recorded) or handed to the live record.
template <typename Apply>
void RecordingTransport::State::local(const Event& event, MutBytes dst, Apply apply) {
  if (live) {
    if (capturing()) before_bytes.assign(dst.begin(), dst.end());
    apply();
    live->local_write(log.rank, event, capturing() ? ConstBytes(before_bytes) : ConstBytes{},
                      capturing() ? ConstBytes(dst) : ConstBytes{});
    return;
  }
  const std::size_t at = capturing() ? capture(dst) : kNoValues;
  const std::size_t index = push(event, at);
  apply();
  finish(index, dst);
}

void RecordingTransport::copy(MutBytes dst, ConstBytes src) {
  const auto to = state_->resolve(dst);
  const auto from = state_->resolve(src);
  Event event;
  event.kind = EventKind::Copy;
  event.region = to.region;
  event.offset = to.offset;
  event.count = to.count;
  event.src_region = from.region;
  event.tag_or_src_offset = from.offset;
  state_->local(event, dst, [&] { inner_.copy(dst, src); });
}

void RecordingTransport::reduce(DType dtype, ReduceOp op, MutBytes acc, ConstBytes in) {
  const auto to = state_->resolve(acc);
  const auto from = state_->resolve(in);
  Event event;
  event.kind = EventKind::Reduce;
  event.op = op;
  event.region = to.region;
  event.offset = to.offset;
  event.count = to.count;
  event.src_region = from.region;
  event.tag_or_src_offset = from.offset;
  state_->local(event, acc, [&] { inner_.reduce(dtype, op, acc, in); });
}

void RecordingTransport::divide(DType dtype, MutBytes data, int world_size) {
  const auto where = state_->resolve(data);
  Event event;
  event.kind = EventKind::Divide;
  event.peer = world_size;
  event.region = where.region;
  event.offset = where.offset;
  event.count = where.count;
  state_->local(event, data, [&] { inner_.divide(dtype, data, world_size); });
}

// ---- marked collectives (RecordOptions::collectives) ------------------------------

std::uint64_t value_checksum(ConstBytes bytes) {
  constexpr std::uint64_t kPrime = 1099511628211ull;
  std::uint64_t h = 1469598103934665603ull;
  std::size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    std::uint64_t word = 0;
    for (int b = 7; b >= 0; --b) word = word << 8 | std::to_integer<std::uint64_t>(bytes[i + b]);
    h = (h ^ word) * kPrime;
  }
  for (; i < bytes.size(); ++i) h = (h ^ std::to_integer<std::uint64_t>(bytes[i])) * kPrime;
  return h;
}

namespace {
// The bytes of a collective's buffers on the rank that has the most (the root's).
std::size_t largest_buffers_bytes(const CollectiveStart& s, int world) {
  const CollectiveInfo& row = collective_info(s.collective);
  return (row.first.count(world, s.count, true) + row.second.count(world, s.count, true)) *
         element_size(s.dtype);
}
}  // namespace

// Its first elements while the value budget lasts, its checksum always
// (host memory only).
ValueSample RecordingTransport::State::sample(Elems elems) {
  ValueSample taken;
  if (!host_memory) return taken;
  taken.checksum = value_checksum(elems.bytes());
  if (log.values.size() >= options.value_budget_bytes) return taken;
  taken.elements = std::min(elems.count, options.sample_elements);
  taken.offset = capture(elems.bytes().first(taken.elements * element_size(elems.dtype)));
  return taken;
}

void RecordingTransport::State::start_mark(RecordingTransport& self, const CollectiveStart& start) {
  CollectiveMark mark;
  mark.collective = start.collective;
  mark.algorithm = start.algorithm;
  mark.count = start.count;
  mark.dtype = start.dtype;
  mark.op = start.op;
  mark.root = start.root;
  mark.label = std::exchange(next_label, {});
  mark.whole_values = host_memory &&
                      largest_buffers_bytes(start, log.world_size) <= options.whole_values_bytes &&
                      log.values.size() < options.value_budget_bytes;
  whole_now = mark.whole_values;  // before naming: the names capture the values
  options.scratch_dtype = start.dtype;
  mark.first_event = log.events.size();
  if (options.wall_clock) mark.start_ns = steady_clock_ns();
  open_buffers.clear();
  for (const ObservedBuffer* b : {&start.first, &start.second}) {
    if (!b->present) continue;
    MarkedBuffer marked;
    const std::size_t regions_before = log.regions.size();
    marked.region = self.name_buffer(b->elems.bytes(), std::string(b->name), b->elems.dtype,
                                     b->input_offset, b->input_count);
    marked.named = log.regions[static_cast<std::size_t>(marked.region)];
    marked.before = sample(b->elems);
    mark.buffers.push_back(std::move(marked));
    open_buffers.push_back({b->elems, log.regions.size() > regions_before});
  }
  open_mark = static_cast<int>(log.collectives.size());
  log.collectives.push_back(std::move(mark));
}

// Memory the program lent to a collective is known during it only: a later
// collective's scratch may reuse its addresses.
void RecordingTransport::State::end_mark(bool ok) {
  CollectiveMark& mark = log.collectives[static_cast<std::size_t>(open_mark)];
  mark.end_event = log.events.size();
  mark.ok = ok;
  if (options.wall_clock) mark.end_ns = steady_clock_ns();
  for (std::size_t i = 0; i < mark.buffers.size() && i < open_buffers.size(); ++i) {
    mark.buffers[i].after = sample(open_buffers[i].elems);
    const auto it = by_address.find(reinterpret_cast<std::uintptr_t>(open_buffers[i].elems.ptr));
    if (open_buffers[i].lent && it != by_address.end() &&
        it->second.region == mark.buffers[i].region)
      by_address.erase(it);
  }
  open_mark = -1;
  open_buffers.clear();
  whole_now = false;
  options.scratch_dtype = scratch_dtype_outside;
}

void RecordingTransport::collective_started(const CollectiveStart& start) noexcept {
  State& st = *state_;
  if (!st.options.collectives || st.live) return;
  try {
    if (st.open_mark >= 0) st.end_mark(false);  // told of no end: it ends here
    st.start_mark(*this, start);
  } catch (...) {
    // Recording never fails a collective: this one is left unmarked.
    st.open_mark = -1;
    st.whole_now = false;
    st.options.scratch_dtype = st.scratch_dtype_outside;
  }
}

void RecordingTransport::collective_ended(bool ok) noexcept {
  State& st = *state_;
  if (st.open_mark < 0) return;
  try {
    st.end_mark(ok);
  } catch (...) {
    st.open_mark = -1;
    st.whole_now = false;
  }
}

void RecordingTransport::label_next_collective(std::string label) {
  state_->next_label = std::move(label);
}

void name_buffer(Transport& transport, ConstBytes memory, std::string name, DType dtype,
                 bool is_input) {
  if (auto* recording = dynamic_cast<RecordingTransport*>(&transport))
    recording->name_buffer(memory, std::move(name), dtype, is_input);
}

}  // namespace ringlab::sim
