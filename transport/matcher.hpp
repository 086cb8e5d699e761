// The one message matcher: which posted receive a message goes to, and which
// kept message a receive takes. Every transport's matching is this class,
// configured by the rule and by what a receive and a kept message are:
//
//   transport/mailbox.hpp         the in-process transport's threads and the
//                                 simulator's fibers: a kept message is its
//                                 bytes (or, without bytes, its size);
//   transport/tcp/engine*.cpp     a kept message is a Queued one, still
//                                 arriving or whole; a large one may stay in
//                                 its socket instead (parking.hpp);
//   transport/nccl_rules/         a "message" is a launched send, a
//                                 "receive" a launched receive, matched by
//                                 NCCL's order-only rule.
//
// The rules (MatchBy::SourceAndTag, transport.hpp's contract):
//  - a message from s with tag t goes to the oldest receive posted for it:
//    for (s, t), or for (kAnySource, t), whichever was posted first;
//  - a receive takes the oldest kept message it matches: for (s, t), the
//    oldest from s; for (kAnySource, t), the one kept first among every
//    source's oldest of tag t;
//  - so the messages of one (source, tag) meet their receives in order (FIFO).
// MatchBy::SourceOrder is NCCL's: between two ranks the k-th message meets
// the k-th receive, and tags play no part (nor can a receive be for any
// source: NCCL posts every receive for one sender).
//
// A match takes both out: the owner decides what the match does (copies the
// bytes; fails the receive on a size mismatch, the message consumed either
// way; points the socket's payload at the buffer; pairs two NCCL
// operations). Nor does the matcher decide what happens when neither side
// is there yet: the owner keeps the message (keep) or holds it somewhere of
// its own, and posts the receive (post). It neither locks nor waits: its
// owner does both in its own way. A receive whose wait gave up is withdrawn,
// so no later message lands in a buffer nobody waits on.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "transport/transport.hpp"

namespace ringlab {

enum class MatchBy {
  SourceAndTag,  // transport.hpp's contract
  SourceOrder,   // NCCL's: in order between two ranks, whatever the tags
};

// Receive and Message are moved in and out; a Receive is compared with ==
// (withdraw finds it so): a pointer, shared or not.
template <typename Receive, typename Message>
class Matcher {
 public:
  explicit Matcher(MatchBy by = MatchBy::SourceAndTag) : by_(by) {}

  // ---- a message from `source` arrives
  // The oldest receive posted for it, taken out; nullopt if there is none
  // (then the owner keeps the message, or holds it elsewhere).
  std::optional<Receive> take_receive(int source, Tag tag) {
    auto named = posted_.find(key(source, tag));
    auto any = posted_.find(key(kAnySource, tag));
    if (named == posted_.end() && any == posted_.end()) return std::nullopt;
    const bool any_first = named == posted_.end() ||
                           (any != posted_.end() && any->second.front().seq < named->second.front().seq);
    return take_front(posted_, any_first ? any : named);
  }
  // Keeps a message for a later receive: last, or first (a message older
  // than every one kept for its (source, tag): one put back, say).
  void keep(int source, Tag tag, Message message, bool first = false) {
    auto& queue = kept_[key(source, tag)];
    if (first)
      queue.push_front({queue.empty() ? next_++ : queue.front().seq, std::move(message)});
    else
      queue.push_back({next_++, std::move(message)});
  }

  // ---- a receive is posted for `source` (or kAnySource) and tag
  struct Kept {
    int source;  // who sent it
    Message message;
  };
  // The oldest kept message it matches, taken out; nullopt if there is none
  // (then the owner posts the receive, or finds its message elsewhere).
  std::optional<Kept> take_kept(int source, Tag tag) {
    auto it = source == kAnySource ? oldest_kept_of(tag) : kept_.find(key(source, tag));
    if (it == kept_.end()) return std::nullopt;
    const int from = it->first.second;
    return Kept{from, take_front(kept_, it)};
  }
  void post(int source, Tag tag, Receive receive) {
    posted_[key(source, tag)].push_back({next_++, std::move(receive)});
  }

  // Takes a receive posted for (source, tag) back; false if it was not
  // posted (any more): it was matched already.
  bool withdraw(int source, Tag tag, const Receive& receive) {
    auto it = posted_.find(key(source, tag));
    if (it == posted_.end()) return false;
    const auto before = it->second.size();
    std::erase_if(it->second, [&](const auto& entry) { return entry.value == receive; });
    const bool found = it->second.size() != before;
    if (it->second.empty()) posted_.erase(it);
    return found;
  }

  // The tag of a receive posted for `source` (kAnySource: of one posted for
  // any source), if there is one.
  std::optional<Tag> posted_for(int source) const {
    for (const auto& [k, receives] : posted_)
      if (k.second == source) return k.first;
    return std::nullopt;
  }
  // Every posted receive, taken out (the world failed).
  std::vector<Receive> take_all_posted() {
    std::vector<Receive> all;
    for (auto& [k, receives] : posted_)
      for (auto& entry : receives) all.push_back(std::move(entry.value));
    posted_.clear();
    return all;
  }
  void drop_kept() { kept_.clear(); }

 private:
  // (tag, source): a tag's sources side by side, for a receive from any
  // source; kAnySource (-1) sorts before every rank.
  using Key = std::pair<Tag, int>;
  template <typename T>
  struct Entry {
    std::uint64_t seq;  // posting (or keeping) order
    T value;
  };
  template <typename T>
  using Queues = std::map<Key, std::deque<Entry<T>>>;

  Key key(int source, Tag tag) const { return {by_ == MatchBy::SourceOrder ? Tag{0} : tag, source}; }

  // The front of it->second, taken out (and the key with it once empty).
  template <typename T>
  static T take_front(Queues<T>& queues, typename Queues<T>::iterator it) {
    T value = std::move(it->second.front().value);
    it->second.pop_front();
    if (it->second.empty()) queues.erase(it);
    return value;
  }

  // Among the sources with messages of tag kept, the one whose oldest was
  // kept first; kept_.end() if none.
  typename Queues<Message>::iterator oldest_kept_of(Tag tag) {
    auto best = kept_.end();
    for (auto it = kept_.lower_bound(key(kAnySource, tag));
         it != kept_.end() && it->first.first == key(kAnySource, tag).first; ++it)
      if (best == kept_.end() || it->second.front().seq < best->second.front().seq) best = it;
    return best;
  }

  MatchBy by_;
  Queues<Receive> posted_;
  Queues<Message> kept_;
  std::uint64_t next_ = 0;
};

}  // namespace ringlab
