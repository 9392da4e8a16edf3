// SPDX-License-Identifier: MIT
#include "src/collectives/collective.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>

namespace ddl::coll {

Result<double> Collective::time_ops(int iters, const std::function<Result<void>(int)>& op) {
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) {
    if (auto ok = op(i); !ok) {
      return fail(ok.error());
    }
  }
  if (auto ok = synchronize(); !ok) {
    return fail(ok.error());
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

Result<Buffer> HostCollective::allocate(std::size_t bytes) {
  constexpr std::size_t alignment = 64;
  std::size_t rounded = (std::max<std::size_t>(bytes, 1) + alignment - 1) / alignment * alignment;
  void* ptr = std::aligned_alloc(alignment, rounded);
  if (ptr == nullptr) {
    return fail(ExitCode::launch, "out of memory allocating " + std::to_string(bytes) + " bytes");
  }
  std::memset(ptr, 0, rounded);
  return Buffer(ptr, [](void* p) { std::free(p); });
}

Result<void> HostCollective::upload(void* dst, const void* host_src, std::size_t bytes) {
  std::memcpy(dst, host_src, bytes);
  return {};
}

Result<void> HostCollective::download(void* host_dst, const void* src, std::size_t bytes) {
  std::memcpy(host_dst, src, bytes);
  return {};
}

Result<void> HostCollective::host_sum(std::span<double> values) {
  return allreduce(values.data(), values.data(), values.size(), DataType::float64, ReduceOp::sum);
}

} // namespace ddl::coll
