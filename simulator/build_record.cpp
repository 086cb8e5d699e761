#include "simulator/build_record.hpp"

#include <algorithm>
#include <deque>
#include <numeric>
#include <stdexcept>

#include "simulator/provenance.hpp"

namespace ringlab::sim {

namespace {

// ---- matching -----------------------------------------------------------------

constexpr std::int64_t kUnmatched = -1;
// request table entries: (message index << 1) | is_send
std::int64_t request_entry(std::size_t message, bool is_send) {
  return static_cast<std::int64_t>(message << 1) | (is_send ? 1 : 0);
}

struct Landing {
  int region;
  std::size_t offset, count;
  std::size_t message;
};

// Moves items[i] to position to[i], following cycles (no second array of items).
template <typename T> void permute_in_place(std::vector<T>& items, std::vector<std::uint32_t>& to) {
  for (std::size_t i = 0; i < items.size(); ++i) {
    while (to[i] != i) {
      const std::uint32_t j = to[i];
      std::swap(items[i], items[j]);
      std::swap(to[i], to[j]);
    }
  }
}

class Builder {
 public:
  Builder(std::vector<RankLog>& logs, RunInfo& info, Run& run)
      : logs_(logs), info_(info), run_(run), sets_(run.rank_sets) {}

  void build() {
    const int P = static_cast<int>(logs_.size());
    run_.operation = info_.operation;
    run_.algorithm = info_.algorithm;
    run_.ranks = P;
    run_.roles = info_.roles;
    if (run_.roles.empty())
      for (int r = 0; r < P; ++r) run_.roles.push_back("rank " + std::to_string(r));
    run_.dtype = info_.dtype;
    run_.op = info_.op;
    run_.root = info_.root;
    run_.count = info_.count;
    run_.values_recorded = info_.values_recorded;
    run_.values_note = info_.values_note;
    make_regions();
    match();
    std::size_t writes = 0;
    for (const RankLog& log : logs_) writes += log.events.size();
    run_.writes.reserve(writes / 2);
    simulate();
    // The logs are not needed any more: free them before sorting.
    for (RankLog& log : logs_) log = RankLog{};
    finish();
  }

 private:
  // Global region id of rank r's local region id.
  int global(int rank, int local) const {
    return local < 0 ? -1 : region_base_[static_cast<std::size_t>(rank)] + local;
  }
  std::size_t esize(int region) const {
    return region < 0 ? 1 : element_size(run_.regions[static_cast<std::size_t>(region)].dtype);
  }

  void make_regions() {
    const int P = static_cast<int>(logs_.size());
    std::size_t values_base = 0;
    for (int r = 0; r < P; ++r) {
      RankLog& log = logs_[static_cast<std::size_t>(r)];
      region_base_.push_back(static_cast<int>(run_.regions.size()));
      value_base_.push_back(values_base);
      values_base += log.values.size();
      for (const LoggedRegion& lr : log.regions) {
        Region region;
        region.id = static_cast<int>(run_.regions.size());
        region.rank = r;
        region.name = lr.name;
        region.kind = lr.kind;
        region.dtype = lr.dtype;
        region.count = lr.count;
        const std::size_t in_first = std::min(lr.input_offset, region.count);
        const std::size_t in_last = std::min(lr.input_offset + lr.input_count, region.count);
        auto& initial = region.initial_provenance;
        if (in_first > 0) initial.push_back({0, in_first, kNoInputs});
        if (in_last > in_first) initial.push_back({in_first, in_last - in_first, sets_.single(r)});
        if (region.count > in_last) initial.push_back({in_last, region.count - in_last, kNoInputs});
        region.initial_values =
            lr.initial_values == kNoValues ? 0 : lr.initial_values + value_base_.back();
        prov_.emplace_back(initial);
        run_.regions.push_back(std::move(region));
      }
    }
    if (run_.values_recorded) {
      run_.values.reserve(values_base);
      for (auto& log : logs_) {
        run_.values.insert(run_.values.end(), log.values.begin(), log.values.end());
        std::vector<std::byte>().swap(log.values);
      }
    }
  }

