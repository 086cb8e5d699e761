#include "training/buckets.hpp"

namespace ringlab::training {

std::vector<std::vector<std::size_t>> assign_buckets(std::span<const std::size_t> tensor_bytes,
                                                     std::size_t first_bucket_bytes,
                                                     std::size_t bucket_cap_bytes) {
  std::vector<std::vector<std::size_t>> buckets;
  std::vector<std::size_t> open;
  std::size_t open_bytes = 0;
  for (std::size_t i = 0; i < tensor_bytes.size(); ++i) {
    open.push_back(i);
    open_bytes += tensor_bytes[i];
    const std::size_t limit = buckets.empty() ? first_bucket_bytes : bucket_cap_bytes;
    if (open_bytes >= limit) {
      buckets.push_back(std::move(open));
      open.clear();
      open_bytes = 0;
    }
  }
  if (!open.empty()) buckets.push_back(std::move(open));
  return buckets;
}

}  // namespace ringlab::training
