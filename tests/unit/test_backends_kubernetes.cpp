// SPDX-License-Identifier: MIT
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "backends/kubernetes/kubectl.hpp"
#include "backends/kubernetes/nodes.hpp"
#include "backends/kubernetes/pods.hpp"

using namespace ddl;
using namespace ddl::kubernetes;

namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(DDL_FIXTURES) + "/kubernetes/" + name);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> names(const Inventory& hosts) {
  std::vector<std::string> result;
  for (const auto& host : hosts) {
    result.push_back(host.name);
  }
  return result;
}

} // namespace

TEST_CASE("Kubernetes quantities parse to whole numbers", "[kubernetes]") {
  CHECK(parse_whole_quantity("8").value() == 8);
  CHECK(parse_whole_quantity("0").value() == 0);
  CHECK(parse_whole_quantity("1k").value() == 1000);
  CHECK(parse_whole_quantity("2Ki").value() == 2048);
  CHECK(parse_whole_quantity("1.5Ki").value() == 1536);
  CHECK(parse_whole_quantity("4000m").value() == 4);
  CHECK(parse_whole_quantity("1e3").value() == 1000);
  CHECK(parse_whole_quantity("+3").value() == 3);
  CHECK(parse_whole_quantity("500m").error().message == "quantity '500m' is not a whole number");
  CHECK(parse_whole_quantity("1.5").error().message == "quantity '1.5' is not a whole number");
  CHECK(parse_whole_quantity("").error().message == "quantity '' is not a valid Kubernetes quantity");
  CHECK(parse_whole_quantity("eight").error().message ==
        "quantity 'eight' is not a valid Kubernetes quantity");
  CHECK(parse_whole_quantity("-1").has_value() == false);
  CHECK(parse_whole_quantity("9Ei").error().message == "quantity '9Ei' is too large");
}

TEST_CASE("Running and Ready pods become hosts in name order", "[kubernetes]") {
  auto scan = scan_pods(fixture("ready.json"), "", 1);
  REQUIRE(scan.has_value());
  CHECK(names(scan->ready) == std::vector<std::string>{"trainer-1", "trainer-2", "trainer-10"});
  CHECK(scan->skipped.empty());
  const Host& first = scan->ready.front();
  CHECK(first.address == "10.244.1.3");
  CHECK(first.slots == 2);
  CHECK(first.gpus == std::vector<int>{0, 1});
  CHECK(first.source == "kubernetes");
}

TEST_CASE("Pods that are not ready are skipped with the reason", "[kubernetes]") {
  auto scan = scan_pods(fixture("mixed.json"), "trainer", 1);
  REQUIRE(scan.has_value());
  REQUIRE(names(scan->ready) == std::vector<std::string>{"trainer-0"});
  CHECK(scan->ready[0].slots == 4);
  REQUIRE(scan->skipped.size() == 5);
  CHECK(scan->skipped[0].name == "trainer-1");
  CHECK(scan->skipped[0].reason == "phase Pending");
  CHECK(scan->skipped[1].reason ==
        "not Ready (ContainersNotReady: containers with unready status: [trainer])");
  CHECK(scan->skipped[2].reason == "no pod IP yet");
  CHECK(scan->skipped[3].reason == "terminating");
  CHECK(scan->skipped[4].reason == "phase Failed (Evicted)");
}

TEST_CASE("Slots fall back to [hosts] slots without a GPU limit", "[kubernetes]") {
  auto scan = scan_pods(fixture("no-gpu.json"), "", 3);
  REQUIRE(scan.has_value());
  REQUIRE(names(scan->ready) == std::vector<std::string>{"multi-0", "trainer-0", "trainer-1"});
  CHECK(scan->ready[0].slots == 4);  // the default-container annotation picks "trainer"
  CHECK(scan->ready[1].slots == 3);
  CHECK(scan->ready[1].gpus.empty());
  CHECK(parse_whole_quantity("2E").error().message == "quantity '2E' is too large");
  auto missing = scan_pods(fixture("no-gpu.json"), "nope", 1);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == ExitCode::launch);
  CHECK(missing.error().message ==
        "pod trainer-0 has no container 'nope'\npod trainer-1 has no container 'nope'\n"
        "pod multi-0 has no container 'nope'");
}

TEST_CASE("A fractional GPU limit is an error naming the pod", "[kubernetes]") {
  auto scan = scan_pods(fixture("fractional.json"), "", 1);
  REQUIRE_FALSE(scan.has_value());
  CHECK(scan.error().code == ExitCode::launch);
  CHECK(scan.error().message ==
        "pod trainer-0: nvidia.com/gpu limit quantity '500m' is not a whole number");
}

TEST_CASE("Malformed kubectl output is an error, not a crash", "[kubernetes]") {
  CHECK(scan_pods("", "", 1).error().message == "kubectl printed something that is not JSON");
  CHECK(scan_pods("{\"items\": 3}", "", 1).error().message ==
        "kubectl output is not a list of pods (no \"items\" array)");
  auto odd = scan_pods(R"({"items": [{"metadata": {"name": "p"}, "status": []}, 7]})", "", 1);
  REQUIRE_FALSE(odd.has_value());
  CHECK(scan_pods(fixture("empty.json"), "", 1).value().ready.empty());
}

