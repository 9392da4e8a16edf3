// SPDX-License-Identifier: MIT
#include "src/collectives/verify.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace ddl::coll {

namespace {

std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

long long exact_limit(DataType type) {
  switch (type) {
  case DataType::float16: return 1 << 11;
  case DataType::bfloat16: return 1 << 8;
  case DataType::float32: return 1 << 24;
  default: return 1LL << 31;
  }
}

long long value_of(std::size_t index, DataType type, ReduceOp op, int rank, int world,
                   std::uint64_t seed) {
  std::uint64_t rank_key = static_cast<std::uint64_t>(rank) * std::uint64_t{0x100000001b3};
  std::uint64_t h = mix(seed ^ mix(rank_key ^ mix(std::uint64_t{index})));
  switch (op) {
  case ReduceOp::sum: {
    long long limit = std::clamp<long long>(exact_limit(type) / world - 1, 1, 15);
    return static_cast<long long>(h % static_cast<std::uint64_t>(2 * limit + 1)) - limit;
  }
  case ReduceOp::prod: {
    auto owner = static_cast<int>((index + seed) % static_cast<std::uint64_t>(world));
    long long magnitude = owner == rank ? 2 : 1;
    return (h & 1u) != 0 ? -magnitude : magnitude;
  }
  case ReduceOp::min:
  case ReduceOp::max:
    return static_cast<long long>(h % 201) - 100;
  }
  return 0;
}

long long combine(long long a, long long b, ReduceOp op) {
  switch (op) {
  case ReduceOp::sum: return a + b;
  case ReduceOp::prod: return a * b;
  case ReduceOp::min: return std::min(a, b);
  case ReduceOp::max: return std::max(a, b);
  }
  return a;
}

void store(void* out, std::size_t index, DataType type, long long value) {
  switch (type) {
  case DataType::float32: static_cast<float*>(out)[index] = static_cast<float>(value); return;
  case DataType::float64: static_cast<double*>(out)[index] = static_cast<double>(value); return;
  case DataType::int32:
    static_cast<std::int32_t*>(out)[index] = static_cast<std::int32_t>(value);
    return;
  case DataType::float16:
    static_cast<std::uint16_t*>(out)[index] = float_to_half(static_cast<float>(value));
    return;
  case DataType::bfloat16:
    static_cast<std::uint16_t*>(out)[index] = float_to_bf16(static_cast<float>(value));
    return;
  }
}

} // namespace

void fill_rank_data(void* out, std::size_t count, DataType type, ReduceOp op, int rank,
                    int world, std::uint64_t seed) {
  for (std::size_t i = 0; i < count; ++i) {
    store(out, i, type, value_of(i, type, op, rank, world, seed));
  }
}

void fill_expected(void* out, std::size_t count, DataType type, ReduceOp op, int world,
                   std::uint64_t seed) {
  for (std::size_t i = 0; i < count; ++i) {
    long long acc = value_of(i, type, op, 0, world, seed);
    for (int r = 1; r < world; ++r) {
      acc = combine(acc, value_of(i, type, op, r, world, seed), op);
    }
    store(out, i, type, acc);
  }
}

std::size_t count_mismatches(const void* a, const void* b, std::size_t count, DataType type) {
  std::size_t size = element_size(type);
  const auto* x = static_cast<const unsigned char*>(a);
  const auto* y = static_cast<const unsigned char*>(b);
  if (std::memcmp(x, y, count * size) == 0) {
    return 0;
  }
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < count; ++i) {
    wrong += std::memcmp(x + i * size, y + i * size, size) != 0 ? 1 : 0;
  }
  return wrong;
}

} // namespace ddl::coll
