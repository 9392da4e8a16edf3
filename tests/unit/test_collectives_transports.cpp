// SPDX-License-Identifier: MIT
// The optional transports' error paths (this machine and CI have no GPU),
// and the bench worker end to end over in-process ranks.
#include <catch2/catch.hpp>

#include <condition_variable>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

#include "src/collectives/bench_worker.hpp"
#include "src/collectives/transports.hpp"

using namespace ddl::coll;

TEST_CASE("nccl transport without a GPU: a clear error, exit 3", "[collectives][nccl]") {
  std::string why;
  if (nccl_usable(0, &why)) {
    SUCCEED("a GPU and NCCL are here; the error path cannot be exercised");
    return;
  }
  CHECK_FALSE(why.empty());
  auto joined = connect_nccl(0, 1, 0, [](const std::string& mine) {
    return ddl::Result<std::vector<std::string>>(std::vector<std::string>{mine});
  });
  REQUIRE_FALSE(joined.has_value());
  CHECK(joined.error().code == ddl::ExitCode::launch);
  CHECK(joined.error().message.starts_with(k_nccl_unavailable));
  CHECK(joined.error().message.find(why) != std::string::npos);
  CHECK(joined.error().message.ends_with("; use --transport tcp"));
}

TEST_CASE("mpi transport outside mpirun: a clear error, exit 3", "[collectives][mpi]") {
  if (started_under_mpirun()) {
    SUCCEED("running under mpirun");
    return;
  }
  auto joined = connect_mpi();
  REQUIRE_FALSE(joined.has_value());
  CHECK(joined.error().code == ddl::ExitCode::launch);
  CHECK(joined.error().message.find("the mpi transport ") == 0);
}

namespace {

// A rendezvous stand-in for threads: repeated allgathers and a key store.
class FakeRendezvous {
public:
  explicit FakeRendezvous(int world) : world_(world) {}
  ddl::Result<std::vector<std::string>> allgather(int rank, const std::string& mine) {
    std::unique_lock lock(mutex_);
    std::size_t round = rounds_[rank]++;
    auto& slot = gathered_[round];
    slot.resize(static_cast<std::size_t>(world_));
    slot[static_cast<std::size_t>(rank)] = mine;
    ++arrived_[round];
    changed_.notify_all();
    changed_.wait(lock, [&] { return arrived_[round] == world_; });
    return gathered_[round];
  }
  ddl::Result<void> publish(const std::string& key, const std::string& value) {
    std::lock_guard lock(mutex_);
    store_[key] = value;
    return {};
  }
  std::map<std::string, std::string> store_;

private:
  int world_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<int, std::size_t> rounds_;
  std::map<std::size_t, std::vector<std::string>> gathered_;
  std::map<std::size_t, int> arrived_;
};

} // namespace

TEST_CASE("bench worker: auto picks tcp without GPUs; rank 0 publishes table and JSON",
          "[collectives][tcp]") {
  const int world = 4;
  FakeRendezvous rdzv(world);
  WorkerOptions options;
  options.sweep.min_bytes = 8;
  options.sweep.max_bytes = 1 << 16;
  options.sweep.iters = 2;
  options.sweep.warmup_iters = 1;
  std::vector<int> codes(world, -1);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world; ++rank) {
    threads.emplace_back([&, rank] {
      WorkerContext context;
      context.rank = rank;
      context.world = world;
      context.local_rank = rank;
      context.host = "localhost";
      context.rendezvous_host = "127.0.0.1";
      context.version = "test";
      context.allgather = [&rdzv, rank](const std::string& mine) { return rdzv.allgather(rank, mine); };
      context.publish = [&rdzv](const std::string& k, const std::string& v) { return rdzv.publish(k, v); };
      auto code = run_bench_worker(options, context);
      codes[static_cast<std::size_t>(rank)] = code ? *code : 100 + static_cast<int>(code.error().code);
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  CHECK(codes == std::vector<int>(world, 0));
  std::string table = rdzv.store_[k_bench_table_key];
  CHECK(table.find("# ddl test bench allreduce: transport tcp, 4 ranks on 1 host: localhost") == 0);
  CHECK(table.find("#  Rank  3 Group  0 Pid ") != std::string::npos);
  CHECK(table.find("# Avg bus bandwidth    : ") != std::string::npos);
  CHECK(rdzv.store_[k_bench_json_key].find(R"({"transport": "tcp", "world_size": 4, "results": [)") == 0);
}
