// RankSet, the Run's accessors and the Replay over its deltas.
#include <algorithm>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "simulator/record.hpp"

namespace ringlab::sim {

double default_input(int rank, std::size_t i) { return 1.0 + 2.0 * rank + static_cast<double>(i); }

// ---- RankSet ----------------------------------------------------------------

bool RankSet::contains(int rank) const {
  auto it = std::upper_bound(intervals_.begin(), intervals_.end(), rank,
                             [](int r, const std::pair<int, int>& iv) { return r < iv.first; });
  if (it == intervals_.begin()) return false;
  --it;
  return rank >= it->first && rank < it->second;
}

std::size_t RankSet::count() const {
  std::size_t n = 0;
  for (auto [a, b] : intervals_) n += static_cast<std::size_t>(b - a);
  return n;
}

RankSet RankSet::unite(const RankSet& other) const {
  std::vector<std::pair<int, int>> all;
  all.reserve(intervals_.size() + other.intervals_.size());
  std::merge(intervals_.begin(), intervals_.end(), other.intervals_.begin(), other.intervals_.end(),
             std::back_inserter(all));
  std::vector<std::pair<int, int>> merged;
  for (const auto& iv : all) {
    if (!merged.empty() && iv.first <= merged.back().second)
      merged.back().second = std::max(merged.back().second, iv.second);
    else
      merged.push_back(iv);
  }
  return RankSet(std::move(merged));
}

std::vector<int> RankSet::ranks() const {
  std::vector<int> out;
  for (auto [a, b] : intervals_)
    for (int r = a; r < b; ++r) out.push_back(r);
  return out;
}

std::string RankSet::to_string() const {
  if (intervals_.empty()) return "-";
  std::ostringstream out;
  const bool each = count() <= 8;
  bool first = true;
  for (auto [a, b] : intervals_) {
    if (each) {
      for (int r = a; r < b; ++r) {
        out << (first ? "" : "+") << 'r' << r;
        first = false;
      }
    } else {
      out << (first ? "" : "+") << 'r' << a;
      if (b - a > 1) out << "..r" << b - 1;
      first = false;
    }
  }
  return out.str();
}

// ---- Run --------------------------------------------------------------------

std::span<const Message> Run::messages_in(Step k) const {
  if (k > steps) return {};
  return {messages.data() + message_begin[k], message_begin[k + 1] - message_begin[k]};
}

std::span<const Write> Run::writes_in(Step k) const {
  if (k > steps) return {};
  return {writes.data() + write_begin[k], write_begin[k + 1] - write_begin[k]};
}

int Run::buffer_of(int rank, std::string_view name) const {
  for (const auto& r : regions)
    if (r.rank == rank && r.name == name) return r.id;
  return -1;
}

std::vector<int> Run::regions_of(int rank) const {
  std::vector<int> out;
  for (const auto& r : regions)
    if (r.rank == rank) out.push_back(r.id);
  return out;
}

std::size_t Run::total_bytes() const {
  std::size_t n = 0;
  for (auto b : bytes_sent) n += b;
  return n;
}

// ---- Replay -----------------------------------------------------------------

namespace {

// Replaces [offset, offset + count) of a sorted, gap-free run list by `with`,
// in place: only the runs it overlaps are touched (plus a memmove of the tail
// when the number of runs changes).
void replace_runs(std::vector<ProvRun>& runs, Elem offset, Elem count,
                  std::span<const ProvRun> with) {
  if (count == 0) return;
  const Elem end = offset + count;
  auto starts_after = [](Elem at, const ProvRun& r) { return at < r.offset; };
  auto first = std::upper_bound(runs.begin(), runs.end(), offset, starts_after);
  if (first != runs.begin()) --first;
  auto last = std::upper_bound(first, runs.end(), end - 1, starts_after);  // one past
  std::vector<ProvRun> middle;
  middle.reserve(with.size() + 2);
  if (first != last && first->offset < offset) middle.push_back({first->offset, offset - first->offset, first->set});
  middle.insert(middle.end(), with.begin(), with.end());
  if (first != last) {
    const ProvRun& tail = *std::prev(last);
    if (tail.offset + tail.count > end) middle.push_back({end, tail.offset + tail.count - end, tail.set});
  }
  const auto replaced = static_cast<std::size_t>(last - first);
  const auto at = static_cast<std::size_t>(first - runs.begin());
  if (middle.size() == replaced) {
    std::copy(middle.begin(), middle.end(), runs.begin() + static_cast<std::ptrdiff_t>(at));
  } else {
    runs.erase(first, last);
    runs.insert(runs.begin() + static_cast<std::ptrdiff_t>(at), middle.begin(), middle.end());
  }
}

}  // namespace

Replay::Replay(const Run& run) : run_(run) { rewind(); }

void Replay::rewind() {
  position_ = -1;
  applied_ = 0;
  provenance_.clear();
  values_.clear();
  for (const Region& region : run_.regions) {
    provenance_.push_back(region.initial_provenance);
    std::vector<std::byte> bytes;
    if (run_.values_recorded) {
      const std::size_t n = region.count * element_size(region.dtype);
      const std::byte* at = run_.values.data() + region.initial_values;
      bytes.assign(at, at + n);
    }
    values_.push_back(std::move(bytes));
  }
}

void Replay::apply(const Write& w, bool forward) {
  const auto region = static_cast<std::size_t>(w.dst.region);
  replace_runs(provenance_[region], w.dst.offset, w.dst.count, run_.runs(forward ? w.after : w.before));
  if (run_.values_recorded) {
    const std::size_t es = element_size(run_.regions[region].dtype);
    const WriteValues& v = run_.write_values[static_cast<std::size_t>(&w - run_.writes.data())];
    std::memcpy(values_[region].data() + std::size_t{w.dst.offset} * es,
                run_.values.data() + (forward ? v.after : v.before), std::size_t{w.dst.count} * es);
  }
}

void Replay::seek(Step step) {
  const std::size_t target =
      run_.write_begin.empty() ? 0 : run_.write_begin[std::min<std::size_t>(step, run_.steps) + 1];
  while (applied_ < target) apply(run_.writes[applied_++], true);
  while (applied_ > target) apply(run_.writes[--applied_], false);
  position_ = std::min<long long>(step, run_.steps);
}

const std::vector<ProvRun>& Replay::provenance(int region) const {
  return provenance_.at(static_cast<std::size_t>(region));
}

const RankSet& Replay::provenance_at(int region, std::size_t element) const {
  const auto& runs = provenance(region);
  auto it = std::upper_bound(runs.begin(), runs.end(), element,
                             [](std::size_t e, const ProvRun& r) { return e < r.offset; });
  if (it == runs.begin()) return run_.rank_sets[kNoInputs];
  --it;
  if (element >= std::size_t{it->offset} + it->count) return run_.rank_sets[kNoInputs];
  return run_.rank_sets[it->set];
}

std::span<const std::byte> Replay::values(int region) const {
  return values_.at(static_cast<std::size_t>(region));
}

Tensor Replay::tensor(int region) const {
  const Region& r = run_.regions.at(static_cast<std::size_t>(region));
  Tensor t(r.dtype, {static_cast<std::int64_t>(r.count)});
  const auto bytes = values(region);
  if (bytes.size() == t.nbytes() && !bytes.empty()) std::memcpy(t.bytes().data(), bytes.data(), bytes.size());
  return t;
}

}  // namespace ringlab::sim
