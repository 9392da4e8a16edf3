// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <thread>

#include "rendezvous/client.hpp"
#include "rendezvous/launcher.hpp"

using namespace ddl;
using namespace ddl::rendezvous;

TEST_CASE("JobRendezvous: token, endpoint, attempts and the exit-4 rule", "[rendezvous]") {
  JobSpec job;
  job.name = "train";
  job.rendezvous.timeout = Millis(50);
  Plan plan;
  plan.job = job.name;
  plan.world_size = 3;
  plan.hosts.push_back(Host{"localhost", "127.0.0.1", 3, {}, "local"});
  auto started = JobRendezvous::start(job, plan, true);
  REQUIRE(started);
  JobRendezvous& rendezvous = **started;
  CHECK(rendezvous.token().size() == 64);
  CHECK(rendezvous.endpoint().starts_with("127.0.0.1:"));
  std::this_thread::sleep_for(Millis(80));
  CHECK_FALSE(rendezvous.overdue());  // nobody joined: the rule has not started

  {
    JoinInfo who{rendezvous.endpoint(), rendezvous.token(), 1, 3, "train"};
    auto client = Client::connect(who, Millis(2000));
    REQUIRE(client);
    std::this_thread::sleep_for(Millis(80));
    auto overdue = rendezvous.overdue();
    REQUIRE(overdue);
    CHECK(overdue->code == ExitCode::rendezvous_timeout);
    CHECK(overdue->message == "rendezvous timed out after 50ms: ranks 0, 2 never joined");
  }
  rendezvous.begin_attempt(1);
  CHECK_FALSE(rendezvous.overdue());
  CHECK(rendezvous.server().missing_ranks() == std::vector<int>{0, 1, 2});
}
