// How DistributedDataParallel groups gradients into buckets.
//
// PyTorch's rule (dist._compute_bucket_assignment_by_size): walk the tensors
// in order, adding each whole tensor to the open bucket; when the bucket
// reaches its size limit it is closed and the next one opens. The limits are
// a list whose last entry repeats: DDP passes [first_bucket_bytes (1 MiB),
// bucket_cap_mb (25 MiB)], so the first bucket is small and the rest are
// capped at bucket_cap_mb. A bucket may exceed its limit by the tensor that
// filled it; a tensor larger than the limit has a bucket of its own.
//
// DDP walks the parameters in the order their gradients are produced, which
// for a model used in the order it is defined is the reverse of the parameter
// order. (PyTorch 1.13 runs its first iteration with one bucket, then rebuilds
// the buckets in the order the gradients actually arrived with these limits;
// ringlab starts with the rebuilt assignment.) The small first bucket lets the
// first all_reduce start as early as possible.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace ringlab::training {

// tensor_bytes: each tensor's size, in the order they are walked. Returns the
// buckets, each a list of indices into tensor_bytes, in that order. A limit
// of 0 closes every bucket after one tensor.
std::vector<std::vector<std::size_t>> assign_buckets(std::span<const std::size_t> tensor_bytes,
                                                     std::size_t first_bucket_bytes,
                                                     std::size_t bucket_cap_bytes);

}  // namespace ringlab::training
