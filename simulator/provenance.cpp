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
  return h ^ (h >> 29) ^ (h >> 47);  // the low bits pick the slot and check it
}

SetTable::SetTable(std::vector<RankSet>& sets) : sets_(sets), slots_(1024, kEmpty) {
  sets_.assign(1, RankSet{});  // kNoInputs
  const std::size_t h = RankSetHash{}(sets_[kNoInputs]);
  slots_[h & (slots_.size() - 1)] = slot(kNoInputs, h);
}

void SetTable::grow() {
  std::vector<std::uint64_t> old(slots_.size() * 2, kEmpty);
  old.swap(slots_);
  const std::size_t mask = slots_.size() - 1;
  for (std::uint64_t entry : old) {
    if (entry == kEmpty) continue;
    std::size_t i = (entry >> 32) & mask;
    while (slots_[i] != kEmpty) i = (i + 1) & mask;
    slots_[i] = entry;
  }
}

SetId SetTable::intern(RankSet s) {
  if (2 * sets_.size() >= slots_.size()) grow();  // at most half full
  const std::size_t mask = slots_.size() - 1;
  const std::size_t h = RankSetHash{}(s);
  const std::uint64_t tag = slot(0, h);
  std::size_t i = h & mask;
  for (; slots_[i] != kEmpty; i = (i + 1) & mask) {
    const auto id = static_cast<SetId>(slots_[i]);
    if ((slots_[i] & ~std::uint64_t{0xFFFFFFFF}) == tag && sets_[id] == s) return id;
  }
  const auto id = static_cast<SetId>(sets_.size());
  sets_.push_back(std::move(s));
  slots_[i] = slot(id, h);
  return id;
}

SetId SetTable::unite(SetId a, SetId b) {
  if (a == b || b == kNoInputs) return a;
  if (a == kNoInputs) return b;
  return intern(sets_[a].unite(sets_[b]));
}

ProvState::ProvState(std::span<const ProvRun> initial) : runs_(initial.begin(), initial.end()) {}

std::size_t ProvState::run_at(Elem element) const {
  auto it = std::upper_bound(runs_.begin(), runs_.end(), element,
                             [](Elem at, const ProvRun& r) { return at < r.offset; });
  return it == runs_.begin() ? 0 : static_cast<std::size_t>(it - runs_.begin()) - 1;
}

void ProvState::read(Elem offset, Elem count, std::vector<ProvRun>& out) const {
  if (count == 0 || runs_.empty()) return;
  const Elem end = offset + count;
  for (std::size_t i = run_at(offset); i < runs_.size() && runs_[i].offset < end; ++i) {
    const Elem a = std::max(offset, runs_[i].offset);
    const Elem b = std::min(end, runs_[i].offset + runs_[i].count);
    if (a < b) out.push_back({a, b - a, runs_[i].set});
  }
}

void ProvState::assign(Elem offset, Elem count, std::span<const ProvRun> runs,
                       std::vector<ProvRun>& middle) {
  if (count == 0) return;
  const Elem end = offset + count;
  // The window of runs that change: those overlapping [offset, end) and one
  // neighbour each side, which may merge with what comes in.
  const std::size_t first = runs_.empty() ? 0 : run_at(offset);
  std::size_t last = first;  // one past the last run overlapping
  while (last < runs_.size() && runs_[last].offset < end) ++last;
  const std::size_t lo = first > 0 ? first - 1 : 0;
  const std::size_t hi = std::min(runs_.size(), last + 1);
  middle.clear();
  for (std::size_t i = lo; i < first; ++i) middle.push_back(runs_[i]);
  if (first < last && runs_[first].offset < offset)
    middle.push_back({runs_[first].offset, offset - runs_[first].offset, runs_[first].set});
  for (const ProvRun& r : runs)
    if (r.count > 0) middle.push_back(r);
  if (first < last) {
    const ProvRun& tail = runs_[last - 1];
    if (tail.offset + tail.count > end)
      middle.push_back({end, tail.offset + tail.count - end, tail.set});
  }
  for (std::size_t i = last; i < hi; ++i) middle.push_back(runs_[i]);
  // Equal neighbours merge where the new runs meet the old: at end, then at offset.
  for (const Elem at : {end, offset}) {
    for (std::size_t i = 1; i < middle.size(); ++i) {
      ProvRun& a = middle[i - 1];
      const ProvRun& b = middle[i];
      if (b.offset != at) continue;
      if (a.offset + a.count == at && a.set == b.set) {
        a.count += b.count;
        middle.erase(middle.begin() + static_cast<std::ptrdiff_t>(i));
      }
      break;
    }
  }
  const auto at = runs_.begin() + static_cast<std::ptrdiff_t>(lo);
  const std::size_t replaced = hi - lo;
  if (middle.size() == replaced) {
    std::copy(middle.begin(), middle.end(), at);
  } else {
    runs_.erase(at, at + static_cast<std::ptrdiff_t>(replaced));
    runs_.insert(runs_.begin() + static_cast<std::ptrdiff_t>(lo), middle.begin(), middle.end());
  }
}

}  // namespace ringlab::sim
