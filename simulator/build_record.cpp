#include "simulator/build_record.hpp"

#include <malloc.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "simulator/free_slots.hpp"
#include "simulator/permute.hpp"
#include "simulator/record_builder.hpp"

namespace ringlab::sim {

namespace {

constexpr std::uint64_t kMaxElem = std::numeric_limits<Elem>::max();

Elem to_elem(std::uint64_t v) {
  if (v > kMaxElem)
    throw std::length_error(
        "the recorded simulator keeps element ranges in 32 bits: " + std::to_string(v) +
        " elements is too many (leave out --steps and "
        "--trace to predict it without a record)");
  return static_cast<Elem>(v);
}

// The positions that sort `items` by step, then by key(item) (a u64)
// within a step: where[i] is item i's place. The keys are gathered bucket by
// bucket, so the sort does not chase items around memory.
template <typename T, typename Key>
std::vector<std::uint32_t> places(const std::vector<T>& items, Step last, Key key) {
  std::vector<std::size_t> begin;
  std::vector<std::uint32_t> where = detail::places_by_step(items, last, begin);
  std::vector<std::uint32_t> order(items.size());  // position -> item
  for (std::size_t i = 0; i < items.size(); ++i) order[where[i]] = static_cast<std::uint32_t>(i);
  std::vector<std::pair<std::uint64_t, std::uint32_t>> bucket;
  for (std::size_t k = 0; k + 1 < begin.size(); ++k) {
    bucket.clear();
    for (std::size_t i = begin[k]; i < begin[k + 1]; ++i)
      bucket.emplace_back(key(items[order[i]]), order[i]);
    std::sort(bucket.begin(), bucket.end());
    for (std::size_t i = 0; i < bucket.size(); ++i) order[begin[k] + i] = bucket[i].second;
  }
  for (std::size_t i = 0; i < order.size(); ++i) where[order[i]] = static_cast<std::uint32_t>(i);
  return where;
}

}  // namespace

RecordBuilder::RecordBuilder(int ranks, RunInfo info)
    : info_(std::move(info)),
      sets_(run_.rank_sets),
      ranks_(static_cast<std::size_t>(ranks)),
      waiting_(static_cast<std::size_t>(ranks)) {
  run_.operation = info_.operation;
  run_.algorithm = info_.algorithm;
  run_.ranks = ranks;
  run_.roles = info_.roles;
  if (run_.roles.empty())
    for (int r = 0; r < ranks; ++r) run_.roles.push_back("rank " + std::to_string(r));
  run_.dtype = info_.dtype;
  run_.op = info_.op;
  run_.root = info_.root;
  run_.count = info_.count;
  run_.values_recorded = info_.values_recorded;
  run_.values_note = info_.values_note;
}

int RecordBuilder::global(int r, int local) const {
  return local < 0 ? -1
                   : ranks_[static_cast<std::size_t>(r)].regions[static_cast<std::size_t>(local)];
}

std::size_t RecordBuilder::esize(int region) const {
  return region < 0 ? 1 : element_size(run_.regions[static_cast<std::size_t>(region)].dtype);
}

Location RecordBuilder::location(int r, int local_region, std::uint64_t offset,
                                 std::uint64_t count) const {
  return {global(r, local_region), to_elem(offset), to_elem(count)};
}

std::size_t RecordBuilder::keep_values(ConstBytes bytes) {
  if (!run_.values_recorded) return 0;
  const std::size_t at = run_.values.size();
  run_.values.insert(run_.values.end(), bytes.begin(), bytes.end());
  return at;
}

void RecordBuilder::initial_state(Region& region, const LoggedRegion& lr, int r,
                                  ConstBytes initial) {
  region.name = lr.name;
  region.kind = lr.kind;
  region.dtype = lr.dtype;
  region.count = lr.count;
  const Elem count = to_elem(lr.count);
  const Elem in_first = to_elem(std::min(lr.input_offset, lr.count));
  const Elem in_last = to_elem(std::min(lr.input_offset + lr.input_count, lr.count));
  auto& runs = region.initial_provenance;
  runs.clear();
  if (in_first > 0) runs.push_back({0, in_first, kNoInputs});
  if (in_last > in_first) runs.push_back({in_first, in_last - in_first, sets_.single(r)});
  if (count > in_last) runs.push_back({in_last, count - in_last, kNoInputs});
  region.initial_values = keep_values(initial);
  prov_[static_cast<std::size_t>(region.id)] = ProvState(runs);
}

void RecordBuilder::add_region(int r, int local, const LoggedRegion& lr, ConstBytes initial) {
  auto& regions = rank(r).regions;
  if (static_cast<std::size_t>(local) != regions.size())
    throw std::logic_error("record: regions of a rank must come in order");
  Region region;
  region.id = static_cast<int>(run_.regions.size());
  region.rank = r;
  regions.push_back(region.id);
  prov_.emplace_back();
  initial_state(region, lr, r, initial);
  run_.regions.push_back(std::move(region));
}

void RecordBuilder::rename_region(int r, int local, const LoggedRegion& lr, ConstBytes initial) {
  Region& region = run_.regions[static_cast<std::size_t>(global(r, local))];
  initial_state(region, lr, r, initial);
}

void RecordBuilder::match(std::uint32_t m, std::uint32_t receive) {
  Receive& rv = receives_[receive];
  rv.message = m;
  run_.messages[m].to = rv.to;
  matched_ = receive;
}

std::uint32_t RecordBuilder::post_send(int r, int peer, Tag tag, int local_region,
                                       std::uint64_t offset, std::uint64_t count) {
  RankState& st = rank(r);
  ++st.seq;
  matched_ = kNone;
  Message m;
  m.id = st.sends++;  // the sender's own order, the sort key's last part
  m.src = r;
  m.dst = peer;
  m.tag = tag;
  m.from = location(r, local_region, offset, count);
  m.bytes = count * esize(m.from.region);
  m.send_step = st.clock + 1;
  m.payload = read_runs(m.from);
  if (run_.messages.size() >= kMaxElem) throw std::length_error("record: too many messages");
  const auto index = static_cast<std::uint32_t>(run_.messages.size());
  run_.messages.push_back(m);
  if (const auto receive = waiting_[static_cast<std::size_t>(peer)].match_send(r, tag, index))
    match(index, *receive);
  return index;
}

std::uint32_t RecordBuilder::post_recv(int r, int peer, Tag tag, int local_region,
                                       std::uint64_t offset, std::uint64_t count,
                                       ConstBytes before) {
  RankState& st = rank(r);
  ++st.seq;
  matched_ = kNone;
  const std::uint32_t index = detail::take_slot(receives_, free_receives_);
  Receive& rv = receives_[index];
  rv = Receive{};
  rv.rank = r;
  rv.src = peer;
  rv.tag = tag;
  rv.open = true;
  rv.to = location(r, local_region, offset, count);
  rv.stamp = st.clock;
  rv.values_before = keep_values(before);
  if (const auto message = waiting_[static_cast<std::size_t>(r)].match_receive(peer, tag, index)) {
    match(*message, index);
    matched_ = kNone;  // matched at once: nobody waits on it
  }
  return index;
}

bool RecordBuilder::received(std::uint32_t receive) const {
  return receives_[receive].message != kNone;
}

int RecordBuilder::receiver(std::uint32_t receive) const { return receives_[receive].rank; }

void RecordBuilder::complete_send(int r, std::uint32_t m) {
  RankState& st = rank(r);
  ++st.seq;
  st.clock = std::max(st.clock, run_.messages[m].send_step);
}

void RecordBuilder::nothing(int r) { ++rank(r).seq; }

void RecordBuilder::complete_recv(int r, std::uint32_t receive, ConstBytes after) {
  RankState& st = rank(r);
  const std::uint32_t seq = st.seq++;
  const Receive rv = receives_[receive];
  if (rv.message == kNone)
    throw std::logic_error("record: a receive completed before its message was sent");
  free_receives_.push_back(receive);
  receives_[receive].open = false;
  Message& msg = run_.messages[rv.message];
  const Step step = std::max(msg.send_step - 1, rv.stamp) + 1;
  msg.step = step;
  msg.delivered = true;
  st.clock = std::max(st.clock, step);
  if (msg.to.region < 0 || msg.to.count == 0) return;
  Write w;
  w.step = step;
  w.rank = r;
  w.seq = seq;
  w.kind = WriteKind::Receive;
  w.dst = msg.to;
  w.src = msg.from;
  w.message = static_cast<int>(rv.message);
  // Copy the payload's runs: write() appends to the arena they live in.
  scratch_a_.assign(run_.runs(msg.payload).begin(), run_.runs(msg.payload).end());
  const auto landed = moved(scratch_a_, msg.from.offset, msg.from.region, msg.to.offset,
                            msg.to.count, msg.to.region);
  const std::size_t before_at = rv.values_before;
  std::size_t index = write(w, landed, {}, after);
  if (run_.values_recorded) run_.write_values[index].before = before_at;
  auto& recent = st.landings;
  if (recent.size() >= 8) recent.pop_front();
  recent.push_back({msg.to.region, msg.to.offset, msg.to.count, rv.message});
}

RunSpan RecordBuilder::read_runs(const Location& where) {
  if (run_.prov_runs.size() >= kMaxElem)
    throw std::length_error("record: too many provenance runs");
  RunSpan span{static_cast<std::uint32_t>(run_.prov_runs.size()), 0};
  if (where.region < 0) return span;
  prov_[static_cast<std::size_t>(where.region)].read(where.offset, where.count, run_.prov_runs);
  span.count = static_cast<std::uint32_t>(run_.prov_runs.size() - span.begin);
  return span;
}

// Runs of `source` (offsets in src_region) moved to start at dst_offset in
// dst_region, converting units when the two regions' dtypes differ.
std::vector<ProvRun> RecordBuilder::moved(std::span<const ProvRun> source, Elem src_offset,
                                          int src_region, Elem dst_offset, Elem dst_count,
                                          int dst_region) const {
  std::vector<ProvRun> out;
  const std::size_t es = esize(src_region), ed = esize(dst_region);
  for (const ProvRun& run : source) {
    const std::size_t first = std::size_t{run.offset - src_offset} * es / ed;
    const std::size_t last = std::min<std::size_t>(
        dst_count, (std::size_t{run.offset - src_offset + run.count} * es + ed - 1) / ed);
    if (first < last)
      out.push_back(
          {static_cast<Elem>(dst_offset + first), static_cast<Elem>(last - first), run.set});
  }
  if (out.empty() && dst_count > 0) out.push_back({dst_offset, dst_count, kNoInputs});
  return out;
}

// Records a write of `after` over dst; returns its index.
std::size_t RecordBuilder::write(Write w, std::span<const ProvRun> after, ConstBytes before_values,
                                 ConstBytes after_values) {
  auto& state = prov_[static_cast<std::size_t>(w.dst.region)];
  if (run_.prov_runs.size() + after.size() + w.dst.count >= kMaxElem)
    throw std::length_error("record: too many provenance runs");
  w.before = {static_cast<std::uint32_t>(run_.prov_runs.size()), 0};
  state.read(w.dst.offset, w.dst.count, run_.prov_runs);
  w.before.count = static_cast<std::uint32_t>(run_.prov_runs.size() - w.before.begin);
  w.after = {static_cast<std::uint32_t>(run_.prov_runs.size()),
             static_cast<std::uint32_t>(after.size())};
  run_.prov_runs.insert(run_.prov_runs.end(), after.begin(), after.end());
  state.assign(w.dst.offset, w.dst.count, after, scratch_c_);
  run_.writes.push_back(w);
  if (run_.values_recorded) {
    WriteValues v;
    v.before = keep_values(before_values);
    v.after = keep_values(after_values);
    run_.write_values.push_back(v);
  }
  return run_.writes.size() - 1;
}

void RecordBuilder::local_write(int r, const Event& e, ConstBytes before_values,
                                ConstBytes after_values) {
  RankState& st = rank(r);
  const std::uint32_t seq = st.seq++;
  const int dst_region = global(r, e.region);
  if (dst_region < 0 || e.count == 0) return;
  Write w;
  w.step = st.clock;
  w.rank = r;
  w.seq = seq;
  w.dst = location(r, e.region, e.offset, e.count);
  w.op = e.op;
  auto& state = prov_[static_cast<std::size_t>(dst_region)];
  std::vector<ProvRun>& current = scratch_a_;
  current.clear();
  state.read(w.dst.offset, w.dst.count, current);
  if (e.kind == EventKind::Divide) {
    w.kind = WriteKind::Divide;
    const std::vector<ProvRun> same = current;
    write(w, same, before_values, after_values);
    return;
  }
  const int src_region = global(r, e.src_region);
  w.src = location(r, e.src_region, e.src_offset(), e.count);
  std::vector<ProvRun>& source = scratch_b_;
  source.clear();
  if (src_region >= 0)
    prov_[static_cast<std::size_t>(src_region)].read(w.src.offset, w.src.count, source);
  const auto incoming =
      moved(source, w.src.offset, src_region, w.dst.offset, w.dst.count, dst_region);
  if (e.kind == EventKind::Copy) {
    w.kind = WriteKind::Copy;
    write(w, incoming, before_values, after_values);
    return;
  }
  w.kind = WriteKind::Reduce;
  // Walk both run lists together; each piece gets the union of its sets.
  std::vector<ProvRun> result;
  std::size_t i = 0, j = 0;
  Elem at = w.dst.offset;
  const Elem end = w.dst.offset + w.dst.count;
  while (at < end && i < current.size() && j < incoming.size()) {
    const Elem stop =
        std::min(current[i].offset + current[i].count, incoming[j].offset + incoming[j].count);
    const SetId set = sets_.unite(current[i].set, incoming[j].set);
    if (!result.empty() && result.back().set == set)
      result.back().count += stop - at;
    else
      result.push_back({at, stop - at, set});
    at = stop;
    if (at >= current[i].offset + current[i].count) ++i;
    if (at >= incoming[j].offset + incoming[j].count) ++j;
  }
  const std::size_t written = write(w, result, before_values, after_values);
  // The message whose landing this reduction consumed, if any: the latest
  // one that covers the reduced range (buffers such as a ring's scratch are
  // reused, so older landings at the same place are stale).
  auto& recent = st.landings;
  for (auto l = recent.rbegin(); l != recent.rend(); ++l) {
    if (l->region == src_region && w.src.offset >= l->offset &&
        std::size_t{w.src.offset} + w.src.count <= std::size_t{l->offset} + l->count) {
      Message& msg = run_.messages[l->message];
      msg.reduced = true;
      msg.reduce_op = e.op;
      msg.reduced_by_write = static_cast<int>(written);
      break;
    }
  }
}

void RecordBuilder::alloc(int r, int local) {
  RankState& st = rank(r);
  ++st.seq;
  run_.regions[static_cast<std::size_t>(global(r, local))].created = st.clock;
}

void RecordBuilder::free(int r, int local) {
  RankState& st = rank(r);
  ++st.seq;
  run_.regions[static_cast<std::size_t>(global(r, local))].freed = st.clock;
}

Run RecordBuilder::finish() {
  // Sends whose receive never completed travel in their send step.
  for (auto& m : run_.messages)
    if (m.step == 0) m.step = m.send_step;
  collect_awaited();
  release_matching_state();
  order_regions();
  Step last = 0;
  for (const auto& m : run_.messages) last = std::max(last, m.step);
  for (const auto& w : run_.writes) last = std::max(last, w.step);
  for (const RankState& st : ranks_) last = std::max(last, st.clock);
  run_.steps = last;
  sort_by_step(last);
  count_totals();
  return std::move(run_);
}

void RecordBuilder::collect_awaited() {
  for (const Receive& rv : receives_) {
    if (!rv.open || rv.message != kNone) continue;  // matched: the message says it
    const std::size_t bytes = std::size_t{rv.to.count} * esize(rv.to.region);
    run_.awaited.push_back({rv.src, rv.rank, rv.tag, rv.stamp + 1, rv.to, bytes});
  }
  std::stable_sort(run_.awaited.begin(), run_.awaited.end(),
                   [](const Awaited& a, const Awaited& b) { return a.dst < b.dst; });
}

void RecordBuilder::release_matching_state() {
  std::vector<detail::Unmatched>().swap(waiting_);
  std::vector<Receive>().swap(receives_);
  std::vector<ProvState>().swap(prov_);
  for (RankState& st : ranks_) std::deque<Landing>().swap(st.landings);
  // The provenance maps were many small blocks; give their pages back before
  // the sort asks for large ones, or the peak is both.
  malloc_trim(0);
}

// Regions rank by rank, in each rank's creation order (a live record made
// them in whatever order the ranks ran).
void RecordBuilder::order_regions() {
  std::vector<int> region_place(run_.regions.size());
  int next = 0;
  for (const RankState& st : ranks_)
    for (int id : st.regions) region_place[static_cast<std::size_t>(id)] = next++;
  bool moved_any = false;
  for (std::size_t i = 0; i < region_place.size(); ++i)
    moved_any |= region_place[i] != static_cast<int>(i);
  if (!moved_any) return;
  auto place = [&](int id) { return id < 0 ? id : region_place[static_cast<std::size_t>(id)]; };
  std::vector<Region> regions(run_.regions.size());
  for (Region& r : run_.regions) {
    r.id = place(r.id);
    regions[static_cast<std::size_t>(r.id)] = std::move(r);
  }
  run_.regions = std::move(regions);
  for (Message& m : run_.messages) {
    m.from.region = place(m.from.region);
    m.to.region = place(m.to.region);
  }
  for (Write& w : run_.writes) {
    w.dst.region = place(w.dst.region);
    w.src.region = place(w.src.region);
  }
  for (Awaited& a : run_.awaited) a.to.region = place(a.to.region);
}

// Writes by (step, rank, seq); messages by (step, src, dst, the sender's
// order); then where each step's begin.
void RecordBuilder::sort_by_step(Step last) {
  auto write_place = places(run_.writes, last, [](const Write& w) {
    return std::uint64_t{static_cast<std::uint32_t>(w.rank)} << 32 | w.seq;
  });
  // id: the sender's own order until now; ranks < 2^11, sends < 2^42.
  auto message_place = places(run_.messages, last, [](const Message& m) {
    return std::uint64_t{static_cast<std::uint32_t>(m.src)} << 53 |
           std::uint64_t{static_cast<std::uint32_t>(m.dst)} << 42 | m.id;
  });
  for (Write& w : run_.writes)
    if (w.message >= 0)
      w.message = static_cast<int>(message_place[static_cast<std::size_t>(w.message)]);
  for (Message& m : run_.messages)
    if (m.reduced_by_write >= 0)
      m.reduced_by_write =
          static_cast<int>(write_place[static_cast<std::size_t>(m.reduced_by_write)]);
  if (run_.values_recorded) {
    std::vector<std::uint32_t> copy = write_place;
    detail::permute_in_place(run_.write_values, copy);
  }
  detail::permute_in_place(run_.writes, write_place);
  detail::permute_in_place(run_.messages, message_place);
  for (std::size_t i = 0; i < run_.messages.size(); ++i)
    run_.messages[i].id = static_cast<std::uint32_t>(i);

  run_.message_begin.assign(last + 2, 0);
  run_.write_begin.assign(last + 2, 0);
  for (const auto& m : run_.messages) ++run_.message_begin[m.step + 1];
  for (const auto& w : run_.writes) ++run_.write_begin[w.step + 1];
  std::partial_sum(run_.message_begin.begin(), run_.message_begin.end(),
                   run_.message_begin.begin());
  std::partial_sum(run_.write_begin.begin(), run_.write_begin.end(), run_.write_begin.begin());
}

void RecordBuilder::count_totals() {
  const auto P = static_cast<std::size_t>(run_.ranks);
  run_.bytes_sent.assign(P, 0);
  run_.bytes_received.assign(P, 0);
  run_.messages_sent.assign(P, 0);
  for (const auto& m : run_.messages) {
    run_.bytes_sent[static_cast<std::size_t>(m.src)] += m.bytes;
    run_.messages_sent[static_cast<std::size_t>(m.src)] += 1;
    if (m.to.count > 0 || m.bytes == 0)
      run_.bytes_received[static_cast<std::size_t>(m.dst)] += m.bytes;
  }
}

// ---- live ------------------------------------------------------------------------

LiveRecord::LiveRecord(int ranks, RunInfo info)
    : builder_(std::make_unique<RecordBuilder>(ranks, std::move(info))) {}
LiveRecord::~LiveRecord() = default;
Run LiveRecord::finish() { return builder_->finish(); }

}  // namespace ringlab::sim
