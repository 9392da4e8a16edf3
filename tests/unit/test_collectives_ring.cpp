// SPDX-License-Identifier: MIT
// The TCP ring with n = 1..8 ranks as threads on loopback; their addresses
// are exchanged in process (the real thing uses the rendezvous).
#include <catch2/catch.hpp>

#include <bit>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "src/collectives/doubling_schedule.hpp"
#include "src/collectives/ring_schedule.hpp"
#include "src/collectives/sweep.hpp"
#include "src/collectives/tcp_ring.hpp"
#include "src/collectives/verify.hpp"

using namespace ddl::coll;

namespace {

// An in-process allgather for `world` threads, usable once.
class FakeExchange {
public:
  explicit FakeExchange(int world) : values_(static_cast<std::size_t>(world)) {}
  Allgather for_rank(int rank) {
    return [this, rank](const std::string& mine) -> ddl::Result<std::vector<std::string>> {
      std::unique_lock lock(mutex_);
      values_[static_cast<std::size_t>(rank)] = mine;
      ++arrived_;
      changed_.notify_all();
      changed_.wait(lock, [this] { return arrived_ == values_.size(); });
      return values_;
    };
  }

private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::string> values_;
  std::size_t arrived_ = 0;
};

struct Case {
  std::size_t count;
  DataType type;
  ReduceOp op;
  bool in_place;
};

// Runs every case on every rank in lockstep; returns the wrong elements seen.
std::size_t run_cases(int world, const std::vector<Case>& cases, const TcpOptions& options) {
  FakeExchange exchange(world);
  std::vector<std::size_t> wrong(static_cast<std::size_t>(world), 0);
  std::vector<std::string> errors(static_cast<std::size_t>(world));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world; ++rank) {
    threads.emplace_back([&, rank] {
      auto r = static_cast<std::size_t>(rank);
      auto ring = connect_tcp_ring(rank, world, exchange.for_rank(rank), options);
      if (!ring) {
        errors[r] = ring.error().message;
        return;
      }
      std::uint64_t seed = 1;
      for (const Case& c : cases) {
        std::size_t bytes = c.count * element_size(c.type);
        std::vector<char> send(bytes + 1), recv(bytes + 1), expected(bytes + 1), original(bytes + 1);
        fill_rank_data(send.data(), c.count, c.type, c.op, rank, world, seed);
        original = send;
        fill_expected(expected.data(), c.count, c.type, c.op, world, seed);
        char* out = c.in_place ? send.data() : recv.data();
        auto ok = (*ring)->allreduce(send.data(), out, c.count, c.type, c.op);
        if (!ok) {
          errors[r] = ok.error().message;
          return;
        }
        wrong[r] += count_mismatches(out, expected.data(), c.count, c.type);
        if (!c.in_place) {
          wrong[r] += count_mismatches(send.data(), original.data(), c.count, c.type);
        }
        ++seed;
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  for (const auto& e : errors) {
    INFO(e);
    CHECK(e.empty());
  }
  std::size_t total = 0;
  for (auto w : wrong) {
    total += w;
  }
  return total;
}

} // namespace

TEST_CASE("ring schedule: every rank sends 2(n-1)/n of the buffer", "[collectives]") {
  for (int world = 2; world <= 8; ++world) {
    for (std::size_t count : {std::size_t{1}, std::size_t{7}, std::size_t{1000}, std::size_t{1001}}) {
      std::size_t total_sent = 0;
      std::size_t total_received = 0;
      for (int rank = 0; rank < world; ++rank) {
        auto schedule = make_ring_schedule(rank, world, count, 64);
        std::size_t sent = 0;
        std::size_t received = 0;
        for (const auto& s : schedule.sends) sent += s.count;
        for (const auto& s : schedule.receives) received += s.count;
        total_sent += sent;
        total_received += received;
      }
      // Each chunk travels n-1 hops in each phase.
      CHECK(total_sent == 2 * static_cast<std::size_t>(world - 1) * count);
      CHECK(total_received == total_sent);
    }
  }
}

// Plays the butterfly steps of all ranks with sets of contributions per block
// as the data: every rank must end with each rank's contribution exactly once
// in every block, and every send must meet a receive of the same blocks from
// its peer at the same moment.
void check_butterfly(int world, Butterfly kind) {
  using Held = std::vector<std::multiset<int>>;  // per block
  auto blocks = static_cast<std::size_t>(butterfly_blocks(world));
  std::vector<std::vector<DoublingStep>> steps;
  std::vector<Held> held;
  for (int rank = 0; rank < world; ++rank) {
    steps.push_back(make_doubling_steps(rank, world, kind));
    held.push_back(Held(blocks, std::multiset<int>{rank}));
  }
  auto sends = [](const DoublingStep& step) {
    return step.action != DoublingAction::receive && step.action != DoublingAction::receive_reduce;
  };
  auto receives = [](const DoublingStep& step) { return step.action != DoublingAction::send; };
  auto receive = [&](std::size_t to, const DoublingStep& step, const Held& from) {
    bool replacing = step.action == DoublingAction::receive || step.action == DoublingAction::exchange;
    for (int b = step.receive.first; b < step.receive.last; ++b) {
      auto block = static_cast<std::size_t>(b);
      if (replacing) held[to][block].clear();
      held[to][block].insert(from[block].begin(), from[block].end());
    }
  };
  std::vector<std::size_t> next(static_cast<std::size_t>(world), 0);
  // Each round, ranks whose next steps face each other do them together.
  for (bool moved = true; moved;) {
    moved = false;
    auto before = held;
    std::vector<bool> busy(static_cast<std::size_t>(world), false);
    for (int a = 0; a < world; ++a) {
      auto ua = static_cast<std::size_t>(a);
      if (busy[ua] || next[ua] == steps[ua].size()) continue;
      const DoublingStep& sa = steps[ua][next[ua]];
      REQUIRE(sa.peer != a);
      auto ub = static_cast<std::size_t>(sa.peer);
      if (busy[ub] || next[ub] == steps[ub].size() || steps[ub][next[ub]].peer != a) continue;
      const DoublingStep& sb = steps[ub][next[ub]];
      REQUIRE(sends(sa) == receives(sb));
      REQUIRE(sends(sb) == receives(sa));
      if (sends(sa)) REQUIRE(sa.send == sb.receive);
      if (sends(sb)) REQUIRE(sb.send == sa.receive);
      receive(ua, sa, before[ub]);
      receive(ub, sb, before[ua]);
      ++next[ua];
      ++next[ub];
      busy[ua] = busy[ub] = true;
      moved = true;
    }
  }
  std::multiset<int> all;
  for (int rank = 0; rank < world; ++rank) {
    all.insert(rank);
    CHECK(next[static_cast<std::size_t>(rank)] == steps[static_cast<std::size_t>(rank)].size());
  }
  for (int rank = 0; rank < world; ++rank) {
    CHECK(held[static_cast<std::size_t>(rank)] == Held(blocks, all));
  }
}

TEST_CASE("butterfly steps: every rank ends with every contribution once", "[collectives]") {
  for (int world = 1; world <= 13; ++world) {
    INFO("world " << world);
    check_butterfly(world, Butterfly::doubling);
    check_butterfly(world, Butterfly::halving_doubling);
    for (int rank = 0; rank < world; ++rank) {  // they share the partner links
      CHECK(doubling_peers(make_doubling_steps(rank, world, Butterfly::doubling)) ==
            doubling_peers(make_doubling_steps(rank, world, Butterfly::halving_doubling)));
    }
  }
}

TEST_CASE("halving-doubling: each rank sends what the ring sends, in 2 log2(n) exchanges",
          "[collectives]") {
  for (int world : {2, 4, 8, 16}) {
    int p = butterfly_blocks(world);
    for (int rank = 0; rank < world; ++rank) {
      auto steps = make_doubling_steps(rank, world, Butterfly::halving_doubling);
      int sent = 0;
      for (const auto& step : steps) sent += step.send.last - step.send.first;
      CHECK(sent == 2 * (p - 1));  // blocks of 1/p: 2(n-1)/n of the buffer
      CHECK(steps.size() == 2 * static_cast<std::size_t>(std::countr_zero(static_cast<unsigned>(p))));
    }
  }
}

TEST_CASE("tcp ring: every dtype and op, n = 1..8, odd sizes", "[collectives][tcp]") {
  std::vector<Case> cases;
  for (DataType type : {DataType::float32, DataType::float64, DataType::int32,
                        DataType::float16, DataType::bfloat16}) {
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max}) {
      for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{1001},
                                std::size_t{4099}}) {
        cases.push_back({count, type, op, count % 2 == 1});
      }
    }
  }
  TcpOptions options;
  options.segment_bytes = 4096;  // many segments per chunk: exercises pipelining
  struct Algorithms {
    std::size_t doubling_bytes;
    std::size_t halving_bytes;
  };
  // The ring at every size; recursive doubling for all; halving-doubling for all.
  for (Algorithms use : {Algorithms{0, 0}, Algorithms{1 << 20, 0}, Algorithms{0, 1 << 20}}) {
    options.doubling_bytes = use.doubling_bytes;
    options.halving_bytes = use.halving_bytes;
    for (int world = 1; world <= 8; ++world) {
      INFO("world " << world << " doubling up to " << use.doubling_bytes << " halving up to "
                    << use.halving_bytes);
      CHECK(run_cases(world, cases, options) == 0);
    }
  }
}

