// simulate_traffic(): the message-level prediction path (traffic.hpp).
//
// Each rank's transport wraps its fiber's (which matches messages and blocks
// a rank that waits) and keeps the rank's Lamport clock. Every fiber runs on
// one thread, so the ranks share one TrafficLog without locks:
//   - an isend stamps its message with the sender's clock; an irecv notes the
//     receiver's clock; the k-th receive posted on a channel (src, dst, tag)
//     gets the k-th message sent on it, as the mailbox delivers
//     (transport/mailbox.hpp);
//   - completing a receive puts the message in step max(send stamp, receive
//     stamp) + 1 and moves the receiver's clock there; completing a send
//     moves the sender's clock to its stamp + 1;
//   - a reduction adds its bytes to what the rank reduced in its current
//     step. A rank's clock never goes back, so its reductions of one step
//     come together and are summed as they come.
#include "simulator/traffic.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "simulator/closed_form.hpp"
#include "simulator/fiber_world.hpp"
#include "simulator/free_slots.hpp"
#include "simulator/permute.hpp"
#include "simulator/rank_program.hpp"
#include "simulator/unmatched.hpp"

namespace ringlab::sim {

std::span<const TrafficMessage> Traffic::messages_in(Step k) const {
  if (k > steps) return {};
  return {messages.data() + message_begin[k], message_begin[k + 1] - message_begin[k]};
}

namespace {

// What the ranks of one run share.
class TrafficLog {
 public:
  TrafficLog(int ranks, std::uint64_t max_messages)
      : max_messages_(max_messages),
        clock_(static_cast<std::size_t>(ranks), 0),
        reducing_step_(static_cast<std::size_t>(ranks), 0),
        reducing_bytes_(static_cast<std::size_t>(ranks), 0),
        bytes_sent_(static_cast<std::size_t>(ranks), 0),
        messages_sent_(static_cast<std::size_t>(ranks), 0),
        waiting_(static_cast<std::size_t>(ranks)) {}

  // A receive until it completes: its message once matched, its stamp.
  struct Posted {
    std::uint32_t receive = 0;
  };

  Step send(int src, int dst, Tag tag, std::uint64_t bytes) {
    if (messages_.size() >= max_messages_) {
      over_budget_ = true;  // simulate_traffic says so, whichever rank stops here
      throw std::length_error("the message-level path's message limit");
    }
    const Step stamp = clock(src);
    const auto message = static_cast<std::uint32_t>(messages_.size());
    // Until its receive completes, a message is in its send step (a send
    // nobody receives stays there, as in the record).
    messages_.push_back(
        {stamp + 1, static_cast<std::uint32_t>(src), static_cast<std::uint32_t>(dst), bytes});
    bytes_sent_[static_cast<std::size_t>(src)] += bytes;
    ++messages_sent_[static_cast<std::size_t>(src)];
    if (const auto receive = waiting_[static_cast<std::size_t>(dst)].match_send(src, tag, message))
      receives_[*receive].message = message;
    return stamp;
  }
  Posted post_receive(int dst, int src, Tag tag) {
    const std::uint32_t index = detail::take_slot(receives_, free_receives_);
    receives_[index] = {kNone, clock(dst)};
    if (const auto message = waiting_[static_cast<std::size_t>(dst)].match_receive(src, tag, index))
      receives_[index].message = *message;
    return {index};
  }
  void complete_send(int src, Step stamp) { advance(src, stamp + 1); }
  void complete_receive(int dst, const Posted& posted) {
    const Receive r = receives_[posted.receive];
    if (r.message == kNone)
      throw std::logic_error("traffic: a receive completed before its message was sent");
    free_receives_.push_back(posted.receive);
    TrafficMessage& m = messages_[r.message];
    const Step step = std::max(m.step - 1, r.stamp) + 1;  // m.step is still the send step
    m.step = step;
    advance(dst, step);
  }
  void reduced(int rank, std::uint64_t bytes) {
    const auto r = static_cast<std::size_t>(rank);
    if (reducing_step_[r] != clock_[r]) {
      flush_reduced(r);
      reducing_step_[r] = clock_[r];
    }
    reducing_bytes_[r] += bytes;
  }

