// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "src/collectives/collective.hpp"

namespace ddl::coll {

// all_reduce_perf's knobs (nccl-tests names and defaults, warmup 5).
struct SweepOptions {
  std::size_t min_bytes = 8;
  std::size_t max_bytes = 128u << 20;
  std::size_t step_factor = 2;   // used when step_bytes is 0
  std::size_t step_bytes = 0;    // additive step (-i)
  int iters = 20;
  int warmup_iters = 5;
  int check = 1;                 // verification runs per size; 0 = off
  DataType type = DataType::float32;
  ReduceOp op = ReduceOp::sum;
};

struct Measurement {
  double time_us = 0;
  double algbw = 0;              // GB/s, 1e9 bytes
  double busbw = 0;
  long long wrong = -1;          // -1: not checked (N/A)
};

struct SizeResult {
  std::size_t bytes = 0;
  std::size_t count = 0;
  DataType type = DataType::float32;
  ReduceOp op = ReduceOp::sum;
  Measurement out_of_place;
  Measurement in_place;
};

struct SweepReport {
  std::string transport;
  int world_size = 0;
  std::vector<SizeResult> rows;
  double avg_busbw = 0;          // mean busbw over every row and placement
  long long wrong = 0;           // total wrong elements (0 when unchecked)
};

// The sizes swept: min, then *factor (or +step) while <= max.
std::vector<std::size_t> sweep_sizes(const SweepOptions& options);

// busbw = algbw * 2(n-1)/n.
double bus_bandwidth(double algbw, int world);

// Runs the whole sweep on every rank (all ranks call it alike). Each size is
// timed out of place, then in place: one untimed op, a barrier, `iters` ops
// back to back (buffer offsets rotate so small sizes are not cache-hot), time
// averaged over ranks; then, outside the timed loop, `check` verifications
// with fresh data (the out-of-place send buffer must stay untouched); wrong
// counts are summed over ranks. `on_row` sees each finished row.
Result<SweepReport> run_sweep(Collective& collective, const SweepOptions& options,
                              const std::function<void(const SizeResult&)>& on_row);

} // namespace ddl::coll
