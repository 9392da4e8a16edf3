// SPDX-License-Identifier: MIT
#include "backends/ssh/ssh_probe.hpp"

#include <filesystem>
#include <set>

#include <fmt/core.h>

#include "src/util/parallel.hpp"
#include "backends/host_check_probe.hpp"
#include "backends/ssh/shim_probe.hpp"
#include "backends/ssh/ssh_config_scan.hpp"
#include "backends/ssh/ssh_connect.hpp"
#include "src/util/net.hpp"
#include "src/util/host_progress.hpp"
#include "src/util/process.hpp"
#include "src/util/signals.hpp"
#include "src/util/text.hpp"

namespace ddl {

namespace {

// Prints "source=ADDR" and "iface=NAME": the address this host's route to $1
// leaves from and the interface holding it; else "error=WHY".
constexpr const char* k_route_script =
    "command -v ip >/dev/null 2>&1 || { echo 'error=ip (iproute2) is not installed'; exit 0; }\n"
    "a=$1\n"
    "case $a in *[!0-9.]*) case $a in *:*) ;; *) a=$(getent ahosts \"$a\" | awk 'NR==1{print $1}') ;; esac ;; esac\n"
    "[ -n \"$a\" ] || { echo \"error=cannot resolve $1\"; exit 0; }\n"
    "r=$(ip -o route get \"$a\" 2>&1) || { echo \"error=no route to $a: $r\"; exit 0; }\n"
    "s=$(printf '%s\\n' \"$r\" | sed -n 's/.* src \\([^ ]*\\).*/\\1/p')\n"
    "[ -n \"$s\" ] || { echo \"error=no source address in: $r\"; exit 0; }\n"
    "echo \"source=$s\"\n"
    "ip -o addr show to \"$s\" | awk 'NR==1{sub(/@.*/, \"\", $2); print \"iface=\" $2}'\n";

HostInterface parse_route_probe(const std::string& out, const std::string& target) {
  std::string source;
  std::string name;
  for (const auto& raw : split(out, '\n')) {
    std::string_view line = trim(raw);
    if (line.starts_with("error=")) {
      return interface_unknown(std::string(line.substr(6)));
    }
    if (line.starts_with("source=")) {
      source = std::string(line.substr(7));
    } else if (line.starts_with("iface=")) {
      name = std::string(line.substr(6));
    }
  }
  if (source.empty() || name.empty()) {
    return interface_unknown(fmt::format("no interface holds {}, where the route to {} leaves from",
                                         source.empty() ? "?" : source, target));
  }
  return interface_found(std::move(name), std::move(source), target);
}

// Every listed socket's line; nothing printed where /proc/net is missing.
constexpr const char* k_ports_script = "cat /proc/net/tcp /proc/net/tcp6 2>/dev/null; exit 0";

// The ports k_ports_script listed; nullopt where /proc/net is missing.
std::optional<std::set<int>> listed_ports(std::string_view listed) {
  if (listed.find(':') == std::string_view::npos) {
    return std::nullopt;
  }
  return net::ports_in_proc_net_tcp(listed);
}

// Ends the route script's output; the ports in use follow (k_ports_script).
constexpr std::string_view k_ports_marker = "ddl-ports:\n";

HostInterface route_one(const SshSection& ssh, const Host& host, const std::string& target, SshConnection& kept,
                        std::optional<std::set<int>>* ports) {
  std::string script = k_route_script;
  if (ports != nullptr) {
    // The route script's early exits end the shell: run it in a subshell.
    script = fmt::format("( {} )\nprintf '{}'\n{}", script, k_ports_marker, k_ports_script);
  }
  auto answer = ask_shim(ssh, host, kept, script, {target});
  if (!answer) {
    HostInterface none = interface_unknown(answer.error().message);
    none.unreachable = !kept.session;
    return none;
  }
  if (answer->status != 0) {
    return interface_unknown(fmt::format("the route probe failed (exit {}): {}", answer->status, trim(answer->out)));
  }
  std::string_view out = answer->out;
  if (std::size_t at = out.find(k_ports_marker); ports != nullptr && at != std::string_view::npos) {
    *ports = listed_ports(out.substr(at + k_ports_marker.size()));
    out = out.substr(0, at);
  }
  return parse_route_probe(std::string(out), target);
}

// The GPUs of a host whose connection is kept: nullopt when it could not be
// made before (not tried again) or the shim gave no count.
std::optional<int> count_gpus_one(const SshSection& ssh, const Host& host, SshConnection& kept) {
  if (!kept.session && !kept.error.empty()) {
    return std::nullopt;
  }
  auto answer = ask_shim(ssh, host, kept, gpu_count_script());
  if (!answer || answer->status != 0) {
    return std::nullopt;
  }
  for (const auto& raw : split(answer->out, '\n')) {
    if (auto count = gpu_count_in(trim(raw))) {
      return count;
    }
  }
  return std::nullopt;
}

HostCheck check_one(const SshSection& ssh, const Host& host, const std::string& remote_ddl, SshConnection& kept) {
  HostCheck check;
  if (stop::requested()) {
    check.error = stop::error("connecting").message;
    return check;
  }
  auto answer = ask_shim(ssh, host, kept, host_check_script(), {remote_ddl});
  if (!answer) {
    check.reachable = kept.session != nullptr;
    check.error = answer.error().message;
    return check;
  }
  check = read_host_check(answer->out, answer->status, remote_ddl);
  check.reachable = kept.session != nullptr;
  return check;
}

// nullopt when the host cannot be reached or has no /proc/net/tcp.
std::optional<std::set<int>> ports_in_use(const SshSection& ssh, const Host& host, SshConnection& connection) {
  auto answer = ask_shim(ssh, host, connection, k_ports_script);
  if (!answer) {
    return std::nullopt;
  }
  return listed_ports(answer->out);
}

} // namespace

std::optional<Result<int>> ssh_master_port(const SshSection& ssh, const Host& host, int first, int count,
                                           SshConnection* kept) {
  SshConnection own;
  auto used = ports_in_use(ssh, host, kept != nullptr ? *kept : own);
  if (!used) {
    return std::nullopt;
  }
  return master_port_among(*used, host, first, count);
}

Result<int> master_port_among(const std::set<int>& used, const Host& host, int first, int count) {
  if (first == 0) {
    if (const int picked = net::pick_unused_ports(used, count)) {
      return Result<int>(picked);
    }
    return Result<int>(fail(ExitCode::launch, fmt::format("found no {} free consecutive ports on {}", count,
                                                          host.name)));
  }
  for (int port = first; port < first + count; ++port) {
    if (used.contains(port)) {
      return Result<int>(fail(ExitCode::launch, fmt::format("port {} is already in use on {} (another "
                                                            "job's store?)",
                                                            port, host.name)));
    }
  }
  return Result<int>(first);
}

std::string remote_ddl_path(const SshSection& ssh) {
  return ssh.remote_ddl.empty() ? own_executable_path() : ssh.remote_ddl;
}

namespace {

std::vector<std::string> host_names(const Inventory& hosts) {
  std::vector<std::string> names;
  for (const Host& host : hosts) {
    names.push_back(host.name);
  }
  return names;
}

} // namespace

std::vector<HostCheck> ssh_check_hosts(const SshSection& ssh, const std::string& remote_ddl,
                                       const Inventory& hosts, std::vector<SshConnection>* kept) {
  std::vector<SshConnection> own;
  std::vector<SshConnection>& connections = kept != nullptr ? *kept : own;
  connections.resize(hosts.size());
  std::vector<HostCheck> checks(hosts.size());
  HostProgress progress("checked", host_names(hosts));
  for_each_parallel(hosts.size(), ssh.fanout, [&](std::size_t i) {
    progress.begin(i);
    checks[i] = check_one(ssh, hosts[i], remote_ddl, connections[i]);
    const std::string why = checks[i].reachable || !checks[i].error.empty() ? checks[i].error : "not reachable";
    progress.end(i, why);
  });
  return checks;
}

std::vector<std::optional<int>> ssh_count_gpus(const SshSection& ssh, const Inventory& hosts,
                                               std::vector<SshConnection>& connections) {
  connections.resize(hosts.size());
  std::vector<std::optional<int>> counts(hosts.size());
  for_each_parallel(hosts.size(), ssh.fanout, [&](std::size_t i) {
    if (!stop::requested()) {
      counts[i] = count_gpus_one(ssh, hosts[i], connections[i]);
    }
  });
  return counts;
}

Result<Inventory> ssh_probe_gpu_slots(const SshSection& ssh, Inventory hosts, std::vector<SshConnection>* kept) {
  auto checks = ssh_check_hosts(ssh, remote_ddl_path(ssh), hosts, kept);
  if (stop::requested()) {
    return fail(stop::error("probing the GPUs of the hosts"));
  }
  std::string problems;
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    const HostCheck& check = checks[i];
    if (!check.reachable) {
      problems += fmt::format("\n  {}: {}", hosts[i].name, check.error);
    } else if (!check.gpu_count || *check.gpu_count <= 0) {
      problems += fmt::format("\n  {}: no GPU found (slots = \"gpus\")", hosts[i].name);
    } else {
      hosts[i].slots = *check.gpu_count;
      hosts[i].gpus.clear();
      for (int g = 0; g < *check.gpu_count; ++g) {
        hosts[i].gpus.push_back(g);
      }
    }
  }
  if (!problems.empty()) {
    return fail(ExitCode::launch, "cannot probe the GPUs of every host:" + problems);
  }
  return hosts;
}

std::vector<HostInterface> ssh_find_interfaces(const SshSection& ssh, const Inventory& hosts,
                                              const std::string& target, std::vector<SshConnection>& connections,
                                              std::optional<std::size_t> ports_on,
                                              std::optional<std::set<int>>* ports) {
  std::vector<HostInterface> found(hosts.size());
  connections.resize(hosts.size());
  HostProgress progress("connected", host_names(hosts));
  for_each_parallel(hosts.size(), ssh.fanout, [&](std::size_t i) {
    progress.begin(i);
    found[i] = route_one(ssh, hosts[i], target, connections[i], ports_on == i ? ports : nullptr);
    progress.end(i, found[i].unreachable ? std::string_view(connections[i].error) : std::string_view());
  });
  return found;
}

Inventory ssh_resolve_addresses(const SshSection& ssh, Inventory hosts) {
  if (!ssh_config_may_set_hostname(ssh)) {
    return hosts;
  }
  for (Host& host : hosts) {
    if (host.address == host.name) {
      host.address = ssh_config_hostname(ssh, host.name);
    }
  }
  return hosts;
}

} // namespace ddl
