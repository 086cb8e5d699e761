// The host reduce loops of the two 16-bit floating dtypes (float16,
// bfloat16), for reduce_host and divide_host (ops/reduce_op.hpp): each
// element is converted to float, combined, and rounded back to nearest even
// at every step, as Gloo's float16 and NCCL's half and bfloat16 do (each hop
// of an algorithm rounds).
#pragma once

#include <cstddef>
#include <cstdint>

#include "ops/dtype.hpp"
#include "ops/reduce_op.hpp"

namespace ringlab {

// acc[i] = acc[i] op in[i]; dtype is Float16 or BFloat16, op one that applies.
void reduce_16bit_floats(DType dtype, ReduceOp op, std::uint16_t* acc, const std::uint16_t* in,
                         std::size_t count);
// data[i] = data[i] / divisor, divided in float and rounded once.
void divide_16bit_floats(DType dtype, std::uint16_t* data, std::size_t count, int divisor);

// Whether this CPU converts float16 with F16C's vector instructions (else
// element by element through the compiler's conversion).
bool has_f16c();

}  // namespace ringlab
