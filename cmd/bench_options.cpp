// SPDX-License-Identifier: MIT
// GCC 12 reports a false "potential null pointer dereference" inside CLI11's
// split() once it is inlined here.
#pragma GCC diagnostic ignored "-Wnull-dereference"

#include "cmd/bench_options.hpp"

#include <fmt/core.h>

#include "src/collectives/report.hpp"

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

Result<coll::WorkerOptions> worker_options(const BenchFlags& flags) {
  coll::WorkerOptions out;
  std::vector<std::string> problems;
  auto size = [&](const std::string& text, const char* flag, std::size_t& into) {
    if (auto value = coll::parse_size(text)) {
      into = *value;
    } else {
      problems.push_back(fmt::format("{}: '{}' is not a size (e.g. 8, 64K, 128M, 1G)", flag, text));
    }
  };
  size(flags.min_bytes, "--minbytes", out.sweep.min_bytes);
  size(flags.max_bytes, "--maxbytes", out.sweep.max_bytes);
  if (flags.step_bytes) {
    size(*flags.step_bytes, "--stepbytes", out.sweep.step_bytes);
    if (out.sweep.step_bytes == 0) {
      problems.push_back("--stepbytes must be above 0");
    }
  }
  out.sweep.step_factor = flags.step_factor;
  if (!flags.step_bytes && flags.step_factor < 2) {
    problems.push_back("--stepfactor must be 2 or more (use --stepbytes for additive steps)");
  }
  if (out.sweep.min_bytes > out.sweep.max_bytes) {
    problems.push_back("--minbytes is larger than --maxbytes");
  }
  if (flags.iters < 1) {
    problems.push_back("--iters must be 1 or more");
  }
  if (flags.warmup_iters < 0 || flags.check < 0) {
    problems.push_back("--warmup_iters and --check cannot be negative");
  }
  out.sweep.iters = flags.iters;
  out.sweep.warmup_iters = flags.warmup_iters;
  out.sweep.check = flags.check;
  if (auto type = coll::parse_datatype(flags.datatype)) {
    out.sweep.type = *type;
  } else {
    problems.push_back(fmt::format(
        "--datatype: unknown type '{}'; use float, double, int32, half or bfloat16", flags.datatype));
  }
  if (auto op = coll::parse_op(flags.op)) {
    out.sweep.op = *op;
  } else {
    problems.push_back(fmt::format("--op: unknown op '{}'; use sum, prod, min or max", flags.op));
  }
  if (flags.transport != "auto" && flags.transport != "tcp" && flags.transport != "nccl" &&
      flags.transport != "mpi") {
    problems.push_back(fmt::format("--transport: unknown transport '{}'; use tcp, nccl or mpi",
                                   flags.transport));
  }
  if (flags.transport == "mpi" &&
      (out.sweep.type == coll::DataType::float16 || out.sweep.type == coll::DataType::bfloat16)) {
    problems.push_back("--transport mpi has no half or bfloat16; use float, double or int32");
  }
  if (flags.streams < 1 || flags.streams > 64) {
    problems.push_back("--streams must be between 1 and 64");
  }
  out.transport = flags.transport;
  out.tcp.streams = flags.streams;
  out.progress = flags.progress;
  if (!problems.empty()) {
    std::string message;
    for (const auto& p : problems) {
      message += (message.empty() ? "" : "\n") + p;
    }
    return fail(ExitCode::usage, message);
  }
  return out;
}

std::vector<std::string> worker_args(const coll::WorkerOptions& o) {
  std::vector<std::string> args = {
      "-b", std::to_string(o.sweep.min_bytes), "-e", std::to_string(o.sweep.max_bytes),
      "-f", std::to_string(o.sweep.step_factor), "-n", std::to_string(o.sweep.iters),
      "-w", std::to_string(o.sweep.warmup_iters), "-c", std::to_string(o.sweep.check),
      "-d", std::string(coll::to_string(o.sweep.type)), "-o", std::string(coll::to_string(o.sweep.op)),
      "--transport", o.transport, "--streams", std::to_string(o.tcp.streams)};
  if (o.sweep.step_bytes > 0) {
    args.insert(args.end(), {"-i", std::to_string(o.sweep.step_bytes)});
  }
  if (o.progress) {
    args.emplace_back("--progress");
  }
  return args;
}

} // namespace ddl::cmd