  // The k-th send on (s, d, t) matches the k-th receive on it: sort sends
  // and receives by channel (stable, so program order stays within one) and
  // pair them off.
  void match() {
    const int P = static_cast<int>(logs_.size());
    requests_.resize(static_cast<std::size_t>(P));
    struct Post {
      int src, dst;
      Tag tag;
      std::uint32_t request;  // in the receiver's table (receives only)
      std::uint32_t message;  // sends: message index
      std::uint64_t event;    // receives: event index at dst
    };
    std::vector<Post> sends, recvs;
    std::size_t total_sends = 0;
    for (const RankLog& log : logs_)
      for (const Event& e : log.events) total_sends += e.kind == EventKind::PostSend;
    run_.messages.reserve(total_sends);
    sends.reserve(total_sends);
    recvs.reserve(total_sends);
    for (int r = 0; r < P; ++r) {
      const RankLog& log = logs_[static_cast<std::size_t>(r)];
      auto& requests = requests_[static_cast<std::size_t>(r)];
      for (std::size_t i = 0; i < log.events.size(); ++i) {
        const Event& e = log.events[i];
        if (e.kind != EventKind::PostSend && e.kind != EventKind::PostRecv) continue;
        if (requests.size() <= e.request) requests.resize(e.request + 1, kUnmatched);
        if (e.kind == EventKind::PostRecv) {
          recvs.push_back({e.peer, r, e.tag(), e.request, 0, i});
          continue;
        }
        Message m;
        m.id = static_cast<std::uint32_t>(run_.messages.size());
        m.src = r;
        m.dst = e.peer;
        m.tag = e.tag();
        m.from = {global(r, e.region), e.offset, e.count};
        m.bytes = e.count * esize(m.from.region);
        requests[e.request] = request_entry(run_.messages.size(), true);
        sends.push_back({r, e.peer, e.tag(), 0, m.id, 0});
        run_.messages.push_back(m);
      }
    }
    auto by_channel = [](const Post& a, const Post& b) {
      return std::tie(a.src, a.dst, a.tag) < std::tie(b.src, b.dst, b.tag);
    };
    std::stable_sort(sends.begin(), sends.end(), by_channel);
    std::stable_sort(recvs.begin(), recvs.end(), by_channel);
    const std::size_t M = run_.messages.size();
    send_stamp_.assign(M, 0);
    recv_stamp_.assign(M, 0);
    recv_post_event_.assign(M, kNoValues);
    sent_.assign(M, false);
    std::size_t i = 0;
    for (const Post& recv : recvs) {
      while (i < sends.size() && by_channel(sends[i], recv)) ++i;
      if (i == sends.size() || by_channel(recv, sends[i])) continue;  // no send left on it
      const std::uint32_t m = sends[i++].message;
      const auto dst = static_cast<std::size_t>(recv.dst);
      requests_[dst][recv.request] = request_entry(m, false);
      const Event& e = logs_[dst].events[recv.event];
      run_.messages[m].to = {global(recv.dst, e.region), e.offset, e.count};
      recv_post_event_[m] = recv.event;
    }
  }

  // Runs every rank's log in program order, a rank pausing at a receive
  // whose send its peer has not reached yet (the run completed, so this ends).
  void simulate() {
    const int P = static_cast<int>(logs_.size());
    clock_.assign(static_cast<std::size_t>(P), 0);
    pc_.assign(static_cast<std::size_t>(P), 0);
    blocked_on_.assign(static_cast<std::size_t>(P), kNoValues);
    landings_.resize(static_cast<std::size_t>(P));
    std::deque<int> ready;
    for (int r = 0; r < P; ++r) ready.push_back(r);
    while (!ready.empty()) {
      const int r = ready.front();
      ready.pop_front();
      run_rank(r, ready);
    }
    for (int r = 0; r < P; ++r)
      if (pc_[static_cast<std::size_t>(r)] < logs_[static_cast<std::size_t>(r)].events.size())
        throw std::logic_error("record: rank " + std::to_string(r) +
                               " completed a receive that no logged send matches");
  }

