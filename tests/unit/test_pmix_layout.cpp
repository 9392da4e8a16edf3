// SPDX-License-Identifier: MIT
// The PMIx namespace's layout and keys (src/pmix/layout.hpp), and the server
// started in-process when libpmix is installed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include "src/pmix/keys.hpp"
#include "src/pmix/layout.hpp"
#include "src/pmix/server.hpp"
#include "src/pmix/world_view.hpp"

using namespace ddl::pmix;

namespace {

JobLayout two_hosts(int this_host) {
  return JobLayout{"ddl-job-0", {{"h1", 2}, {"h2", 3}}, this_host};
}

const KeyValue& find_key(const std::vector<KeyValue>& keys, std::string_view name) {
  auto found = std::find_if(keys.begin(), keys.end(), [&](const KeyValue& k) { return k.key == name; });
  REQUIRE(found != keys.end());
  return *found;
}

} // namespace

TEST_CASE("JobLayout: ranks fill hosts in order", "[pmix]") {
  auto layout = two_hosts(1);
  CHECK(layout.world_size() == 5);
  CHECK(layout.first_rank(0) == 0);
  CHECK(layout.first_rank(1) == 2);
  CHECK(layout.local_ranks() == 3);
  CHECK(layout.first_local_rank() == 2);
  CHECK(layout.host_of(0) == 0);
  CHECK(layout.host_of(1) == 0);
  CHECK(layout.host_of(2) == 1);
  CHECK(layout.host_of(4) == 1);
}

TEST_CASE("rank_identity_env: ddl's variables for the MPI rank, not its host", "[pmix]") {
  auto layout = two_hosts(1);
  CHECK(rank_identity_env(layout, 3) == std::vector<std::string>{"DDL_RANK=3", "DDL_WORLD_SIZE=5", "DDL_LOCAL_RANK=1",
                                                                 "DDL_LOCAL_SIZE=3", "DDL_NODE_RANK=1"});
  CHECK(rank_identity_env(layout, 1) == std::vector<std::string>{"DDL_RANK=1", "DDL_WORLD_SIZE=5", "DDL_LOCAL_RANK=1",
                                                                 "DDL_LOCAL_SIZE=2", "DDL_NODE_RANK=0"});
}

TEST_CASE("check_layout", "[pmix]") {
  CHECK(check_layout(two_hosts(0)));
  SECTION("same name twice: each server needs a name of its own") {
    JobLayout layout{"ns", {{"h1", 1}, {"h1", 1}}, 0};
    auto checked = check_layout(layout);
    REQUIRE_FALSE(checked);
    CHECK(checked.error().code == ddl::ExitCode::usage);
    CHECK(checked.error().message ==
          "two hosts of the PMIx job have the same name 'h1': each host's server must go by a "
          "name of its own");
  }
  SECTION("a name the node map cannot hold") {
    JobLayout layout{"ns", {{"h1,h2", 1}}, 0};
    CHECK(check_layout(layout).error().message ==
          "PMIx host name 'h1,h2' is empty or holds ',', ';' or a blank");
  }
  SECTION("a host without ranks") {
    JobLayout layout{"ns", {{"h1", 0}}, 0};
    CHECK(check_layout(layout).error().message ==
          "PMIx host 'h1' has 0 ranks; each host needs at least one");
  }
  SECTION("namespace length and host index") {
    CHECK_FALSE(check_layout(JobLayout{"", {{"h1", 1}}, 0}));
    CHECK_FALSE(check_layout(JobLayout{std::string(256, 'n'), {{"h1", 1}}, 0}));
    CHECK(check_layout(JobLayout{std::string(255, 'n'), {{"h1", 1}}, 0}));
    CHECK(check_layout(JobLayout{"ns", {{"h1", 1}}, 1}).error().message ==
          "host index 1 is not one of the job's 1 hosts");
  }
}

TEST_CASE("make_host_names_unique: hosts of one machine get names of their own", "[pmix]") {
  std::vector<HostShare> hosts{{"vm", 2}, {"other", 1}, {"vm", 2}, {"vm-ddl0x", 1}};
  make_host_names_unique(hosts);
  CHECK(hosts[0].name == "vm-ddl0");
  CHECK(hosts[1].name == "other");
  CHECK(hosts[2].name == "vm-ddl2");
  CHECK(hosts[3].name == "vm-ddl0x");
  CHECK(check_layout(JobLayout{"ns", hosts, 2}));
  SECTION("distinct names stay as they are") {
    std::vector<HostShare> distinct{{"h1", 1}, {"h2", 1}};
    make_host_names_unique(distinct);
    CHECK(distinct[0].name == "h1");
    CHECK(distinct[1].name == "h2");
  }
}

