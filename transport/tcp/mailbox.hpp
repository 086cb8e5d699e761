// Message matching in the TCP engine: the receives posted before their
// message, and the messages that arrived before their receive, by (source
// rank, tag), oldest first. A message goes to the oldest receive posted for
// its (source, tag) (transport.hpp's contract); what the engine does when
// neither side is there yet (queue or park) is decided in engine_frames.cpp.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "transport/tcp/operations.hpp"

namespace ringlab::tcp {

class Mailbox {
 public:
  using Key = std::pair<int, Tag>;  // (source rank, tag)

  // ---- receives waiting for their message
  void post(std::shared_ptr<RecvOp> op);
  // The oldest receive posted for key, taken out; null if none.
  std::shared_ptr<RecvOp> take_posted(const Key& key);
  // A tag of a receive posted for a message from peer, if there is one.
  std::optional<Tag> posted_from(int peer) const;
  // Takes op out if it is still posted; false if it was not.
  bool withdraw(const std::shared_ptr<RecvOp>& op);
  // Every posted receive, taken out.
  std::vector<std::shared_ptr<RecvOp>> take_all_posted();

  // ---- messages waiting for their receive
  // Queued last (or first: a message that was older than every queued one).
  void queue(const Key& key, std::shared_ptr<Queued> message, bool first = false);
  // The oldest message queued for key, taken out; null if none.
  std::shared_ptr<Queued> take_queued(const Key& key);
  void drop_queued() { queued_.clear(); }

 private:
  std::map<Key, std::deque<std::shared_ptr<RecvOp>>> posted_;
  std::map<Key, std::deque<std::shared_ptr<Queued>>> queued_;
};

}  // namespace ringlab::tcp