  bool over_budget() const { return over_budget_; }

  Traffic finish(Traffic traffic) {
    for (std::size_t r = 0; r < clock_.size(); ++r) flush_reduced(r);
    Step last = 0;
    for (const TrafficMessage& m : messages_) last = std::max(last, m.step);
    if (!most_reduced_.empty()) last = std::max(last, static_cast<Step>(most_reduced_.size() - 1));
    traffic.steps = last;
    most_reduced_.resize(static_cast<std::size_t>(last) + 1, 0);
    std::vector<std::size_t> begin;
    std::vector<std::uint32_t> place = detail::places_by_step(messages_, last, begin);
    detail::permute_in_place(messages_, place);
    traffic.messages = std::move(messages_);
    traffic.message_begin = std::move(begin);
    traffic.most_reduced = std::move(most_reduced_);
    traffic.bytes_sent = std::move(bytes_sent_);
    traffic.messages_sent = std::move(messages_sent_);
    return traffic;
  }

 private:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  struct Receive {
    std::uint32_t message = kNone;
    Step stamp = 0;
  };

  Step clock(int rank) const { return clock_[static_cast<std::size_t>(rank)]; }
  void advance(int rank, Step to) {
    Step& c = clock_[static_cast<std::size_t>(rank)];
    c = std::max(c, to);
  }
  void flush_reduced(std::size_t r) {
    if (reducing_bytes_[r] == 0) return;
    const auto step = static_cast<std::size_t>(reducing_step_[r]);
    if (most_reduced_.size() <= step) most_reduced_.resize(step + 1, 0);
    most_reduced_[step] = std::max(most_reduced_[step], reducing_bytes_[r]);
    reducing_bytes_[r] = 0;
  }

  std::uint64_t max_messages_;
  std::vector<Step> clock_;
  std::vector<Step> reducing_step_;
  std::vector<std::uint64_t> reducing_bytes_;
  std::vector<std::uint64_t> bytes_sent_, messages_sent_;
  std::vector<std::uint64_t> most_reduced_;
  std::vector<TrafficMessage> messages_;
  std::vector<Receive> receives_;
  std::vector<std::uint32_t> free_receives_;
  std::vector<detail::Unmatched> waiting_;  // per receiving rank
  bool over_budget_ = false;
};

// Forwards to the fiber's request and tells the log once it completed.
class TrafficRequest final : public Request {
 public:
  TrafficRequest(std::unique_ptr<Request> inner, TrafficLog& log, int rank, bool is_recv,
                 Step stamp, TrafficLog::Posted posted)
      : inner_(std::move(inner)),
        log_(log),
        rank_(rank),
        is_recv_(is_recv),
        stamp_(stamp),
        posted_(posted) {}
  void wait(Duration timeout) override {
    if (done_) return;
    inner_->wait(timeout);
    complete();
  }
  bool test() override {
    if (done_) return true;
    if (!inner_->test()) return false;
    complete();
    return true;
  }

