// SPDX-License-Identifier: MIT
// all_reduce_perf's flags read into the bench worker's options, and back.
#include <catch2/catch.hpp>

#include "src/collectives/bench_flags.hpp"

using ddl::coll::BenchFlags;

TEST_CASE("bench flags: the defaults are all_reduce_perf's, and written back the same", "[collectives]") {
  auto options = ddl::coll::worker_options(BenchFlags{});
  REQUIRE(options);
  CHECK(options->sweep.min_bytes == 8);
  CHECK(options->sweep.max_bytes == 128u << 20);
  CHECK(options->transport == "auto");
  CHECK(ddl::coll::worker_args(*options) ==
        std::vector<std::string>{"-b", "8", "-e", "134217728", "-f", "2", "-n", "20", "-w", "5", "-c", "1", "-d",
                                 "float", "-o", "sum", "--transport", "auto", "--streams", "1"});
}

TEST_CASE("bench flags: every wrong flag is named at once, exit 2", "[collectives]") {
  BenchFlags flags;
  flags.min_bytes = "lots";
  flags.iters = 0;
  flags.op = "avg";
  flags.streams = 65;
  auto options = ddl::coll::worker_options(flags);
  REQUIRE_FALSE(options);
  CHECK(options.error().code == ddl::ExitCode::usage);
  CHECK(options.error().message ==
        "--minbytes: 'lots' is not a size (e.g. 8, 64K, 128M, 1G)\n"
        "--iters must be 1 or more\n"
        "--op: unknown op 'avg'; use sum, prod, min or max\n"
        "--streams must be between 1 and 64");
}
