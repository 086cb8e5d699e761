// The hand-written path's arithmetic on the GPU: acc = acc op in, and the
// division that turns a SUM into an AVG. The CUDA counterpart of reduce_host /
// divide_host (ops/reduce_op.hpp), element for element the same results.
// Both only enqueue work on `stream` and return; errors in the arguments
// (an op that does not apply to the dtype) throw before anything is enqueued.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "ops/dtype.hpp"
#include "ops/reduce_op.hpp"

namespace ringlab::nccl {

// acc[i] = acc[i] op in[i] for i < count; acc and in are GPU pointers of the
// current device. AVG reduces as SUM (the caller divides at the end, as on the host).
void reduce_on_device(DType dtype, ReduceOp op, void* acc, const void* in, std::size_t count,
                      cudaStream_t stream);

// data[i] /= divisor for i < count (float32/float64 only).
void divide_on_device(DType dtype, void* data, std::size_t count, int divisor,
                      cudaStream_t stream);

}  // namespace ringlab::nccl