  void run_rank(int r, std::deque<int>& ready) {
    const auto ur = static_cast<std::size_t>(r);
    const RankLog& log = logs_[ur];
    auto& requests = requests_[ur];
    Step& clock = clock_[ur];
    std::size_t& pc = pc_[ur];
    blocked_on_[ur] = kNoValues;
    for (; pc < log.events.size(); ++pc) {
      const Event& e = log.events[pc];
      switch (e.kind) {
        case EventKind::PostSend: {
          const auto m = static_cast<std::size_t>(requests[e.request] >> 1);
          Message& msg = run_.messages[m];
          send_stamp_[m] = clock;
          msg.send_step = clock + 1;
          msg.payload = read_runs(msg.from);
          sent_[m] = true;
          const auto dst = static_cast<std::size_t>(msg.dst);
          if (blocked_on_[dst] == m) {
            blocked_on_[dst] = kNoValues;
            ready.push_back(msg.dst);
          }
          break;
        }
        case EventKind::PostRecv: {
          const std::int64_t entry = requests[e.request];
          if (entry != kUnmatched) recv_stamp_[static_cast<std::size_t>(entry >> 1)] = clock;
          break;
        }
        case EventKind::Complete: {
          const std::int64_t entry = e.request < requests.size() ? requests[e.request] : kUnmatched;
          if (entry == kUnmatched) {
            pc = log.events.size() + 1;  // reported by simulate()
            return;
          }
          const auto m = static_cast<std::size_t>(entry >> 1);
          if (entry & 1) {
            clock = std::max(clock, send_stamp_[m] + 1);
            break;
          }
          if (!sent_[m]) {
            blocked_on_[ur] = m;
            return;
          }
          const Step step = std::max(send_stamp_[m], recv_stamp_[m]) + 1;
          clock = std::max(clock, step);
          run_.messages[m].step = step;
          receive(r, m, pc);
          break;
        }
        case EventKind::Copy:
        case EventKind::Reduce:
        case EventKind::Divide: local_write(r, e, pc); break;
        case EventKind::Alloc:
          run_.regions[static_cast<std::size_t>(global(r, e.region))].created = clock;
          break;
        case EventKind::Free:
          run_.regions[static_cast<std::size_t>(global(r, e.region))].freed = clock;
          break;
      }
    }
  }

  RunSpan read_runs(const Location& where) {
    RunSpan span{run_.prov_runs.size(), 0};
    if (where.region < 0) return span;
    prov_[static_cast<std::size_t>(where.region)].read(where.offset, where.count, run_.prov_runs);
    span.count = static_cast<std::uint32_t>(run_.prov_runs.size() - span.begin);
    return span;
  }

  // Runs of `source` (offsets in src_region) moved to start at dst_offset in
  // dst_region, converting units when the two regions' dtypes differ.
  std::vector<ProvRun> moved(std::span<const ProvRun> source, std::size_t src_offset, int src_region,
                             std::size_t dst_offset, std::size_t dst_count, int dst_region) const {
    std::vector<ProvRun> out;
    const std::size_t es = esize(src_region), ed = esize(dst_region);
    for (const ProvRun& run : source) {
      const std::size_t first = (run.offset - src_offset) * es / ed;
      const std::size_t last = std::min(dst_count, ((run.offset - src_offset + run.count) * es + ed - 1) / ed);
      if (first < last) out.push_back({dst_offset + first, last - first, run.set});
    }
    if (out.empty() && dst_count > 0) out.push_back({dst_offset, dst_count, kNoInputs});
    return out;
  }

  std::size_t values_at(int rank, std::size_t local_offset) const {
    return local_offset == kNoValues ? 0 : local_offset + value_base_[static_cast<std::size_t>(rank)];
  }
  std::pair<std::size_t, std::size_t> event_values(int rank, std::size_t index) const {
    const RankLog& log = logs_[static_cast<std::size_t>(rank)];
    if (!run_.values_recorded || index >= log.event_values.size()) return {kNoValues, kNoValues};
    return log.event_values[index];
  }

  // Records a write of `after` over dst; returns its index.
  std::size_t write(Write w, std::span<const ProvRun> after) {
    auto& state = prov_[static_cast<std::size_t>(w.dst.region)];
    w.before = {run_.prov_runs.size(), 0};
    state.read(w.dst.offset, w.dst.count, run_.prov_runs);
    w.before.count = static_cast<std::uint32_t>(run_.prov_runs.size() - w.before.begin);
    w.after = {run_.prov_runs.size(), static_cast<std::uint32_t>(after.size())};
    run_.prov_runs.insert(run_.prov_runs.end(), after.begin(), after.end());
    state.assign(w.dst.offset, w.dst.count, after);
    run_.writes.push_back(w);
    return run_.writes.size() - 1;
  }

