// The TCP engine's matching: posted receives and the messages that came
// before them (the one matcher, transport/matcher.hpp), the memory those
// messages are kept in, and where an arriving data frame goes:
//   - the oldest posted receive for (source, tag) or for (any source, tag),
//     if its size and element match: the payload goes straight into the
//     user's buffer (zero copy);
//   - a posted receive of another size or element: that receive fails
//     (naming both ranks) and the payload is read and dropped;
//   - no posted receive, and the payload is small (< kParkBytes): a Queued
//     message of the frame's length, which a later receive copies from (or,
//     if it is still arriving, takes over);
//   - no posted receive, and the payload is large: the connection parks
//     (parking.hpp), unless a receive from its sender for another tag is
//     posted (then it must move out of that one's way: it is queued).
// A message that claims more than max_unexpected is never kept (parking.hpp).
//
// State: the matcher, the pool and the limit. Called with the engine's mutex held.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "transport/matcher.hpp"
#include "transport/scratch_pool.hpp"
#include "transport/tcp/framing.hpp"
#include "transport/tcp/operations.hpp"

namespace ringlab::tcp {

class Inbox {
 public:
  using Kept = Matcher<std::shared_ptr<RecvOp>, std::shared_ptr<Queued>>::Kept;

  Inbox(int rank, std::uint64_t max_unexpected);

  // Early messages take their memory from this pool; the transport's
  // scratch comes from it too, so one bound covers both.
  const std::shared_ptr<ScratchPool>& pool() const { return pool_; }
  std::uint64_t max_unexpected() const { return max_unexpected_; }
  // Whether a message of `length` may be kept in memory (parking.hpp).
  bool may_keep(std::uint64_t length) const;

  // Where a data frame from `peer` goes, decided when its header is complete.
  struct Placement {
    enum Kind { Receive, Reject, Park, Keep } kind;
    std::shared_ptr<RecvOp> receive;  // Receive, Reject
    std::string why;                  // Reject: why the receive fails
  };
  Placement place(int peer, const FrameHeader& header);
  // Keeps the message of `frame` from `peer` for a later receive (its
  // payload arrives into it); null if it claims more than max_unexpected.
  std::shared_ptr<Queued> keep(int peer, const FrameHeader& frame);
  // A receive given up while its message arrived: what arrived so far
  // (`got` bytes in op's buffer) becomes a message kept ahead of every other
  // of its (source, tag), to take the rest.
  std::shared_ptr<Queued> keep_partial(const RecvOp& op, const FrameHeader& frame, std::size_t got);
  // Why a frame from `peer` that has to be kept (a later message from the
  // same peer is wanted first) cannot be.
  std::string too_large_message(int peer, const FrameHeader& frame) const;

  // Why a receive of (bytes, element) cannot take a message of (length,
  // message_element) from peer on tag; empty if it can.
  std::string mismatch(int peer, Tag tag, std::size_t bytes, std::uint32_t element,
                       std::uint64_t length, std::uint32_t message_element) const;

  // A receive is posted: the oldest kept message it matches, or (none) it
  // waits, posted (source: op.peer, or kAnySource).
  std::optional<Kept> take_kept(int source, Tag tag) { return matcher_.take_kept(source, tag); }
  void post(const std::shared_ptr<RecvOp>& op);
  // Takes a posted receive back; false if it was matched already.
  bool withdraw(const std::shared_ptr<RecvOp>& op);
  // The tag of a receive posted for `source` (or kAnySource), if any.
  std::optional<Tag> posted_for(int source) const { return matcher_.posted_for(source); }
  // The engine failed: every posted receive, taken out, and no message kept.
  std::vector<std::shared_ptr<RecvOp>> clear();

 private:
  // A message of frame's length and element, its memory from the pool (not kept yet).
  std::shared_ptr<Queued> fresh_message(const FrameHeader& frame);

  int rank_;
  std::uint64_t max_unexpected_;
  std::shared_ptr<ScratchPool> pool_;
  Matcher<std::shared_ptr<RecvOp>, std::shared_ptr<Queued>> matcher_;
};

}  // namespace ringlab::tcp