TEST_CASE("tcp ring: several streams, large buffers, in and out of place", "[collectives][tcp]") {
  std::vector<Case> cases = {
      {1 << 18, DataType::float32, ReduceOp::sum, false},
      {(1 << 18) + 13, DataType::float32, ReduceOp::sum, true},
      {100'001, DataType::float16, ReduceOp::max, false},
      {50'003, DataType::float64, ReduceOp::prod, true},
  };
  for (int streams : {1, 3}) {
    // The ring, then halving-doubling (which uses the partner links).
    for (std::size_t halving_bytes : {std::size_t{0}, std::size_t{4} << 20}) {
      TcpOptions options;
      options.streams = streams;
      options.segment_bytes = 64 * 1024;
      options.halving_bytes = halving_bytes;
      for (int world : {2, 3, 5}) {
        INFO("world " << world << " streams " << streams << " halving up to " << halving_bytes);
        CHECK(run_cases(world, cases, options) == 0);
      }
    }
  }
}

TEST_CASE("reduce: half and bfloat16 round trip small integers", "[collectives]") {
  for (int v = -2048; v <= 2048; ++v) {
    CHECK(half_to_float(float_to_half(static_cast<float>(v))) == static_cast<float>(v));
  }
  for (int v = -256; v <= 256; ++v) {
    CHECK(bf16_to_float(float_to_bf16(static_cast<float>(v))) == static_cast<float>(v));
  }
  CHECK(float_to_half(1.0f) == 0x3c00);
  CHECK(float_to_half(65504.0f) == 0x7bff);
  CHECK(float_to_half(1e6f) == 0x7c00);
  CHECK(half_to_float(0x0001) == Approx(5.960464477539063e-08));
}

TEST_CASE("sweep over the tcp ring: verified, timed, identical on every rank", "[collectives][tcp]") {
  const int world = 3;
  FakeExchange exchange(world);
  SweepOptions options;
  options.min_bytes = 8;
  options.max_bytes = 64 * 1024;
  options.iters = 10;
  options.warmup_iters = 1;
  options.type = DataType::float16;
  std::vector<SweepReport> reports(world);
  std::vector<std::string> errors(world);
  std::vector<double> elapsed(world);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world; ++rank) {
    threads.emplace_back([&, rank] {
      auto r = static_cast<std::size_t>(rank);
      auto ring = connect_tcp_ring(rank, world, exchange.for_rank(rank), TcpOptions{});
      if (!ring) {
        errors[r] = ring.error().message;
        return;
      }
      auto start = std::chrono::steady_clock::now();
      auto report = run_sweep(**ring, options, nullptr);
      elapsed[r] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!report) {
        errors[r] = report.error().message;
        return;
      }
      reports[r] = *report;
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  for (const auto& e : errors) {
    CHECK(e == "");
  }
  REQUIRE(reports[0].rows.size() == 14);
  CHECK(reports[0].wrong == 0);
  CHECK(reports[0].rows[0].count == 4);
  // time is per operation: all timed operations fit in the sweep's wall time.
  double timed_us = 0;
  for (const auto& row : reports[0].rows) {
    timed_us += (row.out_of_place.time_us + row.in_place.time_us) * options.iters;
  }
  CHECK(timed_us < elapsed[0] * 1e6);
  CHECK(timed_us > 0.01 * elapsed[0] * 1e6);
  for (std::size_t i = 0; i < reports[0].rows.size(); ++i) {
    const auto& row = reports[0].rows[i];
    CHECK(row.out_of_place.wrong == 0);
    CHECK(row.in_place.wrong == 0);
    CHECK(row.out_of_place.time_us > 0);
    // Times are averaged over ranks, so every rank reports the same.
    CHECK(row.out_of_place.time_us == reports[2].rows[i].out_of_place.time_us);
  }
}

namespace {

// Test double: a real tcp ring whose results are spoiled on purpose, to prove
// that verification sees a wrong element and a touched send buffer.
class SpoilingCollective final : public Collective {
public:
  SpoilingCollective(std::unique_ptr<Collective> inner, bool spoil_send)
      : inner_(std::move(inner)), spoil_send_(spoil_send) {}
  int rank() const override { return inner_->rank(); }
  int world_size() const override { return inner_->world_size(); }
  std::string name() const override { return "spoiled"; }
  std::vector<std::string> facts() const override { return {}; }
  ddl::Result<Buffer> allocate(std::size_t bytes) override { return inner_->allocate(bytes); }
  ddl::Result<void> upload(void* d, const void* s, std::size_t b) override { return inner_->upload(d, s, b); }
  ddl::Result<void> download(void* d, const void* s, std::size_t b) override { return inner_->download(d, s, b); }
  ddl::Result<void> synchronize() override { return inner_->synchronize(); }
  ddl::Result<void> host_sum(std::span<double> v) override { return inner_->host_sum(v); }
  ddl::Result<void> allreduce(const void* send, void* recv, std::size_t count, DataType type,
                              ReduceOp op) override {
    auto ok = inner_->allreduce(send, recv, count, type, op);
    if (ok && count > 0 && rank() == 1) {
      if (spoil_send_ && send != recv) {
        static_cast<float*>(const_cast<void*>(send))[0] += 1.0f;
      } else if (!spoil_send_) {
        static_cast<float*>(recv)[count - 1] += 1.0f;
      }
    }
    return ok;
  }

private:
  std::unique_ptr<Collective> inner_;
  bool spoil_send_;
};

long long spoiled_sweep_wrong(bool spoil_send) {
  const int world = 2;
  FakeExchange exchange(world);
  SweepOptions options;
  options.min_bytes = 64;
  options.max_bytes = 64;
  options.iters = 1;
  options.warmup_iters = 0;
  std::vector<long long> wrong(world, -1);
  std::vector<long long> in_place_wrong(world, -1);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world; ++rank) {
    threads.emplace_back([&, rank] {
      auto ring = connect_tcp_ring(rank, world, exchange.for_rank(rank), TcpOptions{});
      if (!ring) {
        return;
      }
      SpoilingCollective spoiled(std::move(*ring), spoil_send);
      auto report = run_sweep(spoiled, options, nullptr);
      if (report) {
        wrong[static_cast<std::size_t>(rank)] = report->rows[0].out_of_place.wrong;
        in_place_wrong[static_cast<std::size_t>(rank)] = report->rows[0].in_place.wrong;
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  // Wrong counts are summed over ranks: every rank reports the same.
  CHECK(wrong[0] == wrong[1]);
  CHECK(in_place_wrong[0] == in_place_wrong[1]);
  CHECK(in_place_wrong[0] == (spoil_send ? 0 : 1));
  return wrong[0];
}

} // namespace

TEST_CASE("sweep: a wrong element or a touched send buffer is counted", "[collectives][tcp]") {
  CHECK(spoiled_sweep_wrong(false) == 1);
  CHECK(spoiled_sweep_wrong(true) == 1);
}