  void receive(int r, std::size_t m, std::size_t complete_event) {
    Message& msg = run_.messages[m];
    if (msg.to.region < 0 || msg.to.count == 0) return;
    Write w;
    w.step = msg.step;
    w.rank = r;
    w.seq = static_cast<std::uint32_t>(complete_event);
    w.kind = WriteKind::Receive;
    w.dst = msg.to;
    w.src = msg.from;
    w.message = static_cast<int>(m);
    const auto before = event_values(r, recv_post_event_[m]).first;
    const auto after = event_values(r, complete_event).second;
    w.values_before = values_at(r, before);
    w.values_after = values_at(r, after);
    // Copy the payload's runs: write() appends to the arena they live in.
    const std::vector<ProvRun> payload(run_.runs(msg.payload).begin(), run_.runs(msg.payload).end());
    write(w, moved(payload, msg.from.offset, msg.from.region, msg.to.offset, msg.to.count,
                   msg.to.region));
    auto& recent = landings_[static_cast<std::size_t>(r)];
    if (recent.size() >= 8) recent.pop_front();
    recent.push_back({msg.to.region, msg.to.offset, msg.to.count, m});
  }

  void local_write(int r, const Event& e, std::size_t index) {
    const int dst_region = global(r, e.region);
    if (dst_region < 0 || e.count == 0) return;
    Write w;
    w.step = clock_[static_cast<std::size_t>(r)];
    w.rank = r;
    w.seq = static_cast<std::uint32_t>(index);
    w.dst = {dst_region, e.offset, e.count};
    w.op = e.op;
    const auto [before, after] = event_values(r, index);
    w.values_before = values_at(r, before);
    w.values_after = values_at(r, after);
    auto& state = prov_[static_cast<std::size_t>(dst_region)];
    std::vector<ProvRun> current, result;
    state.read(e.offset, e.count, current);
    if (e.kind == EventKind::Divide) {
      w.kind = WriteKind::Divide;
      write(w, current);
      return;
    }
    const int src_region = global(r, e.src_region);
    w.src = {src_region, e.src_offset(), e.count};
    std::vector<ProvRun> source;
    if (src_region >= 0)
      prov_[static_cast<std::size_t>(src_region)].read(e.src_offset(), e.count, source);
    const auto incoming = moved(source, e.src_offset(), src_region, e.offset, e.count, dst_region);
    if (e.kind == EventKind::Copy) {
      w.kind = WriteKind::Copy;
      write(w, incoming);
      return;
    }
    w.kind = WriteKind::Reduce;
    // Walk both run lists together; each piece gets the union of its sets.
    std::size_t i = 0, j = 0, at = e.offset;
    const std::size_t end = e.offset + e.count;
    while (at < end && i < current.size() && j < incoming.size()) {
      const std::size_t stop = std::min(current[i].offset + current[i].count,
                                        incoming[j].offset + incoming[j].count);
      const SetId set = sets_.unite(current[i].set, incoming[j].set);
      if (!result.empty() && result.back().set == set)
        result.back().count += stop - at;
      else
        result.push_back({at, stop - at, set});
      at = stop;
      if (at >= current[i].offset + current[i].count) ++i;
      if (at >= incoming[j].offset + incoming[j].count) ++j;
    }
    const std::size_t written = write(w, result);
    // The message whose landing this reduction consumed, if any: the latest
    // one that covers the reduced range (buffers such as a ring's scratch are
    // reused, so older landings at the same place are stale).
    auto& recent = landings_[static_cast<std::size_t>(r)];
    for (auto l = recent.rbegin(); l != recent.rend(); ++l) {
      if (l->region == src_region && e.src_offset() >= l->offset &&
          e.src_offset() + e.count <= l->offset + l->count) {
        Message& msg = run_.messages[l->message];
        msg.reduced = true;
        msg.reduce_op = e.op;
        msg.reduced_by_write = static_cast<int>(written);
        break;
      }
    }
  }

