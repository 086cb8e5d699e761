// Reduction operators with torch.distributed's names, and the host loop that
// applies one element-wise (acc[i] = acc[i] OP in[i]).
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "ops/dtype.hpp"

namespace ringlab {

enum class ReduceOp : std::uint8_t { SUM, PRODUCT, MIN, MAX, AVG, BAND, BOR, BXOR };

inline constexpr ReduceOp kAllReduceOps[] = {ReduceOp::SUM,  ReduceOp::PRODUCT, ReduceOp::MIN,
                                             ReduceOp::MAX,  ReduceOp::AVG,     ReduceOp::BAND,
                                             ReduceOp::BOR,  ReduceOp::BXOR};

std::string_view op_name(ReduceOp op);
ReduceOp parse_op(std::string_view name);  // "sum", "SUM", "prod", ...

// Whether op is defined for dtype: bitwise ops need integers, AVG needs floats.
bool op_applies(ReduceOp op, DType dtype);
// Throws std::invalid_argument naming the op, the dtype and what to use instead.
void check_op(ReduceOp op, DType dtype);

// The op used on the wire: AVG travels as SUM and is divided at the end.
constexpr ReduceOp wire_op(ReduceOp op) { return op == ReduceOp::AVG ? ReduceOp::SUM : op; }

// acc[i] = acc[i] op in[i] for count elements of dtype (host memory).
void reduce_host(DType dtype, ReduceOp op, std::byte* acc, const std::byte* in, std::size_t count);
// For AVG: divides every element by world_size (floating types only).
void divide_host(DType dtype, std::byte* data, std::size_t count, int world_size);

}  // namespace ringlab
