// SPDX-License-Identifier: MIT
#pragma once

#include <CLI/CLI.hpp>

#include "src/collectives/bench_flags.hpp"

namespace ddl::cmd {

// all_reduce_perf's flags (src/collectives/bench_flags.hpp), shared by `ddl
// bench allreduce` and the hidden `ddl worker allreduce` it starts on every rank.
using coll::BenchFlags;
using coll::worker_args;
using coll::worker_options;

void add_bench_flags(CLI::App& sub, BenchFlags& flags);

} // namespace ddl::cmd
