// Message matching in the TCP engine (see mailbox.hpp).
#include "transport/tcp/mailbox.hpp"

#include <algorithm>

namespace ringlab::tcp {

namespace {

// The oldest entry of map[key], taken out (and the key with it once empty).
template <typename Map>
typename Map::mapped_type::value_type take_oldest(Map& map, const typename Map::key_type& key) {
  const auto it = map.find(key);
  if (it == map.end()) return nullptr;
  auto oldest = std::move(it->second.front());
  it->second.pop_front();
  if (it->second.empty()) map.erase(it);
  return oldest;
}

}  // namespace

void Mailbox::post(std::shared_ptr<RecvOp> op) {
  const Key key{op->peer, op->tag};
  posted_[key].push_back(std::move(op));
}

std::shared_ptr<RecvOp> Mailbox::take_posted(const Key& key) { return take_oldest(posted_, key); }

std::optional<Tag> Mailbox::posted_from(int peer) const {
  const auto it = posted_.lower_bound(Key{peer, 0});
  if (it == posted_.end() || it->first.first != peer) return std::nullopt;
  return it->first.second;
}

bool Mailbox::withdraw(const std::shared_ptr<RecvOp>& op) {
  const auto it = posted_.find(Key{op->peer, op->tag});
  if (it == posted_.end()) return false;
  const auto before = it->second.size();
  std::erase(it->second, op);
  const bool found = it->second.size() != before;
  if (it->second.empty()) posted_.erase(it);
  return found;
}

std::vector<std::shared_ptr<RecvOp>> Mailbox::take_all_posted() {
  std::vector<std::shared_ptr<RecvOp>> all;
  for (auto& [key, ops] : posted_)
    for (auto& op : ops) all.push_back(std::move(op));
  posted_.clear();
  return all;
}

void Mailbox::queue(const Key& key, std::shared_ptr<Queued> message, bool first) {
  auto& messages = queued_[key];
  if (first)
    messages.push_front(std::move(message));
  else
    messages.push_back(std::move(message));
}

std::shared_ptr<Queued> Mailbox::take_queued(const Key& key) { return take_oldest(queued_, key); }

}  // namespace ringlab::tcp
