#include "transport/nccl_rules/rules_state.hpp"

#include <cstring>
#include <sstream>

namespace ringlab {

using rules::Op;
using rules::OpPtr;

NcclRulesWorld::State::State(int n)
    : ranks(static_cast<std::size_t>(n)), channels(static_cast<std::size_t>(n) * n) {}

void NcclRulesWorld::State::launch(int r) {
  rules::RankState& me = rank(r);
  if (me.queued.empty()) return;
  std::vector<OpPtr> group = std::move(me.queued);
  me.queued.clear();
  const std::uint64_t number = ++me.launched;
  for (const OpPtr& op : group) {
    op->group = number;
    rules::Channel& ch = op->is_send ? channel(r, op->peer) : channel(op->peer, r);
    if (op->is_send) {
      op->nth = ++ch.sends_launched;
      ch.sends.push_back(op);
    } else {
      op->nth = ++ch.recvs_launched;
      ch.recvs.push_back(op);
    }
    // In order: the k-th send launched on a channel meets its k-th receive.
    while (!ch.sends.empty() && !ch.recvs.empty()) {
      ch.sends.front()->partner = ch.recvs.front().get();
      ch.recvs.front()->partner = ch.sends.front().get();
      ch.sends.pop_front();
      ch.recvs.pop_front();
    }
  }
  me.groups.push_back(std::move(group));
  progress();
  changed_state();
}

void NcclRulesWorld::State::move(Op& send, Op& recv) {
  if (send.abandoned) {
    if (!recv.abandoned)
      recv.error = "rank " + std::to_string(recv.rank) + " received nothing from rank " +
                   std::to_string(send.rank) + " (" + describe_tag(recv.tag) + "): rank " +
                   std::to_string(send.rank) + " dropped its matched send (" +
                   describe_tag(send.tag) + ") before it finished";
  } else if (!recv.abandoned) {
    if (recv.bytes != send.bytes)
      recv.error = size_mismatch_message(recv.rank, send.rank, recv.tag, recv.bytes, send.bytes) +
                   " (NCCL itself would not notice: the receives and sends between two ranks "
                   "meet in the order they are launched)";
    else if (send.bytes > 0)
      std::memcpy(recv.data, send.data, send.bytes);
  }
  send.done = true;
  recv.done = true;
}

void NcclRulesWorld::State::progress() {
  for (bool moved = true; moved;) {
    moved = false;
    for (rules::RankState& r : ranks) {
      if (r.groups.empty()) continue;
      bool all_done = true;
      for (const OpPtr& op : r.groups.front()) {
        if (!op->done && op->partner && running(*op->partner)) {
          Op& other = *op->partner;
          op->is_send ? move(*op, other) : move(other, *op);
        }
        all_done = all_done && op->done;
      }
      if (!all_done) continue;
      r.groups.pop_front();
      ++r.finished;
      moved = true;
    }
  }
}

bool NcclRulesWorld::State::stuck() const {
  bool anyone = false;
  for (const rules::RankState& r : ranks) {
    if (r.gone) continue;
    if (r.waiting == 0) return false;
    anyone = true;
  }
  return anyone;
}

void NcclRulesWorld::State::leave(int r) {
  rules::RankState& me = rank(r);
  me.gone = true;
  me.queued.clear();  // never launched: nobody can have matched them
  for (auto& group : me.groups)
    for (const OpPtr& op : group) op->abandoned = true;
  progress();  // its sends now fail their receives, its receives free their senders
  changed_state();
}

namespace {
const char* noun(const Op& op) { return op.is_send ? "send" : "receive"; }
const char* counterpart(const Op& op) { return op.is_send ? "receive" : "send"; }
std::string rank_name(int r) { return "rank " + std::to_string(r); }
// 1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, ..., 21st, ...
std::string ordinal(std::uint64_t n) {
  const std::uint64_t last = n % 10, tens = n % 100;
  const char* suffix = tens >= 11 && tens <= 13 ? "th"
                       : last == 1              ? "st"
                       : last == 2              ? "nd"
                       : last == 3              ? "rd"
                                                : "th";
  return std::to_string(n) + suffix;
}
}  // namespace

// Why rank r's running group cannot finish: its first unfinished operation.
std::string NcclRulesWorld::State::why_stuck(int r) {
  const Op* op = nullptr;
  for (const OpPtr& candidate : rank(r).groups.front())
    if (!candidate->done) {
      op = candidate.get();
      break;
    }
  if (!op) return rank_name(r) + " waits";  // cannot happen after progress()
  std::ostringstream out;
  const int p = op->peer;
  out << rank_name(r) << " waits for its " << noun(*op) << " " << (op->is_send ? "to" : "from")
      << " rank " << p << " (" << describe_tag(op->tag) << "), its " << ordinal(op->nth) << " to "
      << (op->is_send ? "rank " : "come from rank ") << p << ": ";
  if (op->partner) {
    const Op& match = *op->partner;
    out << "it met rank " << p << "'s " << counterpart(*op) << " (" << describe_tag(match.tag)
        << "), which rank " << p
        << (rank(p).gone ? " launched but left before it could run"
                         : " launched in a later group than one it is still waiting on (a rank's "
                           "groups run one after another)");
    return out.str();
  }
  const rules::Channel& ch = op->is_send ? channel(r, p) : channel(p, r);
  const std::uint64_t theirs = op->is_send ? ch.recvs_launched : ch.sends_launched;
  std::size_t queued = 0;
  for (const OpPtr& q : rank(p).queued) queued += q->peer == r && q->is_send != op->is_send;
  if (rank(p).gone)
    out << "rank " << p << " has left, having launched " << theirs << " " << counterpart(*op)
        << (theirs == 1 ? "" : "s") << (op->is_send ? " from " : " to ") << rank_name(r);
  else if (queued > 0)
    out << "rank " << p << " has posted the matching " << counterpart(*op)
        << " but not launched it (a rank launches its queue when it waits or tests)";
  else
    out << "rank " << p << " has launched only " << theirs << " " << counterpart(*op)
        << (theirs == 1 ? "" : "s") << (op->is_send ? " from " : " to ") << rank_name(r);
  return out.str();
}

std::string NcclRulesWorld::State::describe_deadlock() {
  std::string text =
      "deadlock under NCCL's rules: every rank still running waits, and none can go on: ";
  bool first = true;
  for (int r = 0; r < size(); ++r) {
    if (rank(r).gone || rank(r).groups.empty()) continue;
    text += (first ? "" : "; ") + why_stuck(r);
    first = false;
  }
  return text +
         ". Between two ranks NCCL matches messages in the order they are launched (tags play "
         "no part), a send moves only once its receive runs, and a rank's launched groups run "
         "one after another: primitives/comm.hpp says how an algorithm keeps to that";
}

}  // namespace ringlab
