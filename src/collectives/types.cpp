// SPDX-License-Identifier: MIT
#include "src/collectives/types.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <utility>

namespace ddl::coll {

std::size_t element_size(DataType type) {
  switch (type) {
  case DataType::float32: return 4;
  case DataType::float64: return 8;
  case DataType::int32: return 4;
  case DataType::float16: return 2;
  case DataType::bfloat16: return 2;
  }
  return 1;
}

std::string_view to_string(DataType type) {
  switch (type) {
  case DataType::float32: return "float";
  case DataType::float64: return "double";
  case DataType::int32: return "int32";
  case DataType::float16: return "half";
  case DataType::bfloat16: return "bfloat16";
  }
  return "?";
}

std::string_view to_string(ReduceOp op) {
  switch (op) {
  case ReduceOp::sum: return "sum";
  case ReduceOp::prod: return "prod";
  case ReduceOp::min: return "min";
  case ReduceOp::max: return "max";
  }
  return "?";
}

std::optional<DataType> parse_datatype(std::string_view text) {
  static constexpr std::array<std::pair<std::string_view, DataType>, 12> names{{
      {"float", DataType::float32}, {"float32", DataType::float32}, {"fp32", DataType::float32},
      {"double", DataType::float64}, {"float64", DataType::float64}, {"fp64", DataType::float64},
      {"int32", DataType::int32}, {"int", DataType::int32},
      {"half", DataType::float16}, {"float16", DataType::float16}, {"fp16", DataType::float16},
      {"bfloat16", DataType::bfloat16},
  }};
  if (text == "bf16") {
    return DataType::bfloat16;
  }
  for (const auto& [name, type] : names) {
    if (name == text) {
      return type;
    }
  }
  return std::nullopt;
}

std::optional<ReduceOp> parse_op(std::string_view text) {
  for (ReduceOp op : {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max}) {
    if (to_string(op) == text) {
      return op;
    }
  }
  return std::nullopt;
}

float half_to_float(std::uint16_t bits) {
  std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  std::uint32_t exponent = (bits >> 10) & 0x1fu;
  std::uint32_t mantissa = bits & 0x3ffu;
  std::uint32_t out = 0;
  if (exponent == 0x1f) {
    out = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    out = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa != 0) {
    // Subnormal: renormalise.
    exponent = 113;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    out = sign | (exponent << 23) | ((mantissa & 0x3ffu) << 13);
  } else {
    out = sign;
  }
  return std::bit_cast<float>(out);
}

std::uint16_t float_to_half(float value) {
  std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  std::uint32_t sign = (x >> 16) & 0x8000u;
  std::uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or nan
    return static_cast<std::uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  }
  if (abs >= 0x477ff000u) {  // rounds to inf
    return static_cast<std::uint16_t>(sign | 0x7c00u);
  }
  if (abs < 0x38800000u) {  // subnormal or zero in half
    if (abs < 0x33000000u) {
      return static_cast<std::uint16_t>(sign);
    }
    std::uint32_t shift = 113 - (abs >> 23) + 13;
    std::uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    std::uint32_t half = mantissa >> shift;
    std::uint32_t rest = mantissa & ((1u << shift) - 1);
    std::uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u) != 0)) {
      ++half;
    }
    return static_cast<std::uint16_t>(sign | half);
  }
  std::uint32_t rounded = abs - 0x38000000u;  // rebias 127 -> 15
  rounded += 0xfffu + ((rounded >> 13) & 1u);
  return static_cast<std::uint16_t>(sign | (rounded >> 13));
}

float bf16_to_float(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

std::uint16_t float_to_bf16(float value) {
  std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) {
    return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // quiet nan
  }
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(x >> 16);
}

namespace {

template <typename T> struct Sum {
  T operator()(T a, T b) const { return a + b; }
};
template <typename T> struct Prod {
  T operator()(T a, T b) const { return a * b; }
};
template <typename T> struct Min {
  T operator()(T a, T b) const { return b < a ? b : a; }
};
template <typename T> struct Max {
  T operator()(T a, T b) const { return a < b ? b : a; }
};

// A plain element-wise loop: GCC vectorises it at -O2/-O3 without reassociating
// anything, so results are bit-identical to the scalar order.
template <typename T, typename Op>
void reduce_loop(void* out, const void* a, const void* b, std::size_t count) {
  auto* o = static_cast<T*>(out);
  const auto* x = static_cast<const T*>(a);
  const auto* y = static_cast<const T*>(b);
  Op op;
  for (std::size_t i = 0; i < count; ++i) {
    o[i] = op(x[i], y[i]);
  }
}

// int32 sums and products wrap like NCCL's (two's complement), without UB.
template <template <typename> class Op>
void reduce_int32(void* out, const void* a, const void* b, std::size_t count) {
  reduce_loop<std::uint32_t, Op<std::uint32_t>>(out, a, b, count);
}

// half / bfloat16: widen to float, reduce, narrow; in blocks so the float
// loop in the middle vectorises.
template <float (*Widen)(std::uint16_t), std::uint16_t (*Narrow)(float), typename Op>
void reduce_16bit(void* out, const void* a, const void* b, std::size_t count) {
  constexpr std::size_t block = 256;
  std::array<float, block> fa{};
  std::array<float, block> fb{};
  auto* o = static_cast<std::uint16_t*>(out);
  const auto* x = static_cast<const std::uint16_t*>(a);
  const auto* y = static_cast<const std::uint16_t*>(b);
  Op op;
  for (std::size_t start = 0; start < count; start += block) {
    std::size_t n = std::min(block, count - start);
    for (std::size_t i = 0; i < n; ++i) {
      fa[i] = Widen(x[start + i]);
      fb[i] = Widen(y[start + i]);
    }
    for (std::size_t i = 0; i < n; ++i) {
      fa[i] = op(fa[i], fb[i]);
    }
    for (std::size_t i = 0; i < n; ++i) {
      o[start + i] = Narrow(fa[i]);
    }
  }
}

template <template <typename> class Op>
void reduce_typed(void* out, const void* a, const void* b, std::size_t count, DataType type) {
  switch (type) {
  case DataType::float32: reduce_loop<float, Op<float>>(out, a, b, count); return;
  case DataType::float64: reduce_loop<double, Op<double>>(out, a, b, count); return;
  case DataType::int32: reduce_loop<std::int32_t, Op<std::int32_t>>(out, a, b, count); return;
  case DataType::float16:
    reduce_16bit<half_to_float, float_to_half, Op<float>>(out, a, b, count);
    return;
  case DataType::bfloat16:
    reduce_16bit<bf16_to_float, float_to_bf16, Op<float>>(out, a, b, count);
    return;
  }
}

} // namespace

void reduce(void* out, const void* a, const void* b, std::size_t count, DataType type,
            ReduceOp op) {
  if (type == DataType::int32 && (op == ReduceOp::sum || op == ReduceOp::prod)) {
    if (op == ReduceOp::sum) {
      reduce_int32<Sum>(out, a, b, count);
    } else {
      reduce_int32<Prod>(out, a, b, count);
    }
    return;
  }
  switch (op) {
  case ReduceOp::sum: reduce_typed<Sum>(out, a, b, count, type); return;
  case ReduceOp::prod: reduce_typed<Prod>(out, a, b, count, type); return;
  case ReduceOp::min: reduce_typed<Min>(out, a, b, count, type); return;
  case ReduceOp::max: reduce_typed<Max>(out, a, b, count, type); return;
  }
}

} // namespace ddl::coll
