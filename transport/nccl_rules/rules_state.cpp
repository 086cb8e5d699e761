#include "transport/nccl_rules/rules_state.hpp"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <thread>

namespace ringlab {

using rules::Op;
using rules::OpPtr;

NcclRulesWorld::State::State(int n) : ranks(static_cast<std::size_t>(n)), present(n) {
  const int processors = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  yields = n > 16 * processors ? 8 : 0;
}

void NcclRulesWorld::State::launch(int r) {
  rules::RankState& me = rank(r);
  if (me.queued.empty()) return;
  std::vector<OpPtr> group = std::move(me.queued);
  me.queued.clear();
  const std::uint64_t number = ++me.launched;
  for (const OpPtr& op : group) {
    op->group = number;
    match(op);
  }
  me.groups.push_back(std::move(group));
  ++generation;
  progress_from(r);
}

void NcclRulesWorld::State::match(const OpPtr& op) {
  // In order: the k-th send launched from one rank to another meets the
  // k-th receive the other launched from it (the receiver's matcher).
  if (op->is_send) {
    op->nth = ++rank(op->rank).sends_to[op->peer];
    rules::RankState& receiver = rank(op->peer);
    if (auto recv = receiver.unmatched.take_receive(op->rank, op->tag)) {
      op->partner = recv->get();
      (*recv)->partner = op.get();
    } else {
      receiver.unmatched.keep(op->rank, op->tag, op);
    }
    return;
  }
  op->nth = ++rank(op->rank).recvs_from[op->peer];
  rules::RankState& me = rank(op->rank);
  if (auto send = me.unmatched.take_kept(op->peer, op->tag)) {
    op->partner = send->message.get();
    send->message->partner = op.get();
  } else {
    me.unmatched.post(op->peer, op->tag, op);
  }
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

void NcclRulesWorld::State::progress_from(int first) {
  // Only a launch or a finished group makes a pair movable: the ranks to
  // look at are the one that launched, the ones whose group finished, and
  // the ones a move touched (their group may have finished by it).
  std::vector<int> todo{first};
  while (!todo.empty()) {
    const int r = todo.back();
    todo.pop_back();
    rules::RankState& state = rank(r);
    if (state.groups.empty()) continue;
    bool all_done = true;
    for (const OpPtr& op : state.groups.front()) {
      if (!op->done && op->partner && running(*op->partner)) {
        Op& other = *op->partner;
        op->is_send ? move(*op, other) : move(other, *op);
        todo.push_back(other.rank);
      }
      all_done = all_done && op->done;
    }
    if (!all_done) continue;
    state.groups.pop_front();
    ++state.finished;
    ++generation;
    finished_groups_.push_back(r);
    if (state.waiting > 0 && !state.unseen_finish) {
      state.unseen_finish = true;
      ++unseen_finishes;
    }
    todo.push_back(r);  // its next group runs now
  }
}

void NcclRulesWorld::State::enter_wait(int r) {
  rules::RankState& me = rank(r);
  if (me.waiting++ == 0 && !me.gone) ++present_waiting;
}

void NcclRulesWorld::State::leave_wait(int r) {
  rules::RankState& me = rank(r);
  if (--me.waiting == 0 && !me.gone) --present_waiting;
  if (me.waiting == 0) looked(r);
}

void NcclRulesWorld::State::looked(int r) {
  rules::RankState& me = rank(r);
  if (!me.unseen_finish) return;
  me.unseen_finish = false;
  --unseen_finishes;
}

void NcclRulesWorld::State::leave(int r) {
  rules::RankState& me = rank(r);
  if (me.gone) return;
  me.gone = true;
  --present;
  if (me.waiting > 0) --present_waiting;
  looked(r);
  me.queued.clear();  // never launched: nobody can have matched them
  for (auto& group : me.groups)
    for (const OpPtr& op : group) op->abandoned = true;
  ++generation;
  progress_from(r);  // its sends now fail their receives, its receives free their senders
  // The rest may all wait now, and the one to notice may be any of them.
  if (stuck()) wake_all();
}

void NcclRulesWorld::State::wake_finished(rules::Lock& lock) {
  if (finished_groups_.empty()) return;
  std::vector<int> woken;
  woken.swap(finished_groups_);
  lock.unlock();
  for (int r : woken) rank(r).changed.notify_all();
  lock.lock();
  if (finished_groups_.empty()) {  // keep the memory for next time
    woken.clear();
    finished_groups_.swap(woken);
  }
}

void NcclRulesWorld::State::wake_all() {
  finished_groups_.clear();
  ++generation;
  for (rules::RankState& r : ranks) r.changed.notify_all();
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
  const auto& launched = op->is_send ? rank(p).recvs_from : rank(p).sends_to;
  const auto it = launched.find(r);
  const std::uint64_t theirs = it == launched.end() ? 0 : it->second;
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