TEST_CASE("A pod name that looks like an option is refused, never passed to kubectl", "[kubernetes]") {
  const std::string pod = R"({"metadata": {"name": "%s"}, "spec": {"containers": [{"name": "c"}]},
    "status": {"phase": "Running", "podIP": "10.0.0.1", "conditions": [{"type": "Ready", "status": "True"}]}})";
  auto list = [&](const std::string& name) {
    std::string item = pod;
    item.replace(item.find("%s"), 2, name);
    return R"({"items": [)" + item + "]}";
  };
  auto scan = scan_pods(list("--kubeconfig=/tmp/x"), "", 1);
  REQUIRE_FALSE(scan.has_value());
  CHECK(scan.error().code == ExitCode::launch);
  CHECK(scan.error().message == "pod '--kubeconfig=/tmp/x': not a name ddl passes to kubectl: starts with '-'");
  CHECK(scan_pods(list("a;b"), "", 1).error().message ==
        "pod 'a;b': not a name ddl passes to kubectl: contains the shell metacharacter ';'");
  CHECK(names(scan_pods(list("trainer-0"), "", 1).value().ready) == std::vector<std::string>{"trainer-0"});
}

TEST_CASE("kubectl command lines", "[kubernetes]") {
  KubernetesSection k8s;
  k8s.namespace_ = "ml";
  k8s.selector = "app=trainer";
  k8s.kubectl = "/opt/kubectl";
  CHECK(get_pods_argv(k8s) == std::vector<std::string>{"/opt/kubectl", "-n", "ml", "get", "pods",
                                                       "-l", "app=trainer", "-o", "json"});
  k8s.context = "prod";
  k8s.container = "trainer";
  CHECK(exec_argv(k8s, "trainer-0", {"sh", "-c", "exec cat"}) ==
        std::vector<std::string>{"/opt/kubectl", "--context", "prod", "-n", "ml", "exec", "-i",
                                 "trainer-0", "-c", "trainer", "--", "sh", "-c", "exec cat"});
}

TEST_CASE("Each ready pod's node is known from spec.nodeName", "[kubernetes][labels]") {
  auto scan = scan_pods(fixture("zones.json"), "", 1);
  REQUIRE(scan.has_value());
  CHECK(scan->node_of == std::map<std::string, std::string>{
                             {"trainer-1", "gpu-node-1"}, {"trainer-2", "gpu-node-2"}, {"trainer-10", "gpu-node-3"}});
  auto mixed = scan_pods(fixture("mixed.json"), "", 1);
  REQUIRE(mixed.has_value());
  CHECK(mixed->node_of.size() == mixed->ready.size());  // skipped pods are not asked about
}

TEST_CASE("Node labels from kubectl get nodes -o json", "[kubernetes][labels]") {
  auto nodes = parse_node_labels(fixture("nodes.json"));
  REQUIRE(nodes.has_value());
  REQUIRE(nodes->size() == 3);
  CHECK(nodes->at("gpu-node-2").at("topology.kubernetes.io/zone") == "us-east-1b");
  CHECK(nodes->at("gpu-node-1").at("node.kubernetes.io/instance-type") == "p4d.24xlarge");
  SECTION("one named node is printed alone, not as a List") {
    auto one = parse_node_labels(R"({"kind": "Node", "metadata": {"name": "n1", "labels": {"rack": "r1"}}})");
    REQUIRE(one.has_value());
    CHECK(format_labels(one->at("n1")) == "rack=r1");
  }
  SECTION("a node without labels has none; a label ddl cannot carry is left out") {
    auto odd = parse_node_labels(R"({"kind": "List", "items": [{"metadata": {"name": "bare"}},
        {"metadata": {"name": "n2", "labels": {"ok": "", "bad key": "x", "num": 3}}}]})");
    REQUIRE(odd.has_value());
    CHECK(odd->at("bare").empty());
    CHECK(format_labels(odd->at("n2")) == "ok=");
  }
  SECTION("malformed output is an error, not a crash") {
    CHECK(parse_node_labels("Error").error().message == "kubectl get nodes printed something that is not JSON");
    CHECK(parse_node_labels(R"({"kind": "Pod"})").error().message ==
          "kubectl output is not a Node or a list of Nodes (no \"items\" array)");
    CHECK(parse_node_labels(R"({"items": [{"metadata": {"name": 7}}]})").error().code == ExitCode::launch);
  }
}

TEST_CASE("kubectl get nodes names the pods' nodes", "[kubernetes][labels]") {
  KubernetesSection k8s;
  k8s.namespace_ = "ml";
  k8s.kubectl = "/opt/kubectl";
  k8s.context = "prod";
  CHECK(get_nodes_argv(k8s, {"gpu-node-1", "gpu-node-3"}) ==
        std::vector<std::string>{"/opt/kubectl", "--context", "prod", "-n", "ml", "get", "nodes", "-o", "json",
                                 "--", "gpu-node-1", "gpu-node-3"});
}

TEST_CASE("kubectl's remote exit line is told from its own failures", "[kubernetes]") {
  CHECK(is_remote_exit("", 0));
  CHECK(is_remote_exit("boom\ncommand terminated with exit code 3\n", 3));
  CHECK_FALSE(is_remote_exit("command terminated with exit code 3\n", 1));
  CHECK_FALSE(is_remote_exit("error: You must be logged in to the server (Unauthorized)\n", 1));
  CHECK_FALSE(is_remote_exit("Error from server (NotFound): pods \"x\" not found\n", 1));
}
