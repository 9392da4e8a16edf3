// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>

#include "src/collectives/types.hpp"

namespace ddl::coll {

// Test data whose reduction is exact in any order, for any ring or tree:
// sum: small integers in [-v, v] with world*v below the type's exact-integer
// limit (2^24 float, 2^11 half, 2^8 bfloat16); prod: +-1 except one rank
// per element that gives +-2; min/max: integers in [-100, 100]. Every value
// depends on (rank, index, seed), so a misrouted chunk shows.
void fill_rank_data(void* out, std::size_t count, DataType type, ReduceOp op, int rank,
                    int world, std::uint64_t seed);
// The reduction of every rank's fill_rank_data.
void fill_expected(void* out, std::size_t count, DataType type, ReduceOp op, int world,
                   std::uint64_t seed);
// Elements whose bits differ.
std::size_t count_mismatches(const void* a, const void* b, std::size_t count, DataType type);

} // namespace ddl::coll
