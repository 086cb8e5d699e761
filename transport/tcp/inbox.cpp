// The TCP engine's matching (see inbox.hpp).
#include "transport/tcp/inbox.hpp"

#include <cstring>

#include "transport/tcp/parking.hpp"

namespace ringlab::tcp {

Inbox::Inbox(int rank, std::uint64_t max_unexpected)
    : rank_(rank), max_unexpected_(max_unexpected), pool_(ScratchPool::create()) {}

bool Inbox::may_keep(std::uint64_t length) const {
  return parking::may_queue(length, max_unexpected_);
}

std::string Inbox::mismatch(int peer, Tag tag, std::size_t bytes, std::uint32_t element,
                            std::uint64_t length, std::uint32_t message_element) const {
  if (bytes != length) return size_mismatch_message(rank_, peer, tag, bytes, length);
  return element_problem(rank_, peer, tag, element, message_element);
}

Inbox::Placement Inbox::place(int peer, const FrameHeader& header) {
  if (auto posted = matcher_.take_receive(peer, header.tag)) {
    std::shared_ptr<RecvOp> op = std::move(*posted);
    op->peer = peer;  // the sender, for a receive from any source
    std::string wrong =
        mismatch(peer, header.tag, op->buffer.size(), op->element, header.length, header.element);
    if (!wrong.empty()) return {Placement::Reject, std::move(op), std::move(wrong)};
    return {Placement::Receive, std::move(op), {}};
  }
  const bool later_wanted =
      matcher_.posted_for(peer).has_value() || matcher_.posted_for(kAnySource).has_value();
  if (parking::parks(header.length, later_wanted)) return {Placement::Park, nullptr, {}};
  return {Placement::Keep, nullptr, {}};
}

std::shared_ptr<Queued> Inbox::fresh_message(const FrameHeader& frame) {
  auto message = std::make_shared<Queued>();
  message->size = frame.length;
  message->element = frame.element;
  message->data = pool_->take(frame.length);
  return message;
}

std::shared_ptr<Queued> Inbox::keep(int peer, const FrameHeader& frame) {
  if (!may_keep(frame.length)) return nullptr;
  auto message = fresh_message(frame);
  matcher_.keep(peer, frame.tag, message);
  return message;
}

std::shared_ptr<Queued> Inbox::keep_partial(const RecvOp& op, const FrameHeader& frame,
                                            std::size_t got) {
  auto message = fresh_message(frame);
  std::memcpy(message->data.storage.get(), op.buffer.data(), got);
  matcher_.keep(op.peer, op.tag, message, true);
  return message;
}

std::string Inbox::too_large_message(int peer, const FrameHeader& frame) const {
  const std::string them = "rank " + std::to_string(peer);
  return "rank " + std::to_string(rank_) + ": " + them + " sent a message of " +
         std::to_string(frame.length) + " bytes (" + describe_tag(frame.tag) +
         ") before its receive was posted, and a later message from " + them +
         " is wanted first; a message that comes before its receive is kept in memory only up "
         "to " +
         std::to_string(max_unexpected_) +
         " bytes (kMaxUnexpectedBytes, transport/tcp/framing.hpp): post the receive for a large "
         "message before receiving later ones from the same rank (or is " +
         them + " not a ringlab rank of this job?)";
}

void Inbox::post(const std::shared_ptr<RecvOp>& op) {
  matcher_.post(op->any_source ? kAnySource : op->peer, op->tag, op);
}

bool Inbox::withdraw(const std::shared_ptr<RecvOp>& op) {
  return matcher_.withdraw(op->any_source ? kAnySource : op->peer, op->tag, op);
}

std::vector<std::shared_ptr<RecvOp>> Inbox::clear() {
  matcher_.drop_kept();
  return matcher_.take_all_posted();
}

}  // namespace ringlab::tcp
