#include "simulator/provenance.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

namespace ringlab::sim {

std::size_t RankSetHash::operator()(const RankSet& s) const {
  std::size_t h = 1469598103934665603ull;
  for (auto [a, b] : s.intervals()) {
    h = (h ^ static_cast<std::size_t>(a)) * 1099511628211ull;
    h = (h ^ static_cast<std::size_t>(b)) * 1099511628211ull;
  }
  return h;
}

SetTable::SetTable(std::vector<RankSet>& sets)
    : sets_(sets), ids_(16, ById{&sets_}, SameSet{&sets_}) {
  sets_.assign(1, RankSet{});  // kNoInputs
  ids_.insert(kNoInputs);
}

SetId SetTable::intern(RankSet s) {
  // Look the candidate up by storing it at the end; drop it if known.
  sets_.push_back(std::move(s));
  const auto candidate = static_cast<SetId>(sets_.size() - 1);
  auto [it, inserted] = ids_.insert(candidate);
  if (!inserted) sets_.pop_back();
  return *it;
}

SetId SetTable::unite(SetId a, SetId b) {
  if (a == b || b == kNoInputs) return a;
  if (a == kNoInputs) return b;
  return intern(sets_[a].unite(sets_[b]));
}

ProvState::ProvState(std::span<const ProvRun> initial) {
  for (const ProvRun& r : initial) runs_.emplace(r.offset, Piece{r.count, r.set});
}

void ProvState::read(std::size_t offset, std::size_t count, std::vector<ProvRun>& out) const {
  if (count == 0) return;
  const std::size_t end = offset + count;
  auto it = runs_.upper_bound(offset);
  if (it != runs_.begin()) --it;
  for (; it != runs_.end() && it->first < end; ++it) {
    const std::size_t a = std::max(offset, it->first);
    const std::size_t b = std::min(end, it->first + it->second.count);
    if (a < b) out.push_back({a, b - a, it->second.set});
  }
}

void ProvState::assign(std::size_t offset, std::size_t count, std::span<const ProvRun> runs) {
  if (count == 0) return;
  const std::size_t end = offset + count;
  split(offset);
  split(end);
  runs_.erase(runs_.lower_bound(offset), runs_.lower_bound(end));
  for (const ProvRun& r : runs)
    if (r.count > 0) runs_.emplace(r.offset, Piece{r.count, r.set});
  coalesce(end);
  coalesce(offset);
}

void ProvState::split(std::size_t at) {
  auto it = runs_.upper_bound(at);
  if (it == runs_.begin()) return;
  --it;
  const std::size_t start = it->first;
  const std::size_t end = start + it->second.count;
  if (at <= start || at >= end) return;
  it->second.count = at - start;
  runs_.emplace(at, Piece{end - at, it->second.set});
}

void ProvState::coalesce(std::size_t at) {
  auto it = runs_.find(at);
  if (it == runs_.end() || it == runs_.begin()) return;
  auto prev = std::prev(it);
  if (prev->first + prev->second.count == at && prev->second.set == it->second.set) {
    prev->second.count += it->second.count;
    runs_.erase(it);
  }
}

}  // namespace ringlab::sim
