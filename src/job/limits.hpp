// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>

namespace ddl {

// ddl's documented caps (man page, LIMITS): inputs beyond them are refused
// with exit 2 as soon as they are seen, so that no input costs unbounded
// memory or time.
inline constexpr long long k_max_world_size = 1'000'000;   // ranks in a job, slots of a host
inline constexpr std::size_t k_max_hosts = 65'536;         // hosts in a job (Slurm's range limit)
inline constexpr std::size_t k_max_job_file_bytes = 1 << 20;
inline constexpr std::size_t k_max_hostfile_bytes = 16u << 20;
// Tables, arrays, inline tables and dotted-key parts nested in a job file.
inline constexpr int k_max_job_nesting = 64;

} // namespace ddl
