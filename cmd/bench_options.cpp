// SPDX-License-Identifier: MIT
// GCC 12 reports a false "potential null pointer dereference" inside CLI11's
// split() once it is inlined here.
#pragma GCC diagnostic ignored "-Wnull-dereference"

#include "cmd/bench_options.hpp"

namespace ddl::cmd {

void add_bench_flags(CLI::App& sub, BenchFlags& flags) {
  sub.add_option("-b,--minbytes", flags.min_bytes, "First size in bytes; K, M, G are binary (default 8)");
  sub.add_option("-e,--maxbytes", flags.max_bytes, "Last size in bytes (default 128M)");
  sub.add_option("-f,--stepfactor", flags.step_factor, "Multiply the size by this each step (default 2)");
  sub.add_option("-i,--stepbytes", flags.step_bytes, "Add this many bytes each step instead");
  sub.add_option("-n,--iters", flags.iters, "Timed iterations per size (default 20)");
  sub.add_option("-w,--warmup_iters", flags.warmup_iters, "Untimed iterations before the sweep (default 5)");
  sub.add_option("-c,--check", flags.check, "Verification runs per size; 0 = off (default 1)");
  sub.add_option("-d,--datatype", flags.datatype, "float, double, int32, half or bfloat16 (default float)");
  sub.add_option("-o,--op", flags.op, "sum, prod, min or max (default sum)");
  sub.add_option("--transport", flags.transport,
                 "tcp, nccl or mpi (default: nccl when every rank sees a GPU, else tcp)");
  sub.add_option("--streams", flags.streams, "tcp: TCP connections per ring neighbour (default 1)");
}

} // namespace ddl::cmd