 private:
  void complete() {
    done_ = true;
    if (is_recv_)
      log_.complete_receive(rank_, posted_);
    else
      log_.complete_send(rank_, stamp_);
  }
  std::unique_ptr<Request> inner_;
  TrafficLog& log_;
  int rank_;
  bool is_recv_;
  Step stamp_;
  TrafficLog::Posted posted_;
  bool done_ = false;
};

class TrafficTransport final : public Transport {
 public:
  TrafficTransport(Transport& inner, TrafficLog& log) : inner_(inner), log_(log) {
    set_timeout(inner.timeout());
  }
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  std::string_view name() const override { return inner_.name(); }
  std::unique_ptr<Request> isend(int dst, Tag tag, ConstBytes data) override {
    check_peer(dst, "destination rank");
    auto request = inner_.isend(dst, tag, data);
    const Step stamp = log_.send(rank(), dst, tag, data.size());
    return std::make_unique<TrafficRequest>(std::move(request), log_, rank(), false, stamp,
                                            TrafficLog::Posted{});
  }
  std::unique_ptr<Request> irecv(int src, Tag tag, MutBytes data) override {
    check_peer(src, "source rank");
    const TrafficLog::Posted posted = log_.post_receive(rank(), src, tag);
    auto request = inner_.irecv(src, tag, data);
    return std::make_unique<TrafficRequest>(std::move(request), log_, rank(), true, 0, posted);
  }
  Buffer allocate(std::size_t bytes) override { return inner_.allocate(bytes); }
  void copy(MutBytes, ConstBytes) override {}
  void reduce(DType, ReduceOp, MutBytes acc, ConstBytes) override {
    if (!acc.empty()) log_.reduced(rank(), acc.size());
  }
  void divide(DType, MutBytes, int) override {}

 private:
  Transport& inner_;
  TrafficLog& log_;
};

std::string what_runs(const Scenario& s, const std::string& algorithm) {
  return std::string(collective_name(s.collective)) + " " + algorithm + " on " +
         std::to_string(s.ranks) + " ranks";
}

// Refuses, before any rank starts, what the message-level path cannot take
// (traffic.hpp says why).
void check_traffic_limits(const Scenario& s, const std::string& algorithm,
                          std::uint64_t max_messages) {
  if (s.ranks > kMaxTrafficRanks)
    throw std::invalid_argument(
        "ranks = " + std::to_string(s.ranks) + ": the message-level prediction path runs 1 to " +
        std::to_string(kMaxTrafficRanks) +
        " virtual ranks (the algorithms keep P blocks on each of P ranks: P^2 x 16 bytes, 1 GiB "
        "at " +
        std::to_string(kMaxTrafficRanks) + " ranks); a closed form answers up to " +
        std::to_string(kMaxPredictionRanks) +
        " ranks on the fully connected topology (--path closed)");
  const std::optional<Schedule> form = closed_form(s);
  if (form && form->messages > max_messages)
    throw std::invalid_argument(
        what_runs(s, algorithm) + " sends " + std::to_string(form->messages) +
        " messages: the message-level prediction path keeps every message and takes up to " +
        std::to_string(max_messages) +
        " (kMaxTrafficMessages); use fewer ranks, or the closed form on the fully connected "
        "topology (--path closed)");
}

}  // namespace

std::string check_traffic(const Scenario& scenario, std::uint64_t max_messages) {
  const std::string algorithm =
      detail::validate(scenario, kMaxPredictionRanks, "the message-level prediction path");
  check_reported_bytes(scenario);
  check_traffic_limits(scenario, algorithm, max_messages);
  return algorithm;
}

Traffic simulate_traffic(const Scenario& scenario, std::uint64_t max_messages) {
  Scenario resolved = scenario;
  resolved.algorithm = check_traffic(scenario, max_messages);
  TrafficLog log(scenario.ranks, max_messages);
  FiberWorld world(scenario.ranks, /*move_data=*/false, /*share_memory=*/true);
  try {
    world.run([&](Transport& inner) {
      TrafficTransport transport(inner, log);
      detail::RankProgram(resolved, inner, transport, nullptr, false).run();
    });
  } catch (const std::exception&) {
    if (!log.over_budget()) throw;
    throw std::invalid_argument(
        what_runs(scenario, resolved.algorithm) + " sends more than " +
        std::to_string(max_messages) +
        " messages, the most the message-level prediction path keeps (kMaxTrafficMessages); "
        "use fewer ranks or a smaller size");
  }
  Traffic traffic;
  traffic.operation = std::string(collective_name(scenario.collective));
  traffic.algorithm = resolved.algorithm;
  traffic.ranks = scenario.ranks;
  traffic.count = scenario.count;
  traffic.dtype = scenario.dtype;
  return log.finish(std::move(traffic));
}

}  // namespace ringlab::sim
