// build_run (build_record.hpp): a Run from each rank's RankLog, after the run.
#include <deque>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "simulator/build_record.hpp"
#include "simulator/record_builder.hpp"

namespace ringlab::sim {

namespace {

// build_run's replay: each rank's log in program order; a rank waits at a
// receive whose send its peer has not reached yet (the run completed, so
// this ends).
class LogReplay {
 public:
  LogReplay(const std::vector<RankLog>& logs, RecordBuilder& builder, bool values,
            std::vector<std::vector<Step>>* event_steps)
      : logs_(logs), b_(builder), values_(values), ranks_(logs.size()), steps_(event_steps) {
    if (steps_) {
      steps_->assign(logs.size(), {});
      for (std::size_t r = 0; r < logs.size(); ++r) (*steps_)[r].assign(logs[r].events.size(), 0);
    }
  }

  // Regions first, each rank's in creation order, as they were last named.
  void add_regions() {
    for (std::size_t r = 0; r < logs_.size(); ++r) {
      const RankLog& log = logs_[r];
      for (std::size_t i = 0; i < log.regions.size(); ++i) {
        const LoggedRegion& lr = log.regions[i];
        b_.add_region(static_cast<int>(r), static_cast<int>(i), lr,
                      bytes_at(log, lr.initial_values, lr.count * element_size(lr.dtype)));
      }
    }
  }

  void replay() {
    for (std::size_t r = 0; r < logs_.size(); ++r) ready_.push_back(static_cast<int>(r));
    while (!ready_.empty()) {
      const int r = ready_.front();
      ready_.pop_front();
      run_rank(r);
    }
    for (std::size_t r = 0; r < logs_.size(); ++r)
      if (ranks_[r].pc < logs_[r].events.size())
        throw std::logic_error("record: rank " + std::to_string(r) +
                               " completed a receive that no logged send matches");
  }

 private:
  static constexpr std::uint64_t kUnposted = ~std::uint64_t{0};
  struct RankReplay {
    std::size_t pc = 0;
    std::vector<std::uint64_t> requests;     // request id -> (handle << 1) | is_recv
    std::vector<std::size_t> request_bytes;  // receives: bytes of the range (values)
    std::uint32_t blocked_on = RecordBuilder::kNone;
  };

  ConstBytes bytes_at(const RankLog& log, std::size_t offset, std::size_t n) const {
    if (!values_ || offset == kNoValues || offset + n > log.values.size()) return {};
    return {log.values.data() + offset, n};
  }
  static std::size_t range_bytes(const RankLog& log, int region, std::uint64_t count) {
    return region < 0 ? count
                      : count * element_size(log.regions[static_cast<std::size_t>(region)].dtype);
  }
  std::pair<std::size_t, std::size_t> event_values(const RankLog& log, std::size_t i) const {
    return values_ && i < log.event_values.size() ? log.event_values[i]
                                                  : std::pair{kNoValues, kNoValues};
  }

  // Runs rank r until its log ends or it waits for a send not replayed yet.
  void run_rank(int r) {
    const RankLog& log = logs_[static_cast<std::size_t>(r)];
    RankReplay& me = ranks_[static_cast<std::size_t>(r)];
    me.blocked_on = RecordBuilder::kNone;
    for (; me.pc < log.events.size(); ++me.pc) {
      const Event& e = log.events[me.pc];
      if ((e.kind == EventKind::PostSend || e.kind == EventKind::PostRecv) &&
          me.requests.size() <= e.request) {
        me.requests.resize(e.request + 1, kUnposted);
        me.request_bytes.resize(e.request + 1, 0);
      }
      if (!apply(r, log, me, e)) return;
      if (steps_) (*steps_)[static_cast<std::size_t>(r)][me.pc] = b_.clock(r);
    }
  }

  // One event of rank r; false where it waits for a send not replayed yet.
  bool apply(int r, const RankLog& log, RankReplay& me, const Event& e) {
    switch (e.kind) {
      case EventKind::PostSend:
        post_send(r, me, e);
        return true;
      case EventKind::PostRecv: {
        const std::size_t n = range_bytes(log, e.region, e.count);
        const std::uint32_t h = b_.post_recv(r, e.peer, e.tag(), e.region, e.offset, e.count,
                                             bytes_at(log, event_values(log, me.pc).first, n));
        me.requests[e.request] = std::uint64_t{h} << 1 | 1;
        me.request_bytes[e.request] = n;
        return true;
      }
      case EventKind::Complete:
        return complete(r, log, me, e);
      case EventKind::Copy:
      case EventKind::Reduce:
      case EventKind::Divide: {
        const std::size_t n = range_bytes(log, e.region, e.count);
        const auto [before, after] = event_values(log, me.pc);
        b_.local_write(r, e, bytes_at(log, before, n), bytes_at(log, after, n));
        return true;
      }
      case EventKind::Alloc:
        b_.alloc(r, e.region);
        return true;
      case EventKind::Free:
        b_.free(r, e.region);
        return true;
    }
    return true;
  }

  // A send; the rank whose receive it completes goes on.
  void post_send(int r, RankReplay& me, const Event& e) {
    const std::uint32_t m = b_.post_send(r, e.peer, e.tag(), e.region, e.offset, e.count);
    me.requests[e.request] = std::uint64_t{m} << 1;
    const std::uint32_t matched = b_.matched_receive();
    if (matched == RecordBuilder::kNone) return;
    RankReplay& waiter = ranks_[static_cast<std::size_t>(b_.receiver(matched))];
    if (waiter.blocked_on == matched) {
      waiter.blocked_on = RecordBuilder::kNone;
      ready_.push_back(b_.receiver(matched));
    }
  }

  bool complete(int r, const RankLog& log, RankReplay& me, const Event& e) {
    if (e.failed) {  // the wait threw: nothing arrived (a real run that failed)
      b_.nothing(r);
      return true;
    }
    const std::uint64_t entry = e.request < me.requests.size() ? me.requests[e.request] : kUnposted;
    if (entry == kUnposted)
      throw std::logic_error("record: rank " + std::to_string(r) +
                             " completed a request it never posted");
    const auto h = static_cast<std::uint32_t>(entry >> 1);
    if (!(entry & 1)) {
      b_.complete_send(r, h);
      return true;
    }
    if (!b_.received(h)) {
      me.blocked_on = h;  // resumed when the send is replayed
      return false;
    }
    b_.complete_recv(r, h,
                     bytes_at(log, event_values(log, me.pc).second, me.request_bytes[e.request]));
    return true;
  }

  const std::vector<RankLog>& logs_;
  RecordBuilder& b_;
  bool values_;
  std::vector<RankReplay> ranks_;
  std::deque<int> ready_;
  std::vector<std::vector<Step>>* steps_;
};

}  // namespace

Run build_run(std::vector<RankLog> logs, RunInfo info, std::vector<std::vector<Step>>* event_steps) {
  const bool values = info.values_recorded;
  RecordBuilder b(static_cast<int>(logs.size()), std::move(info));
  {
    LogReplay replay(logs, b, values, event_steps);
    replay.add_regions();
    replay.replay();
  }
  logs.clear();
  return b.finish();
}

}  // namespace ringlab::sim
