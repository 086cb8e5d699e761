#include "transport/mailbox.hpp"

#include <algorithm>
#include <cstring>

namespace ringlab {

void Mailbox::fill(PostedReceive& posted, ConstBytes data, std::size_t size) const {
  posted.done = true;
  if (size != posted.buffer.size()) {
    posted.error =
        size_mismatch_message(rank_, posted.source, posted.tag, posted.buffer.size(), size);
    return;
  }
  if (carry_bytes_ && size > 0) std::memcpy(posted.buffer.data(), data.data(), size);
}

std::shared_ptr<PostedReceive> Mailbox::deliver(int source, Tag tag, ConstBytes data) {
  const Key key{source, tag};
  auto it = posted_.find(key);
  if (it == posted_.end()) {
    Message message;
    message.size = data.size();
    if (carry_bytes_) message.bytes.assign(data.begin(), data.end());
    queued_[key].push_back(std::move(message));
    return nullptr;
  }
  std::shared_ptr<PostedReceive> posted = std::move(it->second.front());
  it->second.pop_front();
  if (it->second.empty()) posted_.erase(it);
  fill(*posted, data, data.size());
  return posted;
}

std::shared_ptr<PostedReceive> Mailbox::receive(int source, Tag tag, MutBytes buffer) {
  auto posted = std::make_shared<PostedReceive>();
  posted->source = source;
  posted->tag = tag;
  posted->buffer = buffer;
  const Key key{source, tag};
  auto it = queued_.find(key);
  if (it == queued_.end()) {
    posted_[key].push_back(posted);
    return posted;
  }
  Message message = std::move(it->second.front());
  it->second.pop_front();
  if (it->second.empty()) queued_.erase(it);
  fill(*posted, message.bytes, message.size);
  return posted;
}

void Mailbox::withdraw(const std::shared_ptr<PostedReceive>& posted) {
  if (posted->done) return;
  auto it = posted_.find({posted->source, posted->tag});
  if (it == posted_.end()) return;
  std::erase(it->second, posted);
  if (it->second.empty()) posted_.erase(it);
}

}  // namespace ringlab
