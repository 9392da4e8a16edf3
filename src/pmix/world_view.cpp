// SPDX-License-Identifier: MIT
#include "src/pmix/world_view.hpp"

#include <fmt/core.h>

#include "src/util/table.hpp"

namespace ddl::pmix {

namespace {

// The job keys as host `host` registers them; its folders by their pattern.
std::vector<KeyValue> host_keys(const WorldView& world, int host) {
  JobLayout layout = world.layout;
  layout.this_host = host;
  const std::string folder =
      "<TMPDIR>/ddl-pmix." + layout.hosts[static_cast<std::size_t>(host)].name + ".XXXXXX";
  return namespace_keys(layout, {folder, folder + "/job"}).job;
}

std::string value_text(const KeyValue& kv) {
  switch (kv.type) {
  case ValueType::string:
  case ValueType::regex_nodes:
  case ValueType::regex_procs: return kv.text;
  case ValueType::boolean: return kv.number != 0 ? "true" : "false";
  default: return std::to_string(kv.number);
  }
}

Json value_json(const KeyValue& kv) {
  switch (kv.type) {
  case ValueType::string:
  case ValueType::regex_nodes:
  case ValueType::regex_procs: return kv.text;
  case ValueType::boolean: return kv.number != 0;
  default: return kv.number;
  }
}

// Whether key `index` of the job keys has one value on every host.
bool same_on_every_host(const std::vector<std::vector<KeyValue>>& per_host, std::size_t index) {
  for (const auto& keys : per_host) {
    if (value_text(keys[index]) != value_text(per_host.front()[index])) {
      return false;
    }
  }
  return true;
}

// The job keys split: those every rank sees, and each host's own.
struct SplitKeys {
  std::vector<KeyValue> common;
  std::vector<std::vector<KeyValue>> hosts;
};
SplitKeys split_keys(const WorldView& world) {
  std::vector<std::vector<KeyValue>> per_host;
  for (std::size_t host = 0; host < world.layout.hosts.size(); ++host) {
    per_host.push_back(host_keys(world, static_cast<int>(host)));
  }
  SplitKeys split;
  split.hosts.resize(per_host.size());
  for (std::size_t index = 0; index < per_host.front().size(); ++index) {
    if (same_on_every_host(per_host, index)) {
      split.common.push_back(per_host.front()[index]);
      continue;
    }
    for (std::size_t host = 0; host < per_host.size(); ++host) {
      split.hosts[host].push_back(per_host[host][index]);
    }
  }
  return split;
}

std::string keys_text(const std::vector<KeyValue>& keys) {
  std::string text;
  for (const auto& kv : keys) {
    text += (text.empty() ? "" : " ") + kv.key + "=" + value_text(kv);
  }
  return text;
}

Json keys_json(const std::vector<KeyValue>& keys) {
  Json object = Json::object();
  for (const auto& kv : keys) {
    object[kv.key] = value_json(kv);
  }
  return object;
}

const std::string& plan_host(const WorldView& world, int host) {
  return world.plan_hosts.at(static_cast<std::size_t>(host));
}

} // namespace

std::string world_text(const WorldView& world) {
  const JobLayout& layout = world.layout;
  const auto keys = namespace_keys(layout, {});
  std::string out = fmt::format(
      "\nMPI world (--mpi pmix): {} rank{} on {} host{}, PMIx namespace {}, no mpirun.\n"
      "The ranks above are one ddl worker pmix-host per host, which starts its host's MPI ranks under "
      "its PMIx server; each MPI rank gets DDL_RANK, DDL_WORLD_SIZE, DDL_LOCAL_RANK, DDL_LOCAL_SIZE "
      "and DDL_NODE_RANK of its own, and PMIX_NAMESPACE={} and PMIX_RANK from that server.\n",
      layout.world_size(), layout.world_size() == 1 ? "" : "s", layout.hosts.size(),
      layout.hosts.size() == 1 ? "" : "s", layout.nspace, layout.nspace);
  std::vector<TableRow> rows{{"RANK", "HOST", "PMIX HOST", "KEYS"}};
  for (int rank = 0; rank < layout.world_size(); ++rank) {
    const int host = layout.host_of(rank);
    rows.push_back({std::to_string(rank), plan_host(world, host),
                    layout.hosts[static_cast<std::size_t>(host)].name,
                    keys_text(keys.ranks[static_cast<std::size_t>(rank)])});
  }
  out += align_columns(rows);
  const auto split = split_keys(world);
  out += "PMIx keys of every rank: " + keys_text(split.common) + "\n";
  out += "PMIx keys of each host's ranks:\n";
  for (std::size_t host = 0; host < split.hosts.size(); ++host) {
    out += "  " + plan_host(world, static_cast<int>(host)) + ": " + keys_text(split.hosts[host]) + "\n";
  }
  return out;
}

Json world_json(const WorldView& world) {
  const JobLayout& layout = world.layout;
  const auto keys = namespace_keys(layout, {});
  const auto split = split_keys(world);
  Json hosts = Json::array();
  for (std::size_t host = 0; host < layout.hosts.size(); ++host) {
    Json ranks = Json::array();
    for (int rank = layout.first_rank(static_cast<int>(host));
         rank < layout.first_rank(static_cast<int>(host) + 1); ++rank) {
      ranks.push_back(rank);
    }
    hosts.push_back({{"host", plan_host(world, static_cast<int>(host))},
                     {"pmix_host", layout.hosts[host].name},
                     {"ranks", std::move(ranks)},
                     {"keys", keys_json(split.hosts[host])}});
  }
  Json ranks = Json::array();
  for (int rank = 0; rank < layout.world_size(); ++rank) {
    Json env = Json::object();
    for (const auto& entry : rank_identity_env(layout, rank)) {
      env[entry.substr(0, entry.find('='))] = entry.substr(entry.find('=') + 1);
    }
    ranks.push_back({{"rank", rank},
                     {"host", plan_host(world, layout.host_of(rank))},
                     {"keys", keys_json(keys.ranks[static_cast<std::size_t>(rank)])},
                     {"env", std::move(env)}});
  }
  return {{"namespace", layout.nspace},
          {"world_size", layout.world_size()},
          {"keys", keys_json(split.common)},
          {"hosts", std::move(hosts)},
          {"ranks", std::move(ranks)}};
}

} // namespace ddl::pmix
