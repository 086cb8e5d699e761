#include "transport/mailbox.hpp"

#include <cstring>

namespace ringlab {

void Mailbox::fill(PostedReceive& posted, int sender, ConstBytes data, std::size_t size) const {
  posted.done = true;
  posted.sender = sender;
  if (size != posted.buffer.size()) {
    posted.error = size_mismatch_message(rank_, sender, posted.tag, posted.buffer.size(), size);
    return;
  }
  if (carry_bytes_ && size > 0) std::memcpy(posted.buffer.data(), data.data(), size);
}

std::shared_ptr<PostedReceive> Mailbox::deliver(int source, Tag tag, ConstBytes data) {
  auto posted = matcher_.take_receive(source, tag);
  if (!posted) {
    Message message;
    message.size = data.size();
    if (carry_bytes_) message.bytes.assign(data.begin(), data.end());
    matcher_.keep(source, tag, std::move(message));
    return nullptr;
  }
  fill(**posted, source, data, data.size());
  return *posted;
}

std::shared_ptr<PostedReceive> Mailbox::receive(int source, Tag tag, MutBytes buffer) {
  auto posted = std::make_shared<PostedReceive>();
  posted->source = source;
  posted->tag = tag;
  posted->buffer = buffer;
  if (auto kept = matcher_.take_kept(source, tag))
    fill(*posted, kept->source, kept->message.bytes, kept->message.size);
  else
    matcher_.post(source, tag, posted);
  return posted;
}

void Mailbox::withdraw(const std::shared_ptr<PostedReceive>& posted) {
  if (!posted->done) matcher_.withdraw(posted->source, posted->tag, posted);
}

}  // namespace ringlab
