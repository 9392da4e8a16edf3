// SPDX-License-Identifier: MIT
#include "src/collectives/bench_flags.hpp"

#include <fmt/core.h>

#include "src/collectives/report.hpp"

namespace ddl::coll {

Result<WorkerOptions> worker_options(const BenchFlags& flags) {
  WorkerOptions out;
  std::vector<std::string> problems;
  auto size = [&](const std::string& text, const char* flag, std::size_t& into) {
    if (auto value = parse_size(text)) {
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
  if (auto type = parse_datatype(flags.datatype)) {
    out.sweep.type = *type;
  } else {
    problems.push_back(fmt::format(
        "--datatype: unknown type '{}'; use float, double, int32, half or bfloat16", flags.datatype));
  }
  if (auto op = parse_op(flags.op)) {
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
      (out.sweep.type == DataType::float16 || out.sweep.type == DataType::bfloat16)) {
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

std::vector<std::string> worker_args(const WorkerOptions& o) {
  std::vector<std::string> args = {
      "-b", std::to_string(o.sweep.min_bytes), "-e", std::to_string(o.sweep.max_bytes),
      "-f", std::to_string(o.sweep.step_factor), "-n", std::to_string(o.sweep.iters),
      "-w", std::to_string(o.sweep.warmup_iters), "-c", std::to_string(o.sweep.check),
      "-d", std::string(to_string(o.sweep.type)), "-o", std::string(to_string(o.sweep.op)),
      "--transport", o.transport, "--streams", std::to_string(o.tcp.streams)};
  if (o.sweep.step_bytes > 0) {
    args.insert(args.end(), {"-i", std::to_string(o.sweep.step_bytes)});
  }
  if (o.progress) {
    args.emplace_back("--progress");
  }
  return args;
}

} // namespace ddl::coll
