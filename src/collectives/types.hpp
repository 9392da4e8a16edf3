// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ddl::coll {

// Element types of the benchmark; half and bfloat16 are reduced in float.
enum class DataType { float32, float64, int32, float16, bfloat16 };
enum class ReduceOp { sum, prod, min, max };

std::size_t element_size(DataType type);
// nccl-tests' names: float, double, int32, half, bfloat16.
std::string_view to_string(DataType type);
std::string_view to_string(ReduceOp op);
// Accepts nccl-tests' names and common aliases (fp32, float32, fp16, bf16...).
std::optional<DataType> parse_datatype(std::string_view text);
std::optional<ReduceOp> parse_op(std::string_view text);

// out[i] = op(a[i], b[i]) for `count` elements. `out` may alias `a` or `b`.
void reduce(void* out, const void* a, const void* b, std::size_t count, DataType type,
            ReduceOp op);

// IEEE binary16 and bfloat16 conversions (round to nearest even).
float half_to_float(std::uint16_t bits);
std::uint16_t float_to_half(float value);
float bf16_to_float(std::uint16_t bits);
std::uint16_t float_to_bf16(float value);

} // namespace ddl::coll
