// SPDX-License-Identifier: MIT
#include "src/collectives/sweep.hpp"

#include <array>
#include <vector>

#include "src/collectives/verify.hpp"

namespace ddl::coll {

std::vector<std::size_t> sweep_sizes(const SweepOptions& options) {
  std::vector<std::size_t> sizes;
  std::size_t size = options.min_bytes;
  while (size <= options.max_bytes) {
    sizes.push_back(size);
    std::size_t next = options.step_bytes > 0 ? size + options.step_bytes
                                              : size * std::max<std::size_t>(options.step_factor, 2);
    if (next <= size) {
      break;  // size 0 with a factor, or overflow
    }
    size = next;
  }
  return sizes;
}

double bus_bandwidth(double algbw, int world) {
  return world > 0 ? algbw * 2.0 * (world - 1) / world : 0.0;
}

namespace {

#define DDL_TRY(expr)                                                                        \
  if (auto&& ddl_try_result = (expr); !ddl_try_result) {                                       \
    return fail(ddl_try_result.error());                                          \
  }

class Sweeper {
public:
  Sweeper(Collective& collective, const SweepOptions& options)
      : c_(collective), o_(options), element_(element_size(options.type)) {}

  Result<void> allocate() {
    max_count_ = o_.max_bytes / element_;
    std::size_t bytes = std::max<std::size_t>(max_count_ * element_, element_);
    auto send = c_.allocate(bytes);
    if (!send) {
      return fail(send.error());
    }
    auto recv = c_.allocate(bytes);
    if (!recv) {
      return fail(recv.error());
    }
    send_ = std::move(*send);
    recv_ = std::move(*recv);
    return {};
  }

  Result<void> warmup() {
    for (int i = 0; i < o_.warmup_iters; ++i) {
      DDL_TRY(c_.allreduce(send_.get(), recv_.get(), max_count_, o_.type, o_.op));
    }
    DDL_TRY(c_.synchronize());
    return barrier();
  }

  Result<Measurement> measure(std::size_t count, bool in_place, std::uint64_t seed) {
    Measurement m;
    auto seconds = time(count, in_place);
    if (!seconds) {
      return fail(seconds.error());
    }
    std::array<double, 1> total{*seconds / o_.iters};
    DDL_TRY(c_.host_sum(total));
    double avg = total[0] / c_.world_size();
    double bytes = static_cast<double>(count * element_);
    m.time_us = avg * 1e6;
    m.algbw = avg > 0 ? bytes / avg / 1e9 : 0.0;
    m.busbw = bus_bandwidth(m.algbw, c_.world_size());
    if (o_.check > 0) {
      double wrong = 0;
      for (int run = 0; run < o_.check; ++run) {
        auto found = verify(count, in_place, seed + static_cast<std::uint64_t>(run));
        if (!found) {
          return fail(found.error());
        }
        wrong += static_cast<double>(*found);
      }
      std::array<double, 1> sum{wrong};
      DDL_TRY(c_.host_sum(sum));
      m.wrong = static_cast<long long>(sum[0]);
    }
    return m;
  }

private:
  Result<void> barrier() {
    std::array<double, 1> token{1.0};
    return c_.host_sum(token);
  }

  Result<double> time(std::size_t count, bool in_place) {
    auto* send = static_cast<char*>(send_.get());
    auto* recv = static_cast<char*>(recv_.get());
    std::size_t bytes = count * element_;
    std::size_t slots = bytes > 0 ? std::max<std::size_t>(max_count_ * element_ / bytes, 1) : 1;
    auto op = [&](int iter) {
      std::size_t offset = bytes * (static_cast<std::size_t>(iter) % slots);
      const void* from = in_place ? recv + offset : send + offset;
      return c_.allreduce(from, recv + offset, count, o_.type, o_.op);
    };
    DDL_TRY(op(0));  // untimed
    DDL_TRY(c_.synchronize());
    DDL_TRY(barrier());
    return c_.time_ops(o_.iters, op);
  }

  Result<std::size_t> verify(std::size_t count, bool in_place, std::uint64_t seed) {
    std::size_t bytes = count * element_;
    host_in_.resize(bytes);
    host_out_.resize(bytes);
    expected_.resize(bytes);
    fill_rank_data(host_in_.data(), count, o_.type, o_.op, c_.rank(), c_.world_size(), seed);
    fill_expected(expected_.data(), count, o_.type, o_.op, c_.world_size(), seed);
    void* target = in_place ? recv_.get() : send_.get();
    DDL_TRY(c_.upload(target, host_in_.data(), bytes));
    DDL_TRY(c_.allreduce(target, recv_.get(), count, o_.type, o_.op));
    DDL_TRY(c_.synchronize());
    DDL_TRY(c_.download(host_out_.data(), recv_.get(), bytes));
    std::size_t wrong = count_mismatches(host_out_.data(), expected_.data(), count, o_.type);
    if (!in_place) {
      DDL_TRY(c_.download(host_out_.data(), send_.get(), bytes));
      wrong += count_mismatches(host_out_.data(), host_in_.data(), count, o_.type);
    }
    return wrong;
  }

  Collective& c_;
  const SweepOptions& o_;
  std::size_t element_;
  std::size_t max_count_ = 0;
  Buffer send_;
  Buffer recv_;
  std::vector<char> host_in_;
  std::vector<char> host_out_;
  std::vector<char> expected_;
};

} // namespace

Result<SweepReport> run_sweep(Collective& collective, const SweepOptions& options,
                              const std::function<void(const SizeResult&)>& on_row) {
  SweepReport report;
  report.transport = collective.name();
  report.world_size = collective.world_size();
  Sweeper sweeper(collective, options);
  DDL_TRY(sweeper.allocate());
  DDL_TRY(sweeper.warmup());
  double busbw_sum = 0;
  std::uint64_t seed = 1;
  for (std::size_t bytes : sweep_sizes(options)) {
    SizeResult row;
    row.count = bytes / element_size(options.type);
    row.bytes = row.count * element_size(options.type);
    row.type = options.type;
    row.op = options.op;
    auto out = sweeper.measure(row.count, false, seed);
    if (!out) {
      return fail(out.error());
    }
    auto in = sweeper.measure(row.count, true, seed + 1000);
    if (!in) {
      return fail(in.error());
    }
    seed += 1;
    row.out_of_place = *out;
    row.in_place = *in;
    busbw_sum += out->busbw + in->busbw;
    report.wrong += std::max(0LL, out->wrong) + std::max(0LL, in->wrong);
    report.rows.push_back(row);
    if (on_row) {
      on_row(row);
    }
  }
  if (!report.rows.empty()) {
    report.avg_busbw = busbw_sum / static_cast<double>(2 * report.rows.size());
  }
  return report;
}

} // namespace ddl::coll
