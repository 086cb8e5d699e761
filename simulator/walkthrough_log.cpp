#include "simulator/walkthrough_log.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

namespace ringlab::sim {

namespace {

// Cuts one mark's events out of a rank's log.
class Cutter {
 public:
  Cutter(const RankLog& from, const CollectiveMark& mark) : from_(from), mark_(mark) {
    out_.mark = mark;
    out_.log.rank = from.rank;
    out_.log.world_size = from.world_size;
  }

  WalkthroughLog cut() {
    add_buffers();
    const std::size_t end = std::min(mark_.end_event, from_.events.size());
    for (std::size_t i = std::min(mark_.first_event, end); i < end; ++i) add_event(i);
    out_.mark.first_event = 0;
    out_.mark.end_event = out_.log.events.size();
    return std::move(out_);
  }

 private:
  bool has_values() const { return from_.event_values.size() == from_.events.size(); }
  std::size_t esize(int region) const {
    return region < 0 ? 1 : element_size(from_.regions[static_cast<std::size_t>(region)].dtype);
  }
  // Bytes [offset, offset + n) of the source's values, copied; kNoValues stays.
  std::size_t copy_values(std::size_t offset, std::size_t n) {
    if (offset == kNoValues || offset + n > from_.values.size()) return kNoValues;
    const std::size_t at = out_.log.values.size();
    out_.log.values.insert(out_.log.values.end(), from_.values.begin() + static_cast<long>(offset),
                           from_.values.begin() + static_cast<long>(offset + n));
    return at;
  }
  void copy_sample(ValueSample& sample, DType dtype) {
    sample.offset = copy_values(sample.offset, sample.elements * element_size(dtype));
  }

  void add_buffers() {
    for (MarkedBuffer& b : out_.mark.buffers) {
      LoggedRegion region = b.named;
      region.initial_values =
          copy_values(region.initial_values, region.count * element_size(region.dtype));
      region.alloc_event = 0;
      regions_[b.region] = static_cast<int>(out_.log.regions.size());
      b.region = static_cast<int>(out_.log.regions.size());
      copy_sample(b.before, region.dtype);
      copy_sample(b.after, region.dtype);
      out_.log.regions.push_back(std::move(region));
    }
  }

  // A scratch region the collective allocated: named in its own order.
  void add_scratch(int source) {
    LoggedRegion region = from_.regions[static_cast<std::size_t>(source)];
    region.name = "scratch#" + std::to_string(scratch_++);
    region.initial_values =
        copy_values(region.initial_values, region.count * element_size(region.dtype));
    region.alloc_event = out_.log.events.size();
    regions_[source] = static_cast<int>(out_.log.regions.size());
    out_.log.regions.push_back(std::move(region));
  }

  // A source region in the cut's numbering, with offset and count converted
  // to bytes where the cut does not know it.
  int map_region(int source, std::uint64_t& offset, std::uint64_t* count) const {
    if (source < 0) return -1;
    const auto it = regions_.find(source);
    if (it != regions_.end()) return it->second;
    offset *= esize(source);
    if (count) *count *= esize(source);
    return -1;
  }

  std::size_t range_bytes(int region, std::uint64_t count) const {
    return region < 0 ? count : count * esize(region);
  }

  void add_event(std::size_t i) {
    Event e = from_.events[i];
    std::pair<std::size_t, std::size_t> values{kNoValues, kNoValues};
    const auto source_values = has_values() ? from_.event_values[i] : values;
    switch (e.kind) {
      case EventKind::Alloc:
        if (regions_.count(e.region)) return;
        add_scratch(e.region);
        e.region = regions_[e.region];
        break;
      case EventKind::Free:
        if (!regions_.count(e.region)) return;
        e.region = regions_[e.region];
        break;
      case EventKind::PostSend:
      case EventKind::PostRecv: {
        const std::size_t n = range_bytes(e.region, e.count);
        e.region = map_region(e.region, e.offset, &e.count);
        requests_[e.request] = {next_request_, n};
        e.request = next_request_++;
        values.first = copy_values(source_values.first, n);
        break;
      }
      case EventKind::Complete: {
        const auto it = requests_.find(e.request);
        if (it == requests_.end()) return;  // posted before the collective started
        e.request = it->second.first;
        values.second = copy_values(source_values.second, it->second.second);
        break;
      }
      case EventKind::Copy:
      case EventKind::Reduce:
      case EventKind::Divide: {
        const std::size_t n = range_bytes(e.region, e.count);
        std::uint64_t src_offset = e.tag_or_src_offset;
        if (e.kind != EventKind::Divide) {
          std::uint64_t src_count = e.count;
          e.src_region = map_region(e.src_region, src_offset, &src_count);
          e.tag_or_src_offset = src_offset;
        }
        e.region = map_region(e.region, e.offset, &e.count);
        values = {copy_values(source_values.first, n), copy_values(source_values.second, n)};
        break;
      }
    }
    out_.log.events.push_back(e);
    if (has_values()) out_.log.event_values.push_back(values);
    if (from_.wall_ns.size() == from_.events.size()) out_.log.wall_ns.push_back(from_.wall_ns[i]);
  }

  const RankLog& from_;
  const CollectiveMark& mark_;
  WalkthroughLog out_;
  std::map<int, int> regions_;  // source region -> the cut's
  std::map<std::uint32_t, std::pair<std::uint32_t, std::size_t>> requests_;  // -> (id, bytes)
  std::uint32_t next_request_ = 0;
  int scratch_ = 0;
};

}  // namespace

std::vector<WalkthroughLog> cut_walkthroughs(const RankLog& log) {
  std::vector<WalkthroughLog> cuts;
  for (std::size_t k = 0; k < log.collectives.size(); ++k) {
    cuts.push_back(Cutter(log, log.collectives[k]).cut());
    cuts.back().index = k;
  }
  return cuts;
}

}  // namespace ringlab::sim
