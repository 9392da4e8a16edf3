// SPDX-License-Identifier: MIT
#include "src/util/topology.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include <sched.h>

#include <fmt/core.h>

#include "src/util/text.hpp"

namespace ddl {

namespace {

// nvidia-smi writes the PCI address with an 8-digit domain
// ("00000000:3B:00.0"); sysfs names the device with 4, in lower case.
constexpr std::string_view k_script = R"TOPO(echo "online $(cat /sys/devices/system/cpu/online 2>/dev/null)"
echo "allowed $(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status 2>/dev/null)"
for n in /sys/devices/system/node/node[0-9]*; do
  [ -r "$n/cpulist" ] && echo "node ${n##*/node} $(cat "$n/cpulist")"
done
if command -v nvidia-smi >/dev/null 2>&1; then
  t=; command -v timeout >/dev/null 2>&1 && t="timeout 10"
  $t nvidia-smi --query-gpu=index,pci.bus_id --format=csv,noheader 2>/dev/null |
  while IFS=", " read -r i b; do
    b=$(echo "$b" | tr ABCDEF abcdef)
    case $b in ????????:*) b=${b#????} ;; esac
    echo "gpu $i $(cat "/sys/bus/pci/devices/$b/numa_node" 2>/dev/null || echo -1)"
  done
fi
exit 0
)TOPO";

std::vector<int> intersect(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> both;
  std::ranges::set_intersection(a, b, std::back_inserter(both));
  return both;
}

// The words after the first one ("node 0 0-3" -> "0 0-3").
std::string_view rest(std::string_view line) {
  const std::size_t space = line.find(' ');
  return space == std::string_view::npos ? std::string_view{} : trim(line.substr(space + 1));
}

void read_node(std::string_view fields, HostTopology& topology) {
  const std::size_t space = fields.find(' ');
  auto id = parse_int(fields.substr(0, space));
  auto cpus = space == std::string_view::npos ? std::nullopt : parse_cpu_list(trim(fields.substr(space + 1)));
  if (id && cpus && !cpus->empty()) {
    topology.nodes.push_back({static_cast<int>(*id), std::move(*cpus)});
  }
}

void read_gpu(std::string_view fields, HostTopology& topology) {
  const std::size_t space = fields.find(' ');
  auto index = parse_int(fields.substr(0, space));
  auto node = space == std::string_view::npos ? std::nullopt : parse_int(trim(fields.substr(space + 1)));
  if (index && node && *node >= 0) {
    topology.gpu_nodes[static_cast<int>(*index)] = static_cast<int>(*node);
  }
}

} // namespace

std::string_view topology_script() { return k_script; }

HostTopology topology_unknown(std::string why) {
  HostTopology topology;
  topology.why = std::move(why);
  return topology;
}

HostTopology parse_topology(std::string_view probe_output) {
  HostTopology topology;
  std::optional<std::vector<int>> online;
  std::optional<std::vector<int>> allowed;
  for (const std::string& raw : split(probe_output, '\n')) {
    std::string_view line = trim(raw);
    if (line.starts_with("online ")) {
      online = parse_cpu_list(rest(line));
    } else if (line.starts_with("allowed ")) {
      allowed = parse_cpu_list(rest(line));
    } else if (line.starts_with("node ")) {
      read_node(rest(line), topology);
    } else if (line.starts_with("gpu ")) {
      read_gpu(rest(line), topology);
    }
  }
  if (!online || online->empty()) {
    return topology_unknown("/sys/devices/system/cpu/online is missing or unreadable");
  }
  topology.cpus = allowed && !allowed->empty() ? intersect(*online, *allowed) : *online;
  for (NumaNode& node : topology.nodes) {
    node.cpus = intersect(node.cpus, topology.cpus);
  }
  std::erase_if(topology.nodes, [](const NumaNode& node) { return node.cpus.empty(); });
  std::ranges::sort(topology.nodes, {}, &NumaNode::id);
  if (topology.cpus.empty()) {
    return topology_unknown("no online CPU is allowed to this process");
  }
  return topology;
}

std::optional<std::vector<int>> parse_cpu_list(std::string_view text) {
  std::set<int> cpus;
  text = trim(text);
  if (text.empty()) {
    return std::vector<int>{};
  }
  for (const std::string& part : split(text, ',')) {
    const std::size_t dash = part.find('-');
    auto first = parse_int(std::string_view(part).substr(0, dash));
    auto last = dash == std::string::npos ? first : parse_int(std::string_view(part).substr(dash + 1));
    constexpr long long k_most_cpus = 1 << 16;
    if (!first || !last || *first < 0 || *last < *first || *last >= k_most_cpus) {
      return std::nullopt;
    }
    for (long long cpu = *first; cpu <= *last; ++cpu) {
      cpus.insert(static_cast<int>(cpu));
    }
  }
  return std::vector<int>(cpus.begin(), cpus.end());
}

std::string cpu_list_text(const std::vector<int>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) {
      ++j;
    }
    out += (out.empty() ? "" : ",") +
           (j == i ? std::to_string(cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]));
    i = j + 1;
  }
  return out;
}

Result<void> pin_to_cpus(const std::vector<int>& cpus) {
  if (cpus.empty()) {
    return {};
  }
  const auto count = static_cast<std::size_t>(*std::ranges::max_element(cpus)) + 1;
  cpu_set_t* set = CPU_ALLOC(count);
  if (set == nullptr) {
    return fail(ExitCode::launch, "cannot allocate a CPU set");
  }
  const std::size_t size = CPU_ALLOC_SIZE(count);
  CPU_ZERO_S(size, set);
  for (int cpu : cpus) {
    CPU_SET_S(static_cast<std::size_t>(cpu), size, set);
  }
  const int pinned = ::sched_setaffinity(0, size, set);
  const int error = errno;
  CPU_FREE(set);
  if (pinned != 0) {
    return fail(ExitCode::launch, fmt::format("cannot pin to CPUs {}: {}", cpu_list_text(cpus), std::strerror(error)));
  }
  return {};
}

} // namespace ddl