TEST_CASE("world_view: the world --dry-run shows, from the registered keys", "[pmix]") {
  WorldView world{two_hosts(0), {"a", "b"}};
  std::string text = world_text(world);
  CHECK(text.find("MPI world (--mpi pmix): 5 ranks on 2 hosts, PMIx namespace ddl-job-0, no mpirun.") !=
        std::string::npos);
  CHECK(text.find("\n4     b     h2         pmix.rank=4 pmix.grank=4 pmix.apprank=4 pmix.appnum=0 "
                  "pmix.lrank=2 pmix.nrank=2 pmix.hname=h2 pmix.nodeid=1\n") != std::string::npos);
  CHECK(text.find("pmix.nmap=h1,h2 pmix.pmap=0,1;2,3,4 ") != std::string::npos);
  CHECK(text.find("  a: pmix.local.size=2 pmix.node.size=2 pmix.lpeers=0,1 pmix.lldr=0 "
                  "pmix.tmpdir=<TMPDIR>/ddl-pmix.h1.XXXXXX ") != std::string::npos);
  auto json = world_json(world);
  CHECK(json["namespace"] == "ddl-job-0");
  CHECK(json["keys"]["pmix.job.size"] == 5);
  CHECK(json["keys"]["pmix.spawned"] == false);
  CHECK_FALSE(json["keys"].contains("pmix.lpeers"));
  CHECK(json["hosts"][1]["keys"]["pmix.lpeers"] == "2,3,4");
  CHECK(json["hosts"][1]["ranks"].size() == 3);
  CHECK(json["ranks"][3]["keys"]["pmix.lrank"] == 1);
  CHECK(json["ranks"][3]["env"]["DDL_NODE_RANK"] == "1");
  CHECK(job_namespace("train", "2") == "ddl-train-2");
}

TEST_CASE("namespace_keys: what Open MPI 4.1 reads", "[pmix]") {
  auto keys = namespace_keys(two_hosts(1), SessionDirs{"/tmp/x", "/tmp/x/job"});
  SECTION("job-level sizes and maps") {
    CHECK(find_key(keys.job, key::job_size).number == 5);
    CHECK(find_key(keys.job, key::job_size).type == ValueType::uint32);
    CHECK(find_key(keys.job, key::max_procs).number == 5);
    CHECK(find_key(keys.job, key::univ_size).number == 5);
    CHECK(find_key(keys.job, key::num_nodes).number == 2);
    CHECK(find_key(keys.job, key::node_map).text == "h1,h2");
    CHECK(find_key(keys.job, key::node_map).type == ValueType::regex_nodes);
    CHECK(find_key(keys.job, key::proc_map).text == "0,1;2,3,4");
    CHECK(find_key(keys.job, key::proc_map).type == ValueType::regex_procs);
    CHECK(find_key(keys.job, key::jobid).text == "ddl-job-0");
  }
  SECTION("this host's share") {
    CHECK(find_key(keys.job, key::local_size).number == 3);
    CHECK(find_key(keys.job, key::local_peers).text == "2,3,4");
    CHECK(find_key(keys.job, key::localldr).number == 2);
    CHECK(find_key(keys.job, key::localldr).type == ValueType::rank);
    CHECK(find_key(keys.job, key::tmpdir).text == "/tmp/x");
    CHECK(find_key(keys.job, key::nsdir).text == "/tmp/x/job");
    CHECK(find_key(keys.job, key::tdir_rmclean).number == 1);
  }
  SECTION("one array per rank of the whole job") {
    REQUIRE(keys.ranks.size() == 5);
    const auto& remote = keys.ranks[1];
    CHECK(find_key(remote, key::rank).number == 1);
    CHECK(find_key(remote, key::local_rank).number == 1);
    CHECK(find_key(remote, key::local_rank).type == ValueType::uint16);
    CHECK(find_key(remote, key::hostname).text == "h1");
    CHECK(find_key(remote, key::nodeid).number == 0);
    const auto& local = keys.ranks[4];
    CHECK(find_key(local, key::rank).type == ValueType::rank);
    CHECK(find_key(local, key::local_rank).number == 2);
    CHECK(find_key(local, key::node_rank).number == 2);
    CHECK(find_key(local, key::hostname).text == "h2");
    CHECK(find_key(local, key::nodeid).number == 1);
    CHECK(find_key(local, key::appnum).number == 0);
  }
}

TEST_CASE("Server: in-process start, launch env, folder removed", "[pmix]") {
  std::string why;
  if (!server_available(&why)) {
    SUCCEED("no PMIx here: " + why);
    auto refused = Server::start(JobLayout{"ns", {{"h1", 1}}, 0}, {});
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == ddl::ExitCode::launch);
    CHECK(refused.error().message == "cannot host a PMIx server: " + why);
    return;
  }
  std::string folder;
  {
    auto server = Server::start(JobLayout{"ddl-unit-test", {{"unit-host", 2}}, 0}, {});
    REQUIRE(server);
    folder = (*server)->directory();
    CHECK(std::filesystem::is_directory(folder + "/job"));
    CHECK(folder.find("/ddl-pmix.unit-host.") != std::string::npos);
    auto env = (*server)->rank_env(1);
    REQUIRE(env);
    auto has = [&](const std::string& entry) {
      return std::find(env->begin(), env->end(), entry) != env->end();
    };
    CHECK(has("PMIX_NAMESPACE=ddl-unit-test"));
    CHECK(has("PMIX_RANK=1"));
    CHECK(has("OMPI_MCA_schizo=ompi"));
    CHECK(has("OMPI_MCA_ess=pmi"));
    CHECK(std::any_of(env->begin(), env->end(), [](const std::string& e) {
      return e.starts_with("OMPI_MCA_btl_vader_backing_directory=") &&
             e.find("/ddl-pmix.unit-host.") != std::string::npos &&
             std::filesystem::is_directory(e.substr(e.find('=') + 1));
    }));
    CHECK(std::any_of(env->begin(), env->end(),
                      [](const std::string& e) { return e.starts_with("PMIX_SERVER_URI"); }));
    auto second = Server::start(JobLayout{"other", {{"unit-host", 1}}, 0}, {});
    REQUIRE_FALSE(second);
    CHECK(second.error().message == "a PMIx server already runs in this process");
  }
  CHECK_FALSE(std::filesystem::exists(folder));
}
