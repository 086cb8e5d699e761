// The sends to one rank and its receives that are not matched yet. Internal
// to simulator/: the record builder and the message-level path match sends to
// receives as the ranks post them, by index into their own tables.
//
// Each kind is kept in the order posted, so the first entry of a (source,
// tag) is its oldest: a scan from the front matches FIFO per (source, tag),
// as the mailbox does (transport/mailbox.hpp). A send usually finds its
// receive at once or waits at the back; a receive usually finds its send near
// the front (fibers run a sender ahead, not behind).
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <optional>

#include "transport/transport.hpp"

namespace ringlab::sim::detail {

class Unmatched {
 public:
  // A send of (src, tag) arrives: the oldest receive waiting for it, taken
  // out; else the send (`message`) waits and nothing is returned.
  std::optional<std::uint32_t> match_send(int src, Tag tag, std::uint32_t message) {
    return take_or_wait(receives_, sends_, src, tag, message);
  }
  // A receive of (src, tag) is posted: the oldest send waiting for it, taken
  // out; else the receive (`receive`) waits and nothing is returned.
  std::optional<std::uint32_t> match_receive(int src, Tag tag, std::uint32_t receive) {
    return take_or_wait(sends_, receives_, src, tag, receive);
  }

 private:
  struct Entry {
    int src;
    Tag tag;
    std::uint32_t index;  // the message (a send) or the receive
  };
  static std::optional<std::uint32_t> take_or_wait(std::deque<Entry>& others,
                                                   std::deque<Entry>& mine, int src, Tag tag,
                                                   std::uint32_t index) {
    const auto it = std::find_if(others.begin(), others.end(),
                                 [&](const Entry& e) { return e.src == src && e.tag == tag; });
    if (it == others.end()) {
      mine.push_back({src, tag, index});
      return std::nullopt;
    }
    const std::uint32_t matched = it->index;
    others.erase(it);
    return matched;
  }

  std::deque<Entry> sends_, receives_;
};

}  // namespace ringlab::sim::detail
