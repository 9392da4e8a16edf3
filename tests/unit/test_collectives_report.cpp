// SPDX-License-Identifier: MIT
// The benchmark's table against nccl-tests' all_reduce_perf output.
#include <catch2/catch.hpp>

#include <sstream>

#include "src/collectives/report.hpp"

using namespace ddl::coll;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
  }
  return lines;
}

SweepReport sample_report() {
  SweepReport report;
  report.transport = "tcp";
  report.world_size = 8;
  SizeResult row;
  row.bytes = 134217728;
  row.count = 33554432;
  row.out_of_place = {1234.5, 108.72, 190.26, 0};
  row.in_place = {1230.1, 109.11, 190.94, 0};
  report.rows.push_back(row);
  report.avg_busbw = 95.1234;
  return report;
}

} // namespace

TEST_CASE("report: header, rows and footer are all_reduce_perf's, byte for byte", "[report]") {
  SweepOptions options;
  ReportContext context{"0.1.0", "tcp", 8, {"a"}, {"ring"}, {}};
  auto lines = lines_of(format_table(options, context, sample_report()));
  // Golden lines from nccl-tests 2.19 (trailing blanks included).
  std::vector<std::string> golden = {
      "#                                                              out-of-place                       in-place          ",
      "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong ",
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         ",
      "   134217728      33554432     float     sum      -1  1234.50  108.72  190.26       0  1230.10  109.11  190.94       0",
      "# Out of bounds values : 0 OK",
      "# Avg bus bandwidth    : 95.1234 ",
      "#",
      "# Collective test concluded: all_reduce_perf",
  };
  REQUIRE(lines.size() >= golden.size());
  std::vector<std::string> tail(lines.end() - static_cast<long>(golden.size()), lines.end());
  CHECK(tail == golden);
  CHECK(lines[0] == "# ddl 0.1.0 bench allreduce: transport tcp, 8 ranks on 1 host: a");
  CHECK(lines[1] == "# tcp: ring");
  CHECK(lines[2] == "# Collective test starting: all_reduce_perf");
  CHECK(lines[3] == "# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 "
                    "iters: 20 agg iters: 1 validation: 1 graph: 0");
}

TEST_CASE("report: rows parse as nccl-tests columns", "[report]") {
  SizeResult row;
  row.bytes = 8;
  row.count = 2;
  row.type = DataType::float16;
  row.op = ReduceOp::max;
  row.out_of_place = {55.18, 0.0001, 0.0002, 3};
  row.in_place = {123456789.0, 1e-9, 0, -1};
  std::string text = format_row(row);
  CHECK(text ==
        "           8             2      half     max      -1    55.18    0.00    0.00       3  "
        "1.2e+08    0.00    0.00     N/A\n");
  std::istringstream in(text);
  std::string size, count, type, redop, root, t1, a1, b1, w1, t2, a2, b2, w2;
  in >> size >> count >> type >> redop >> root >> t1 >> a1 >> b1 >> w1 >> t2 >> a2 >> b2 >> w2;
  CHECK(w2 == "N/A");
}

TEST_CASE("report: float fields follow getFloatStr", "[report]") {
  CHECK(float_field(1234.5, 7) == "1234.50");
  CHECK(float_field(21286.04, 7) == "21286.0");
  CHECK(float_field(123456.4, 7) == " 123456");
  CHECK(float_field(1234567.0, 7) == "1234567");
  CHECK(float_field(12345678.0, 7) == "1.2e+07");
  CHECK(float_field(605.32, 6) == "605.32");
  CHECK(float_field(0.0, 6) == "  0.00");
}

TEST_CASE("report: JSON shape", "[report]") {
  std::string json = format_json(sample_report());
  CHECK(json ==
        R"({"transport": "tcp", "world_size": 8, "results": [{"size": 134217728, "count": 33554432, )"
        R"("type": "float", "redop": "sum", "out_of_place": {"time_us": 1234.5, "algbw": 108.72, )"
        R"("busbw": 190.26, "wrong": 0}, "in_place": {"time_us": 1230.1, "algbw": 109.11, )"
        R"("busbw": 190.94, "wrong": 0}}], "avg_busbw": 95.1234})"
        "\n");
}

TEST_CASE("report: sizes accept binary K, M, G", "[report]") {
  CHECK(parse_size("8") == 8u);
  CHECK(parse_size("64K") == 65536u);
  CHECK(parse_size("128M") == 134217728u);
  CHECK(parse_size("1G") == 1073741824u);
  CHECK_FALSE(parse_size("12X").has_value());
  CHECK_FALSE(parse_size("").has_value());
  CHECK_FALSE(parse_size("-1").has_value());
}

TEST_CASE("sweep sizes: factor and additive steps", "[report]") {
  SweepOptions o;
  o.min_bytes = 8;
  o.max_bytes = 64;
  CHECK(sweep_sizes(o) == std::vector<std::size_t>{8, 16, 32, 64});
  o.step_bytes = 20;
  CHECK(sweep_sizes(o) == std::vector<std::size_t>{8, 28, 48});
  CHECK(bus_bandwidth(10.0, 4) == Approx(15.0));
  CHECK(bus_bandwidth(10.0, 1) == Approx(0.0));
}