  void finish() {
    // Sends whose receive never completed travel in their send step.
    for (auto& m : run_.messages)
      if (m.step == 0) m.step = m.send_step;
    // Writes by (step, rank, seq); messages by (step, src, dst, tag, send order).
    std::vector<std::uint32_t> write_order(run_.writes.size());
    std::iota(write_order.begin(), write_order.end(), 0u);
    std::sort(write_order.begin(), write_order.end(), [&](std::uint32_t a, std::uint32_t b) {
      const Write &x = run_.writes[a], &y = run_.writes[b];
      return std::tie(x.step, x.rank, x.seq) < std::tie(y.step, y.rank, y.seq);
    });
    std::vector<std::uint32_t> message_order(run_.messages.size());
    std::iota(message_order.begin(), message_order.end(), 0u);
    std::sort(message_order.begin(), message_order.end(), [&](std::uint32_t a, std::uint32_t b) {
      const Message &x = run_.messages[a], &y = run_.messages[b];
      return std::tie(x.step, x.src, x.dst, x.tag, x.id) < std::tie(y.step, y.src, y.dst, y.tag, y.id);
    });
    std::vector<std::uint32_t>().swap(send_stamp_);
    std::vector<std::uint32_t>().swap(recv_stamp_);
    std::vector<std::size_t>().swap(recv_post_event_);
    std::vector<std::vector<std::int64_t>>().swap(requests_);
    std::vector<std::uint32_t> write_index(run_.writes.size()), message_index(run_.messages.size());
    for (std::size_t i = 0; i < write_order.size(); ++i) write_index[write_order[i]] = static_cast<std::uint32_t>(i);
    for (std::size_t i = 0; i < message_order.size(); ++i)
      message_index[message_order[i]] = static_cast<std::uint32_t>(i);
    for (Write& w : run_.writes)
      if (w.message >= 0) w.message = static_cast<int>(message_index[static_cast<std::size_t>(w.message)]);
    for (Message& m : run_.messages)
      if (m.reduced_by_write >= 0)
        m.reduced_by_write = static_cast<int>(write_index[static_cast<std::size_t>(m.reduced_by_write)]);
    permute_in_place(run_.writes, write_index);
    permute_in_place(run_.messages, message_index);
    for (std::size_t i = 0; i < run_.messages.size(); ++i) run_.messages[i].id = static_cast<std::uint32_t>(i);

    Step last = 0;
    for (const auto& m : run_.messages) last = std::max(last, m.step);
    for (const auto& w : run_.writes) last = std::max(last, w.step);
    for (const Step c : clock_) last = std::max(last, c);
    run_.steps = last;
    run_.message_begin.assign(last + 2, 0);
    run_.write_begin.assign(last + 2, 0);
    for (const auto& m : run_.messages) ++run_.message_begin[m.step + 1];
    for (const auto& w : run_.writes) ++run_.write_begin[w.step + 1];
    std::partial_sum(run_.message_begin.begin(), run_.message_begin.end(), run_.message_begin.begin());
    std::partial_sum(run_.write_begin.begin(), run_.write_begin.end(), run_.write_begin.begin());

    const auto P = static_cast<std::size_t>(run_.ranks);
    run_.bytes_sent.assign(P, 0);
    run_.bytes_received.assign(P, 0);
    run_.messages_sent.assign(P, 0);
    for (const auto& m : run_.messages) {
      run_.bytes_sent[static_cast<std::size_t>(m.src)] += m.bytes;
      run_.messages_sent[static_cast<std::size_t>(m.src)] += 1;
      if (m.to.count > 0 || m.bytes == 0) run_.bytes_received[static_cast<std::size_t>(m.dst)] += m.bytes;
    }
  }

  std::vector<RankLog>& logs_;
  RunInfo& info_;
  Run& run_;
  SetTable sets_;
  std::vector<int> region_base_;
  std::vector<std::size_t> value_base_;
  std::vector<ProvState> prov_;
  std::vector<std::vector<std::int64_t>> requests_;
  std::vector<Step> send_stamp_, recv_stamp_;
  std::vector<std::size_t> recv_post_event_;
  std::vector<bool> sent_;
  std::vector<Step> clock_;
  std::vector<std::size_t> pc_, blocked_on_;
  std::vector<std::deque<Landing>> landings_;
};

}  // namespace

Run build_run(std::vector<RankLog> logs, RunInfo info) {
  Run run;
  Builder(logs, info, run).build();
  return run;
}

}  // namespace ringlab::sim
