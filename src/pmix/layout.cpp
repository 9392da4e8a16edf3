// SPDX-License-Identifier: MIT
#include "src/pmix/layout.hpp"

#include <map>
#include <set>

#include <fmt/core.h>

#include "src/pmix/keys.hpp"

namespace ddl::pmix {

namespace {

constexpr std::size_t k_max_nspace = 255;  // PMIX_MAX_NSLEN

KeyValue text_key(std::string_view key, std::string value, ValueType type = ValueType::string) {
  return {std::string(key), type, std::move(value), 0};
}
KeyValue number_key(std::string_view key, ValueType type, int value) {
  return {std::string(key), type, "", static_cast<std::uint32_t>(value)};
}

// "0,1,2": the ranks `first` .. `first + count - 1`.
std::string rank_list(int first, int count) {
  std::string list;
  for (int rank = first; rank < first + count; ++rank) {
    list += (list.empty() ? "" : ",") + std::to_string(rank);
  }
  return list;
}

// The input of PMIx_generate_regex ("h1,h2") and of PMIx_generate_ppn
// ("0,1;2,3": each host's ranks, hosts in node-map order).
std::string node_list(const JobLayout& layout) {
  std::string list;
  for (const auto& host : layout.hosts) {
    list += (list.empty() ? "" : ",") + host.name;
  }
  return list;
}
std::string proc_list(const JobLayout& layout) {
  std::string list;
  for (std::size_t i = 0; i < layout.hosts.size(); ++i) {
    list += (i == 0 ? "" : ";") + rank_list(layout.first_rank(static_cast<int>(i)),
                                            layout.hosts[i].ranks);
  }
  return list;
}

std::vector<KeyValue> rank_keys(const JobLayout& layout, int rank) {
  int host = layout.host_of(rank);
  int local = rank - layout.first_rank(host);
  return {
      number_key(key::rank, ValueType::rank, rank),
      number_key(key::global_rank, ValueType::rank, rank),
      number_key(key::app_rank, ValueType::rank, rank),
      number_key(key::appnum, ValueType::uint32, 0),
      // One job per host at a time: the node rank is the local rank.
      number_key(key::local_rank, ValueType::uint16, local),
      number_key(key::node_rank, ValueType::uint16, local),
      text_key(key::hostname, layout.hosts[static_cast<std::size_t>(host)].name),
      number_key(key::nodeid, ValueType::uint32, host),
  };
}

Result<void> check_host_names(const JobLayout& layout) {
  std::set<std::string> seen;
  for (const auto& host : layout.hosts) {
    if (host.name.empty() || host.name.find_first_of(",; \t\n") != std::string::npos) {
      return fail(ExitCode::usage, fmt::format("PMIx host name '{}' is empty or holds ',', ';' or "
                                               "a blank", host.name));
    }
    if (!seen.insert(host.name).second) {
      return fail(ExitCode::usage,
                  fmt::format("two hosts of the PMIx job have the same name '{}': each host's "
                              "server must go by a name of its own",
                              host.name));
    }
    if (host.ranks < 1) {
      return fail(ExitCode::usage,
                  fmt::format("PMIx host '{}' has {} ranks; each host needs at least one",
                              host.name, host.ranks));
    }
  }
  return {};
}

} // namespace

int JobLayout::world_size() const { return first_rank(static_cast<int>(hosts.size())); }

int JobLayout::first_rank(int host) const {
  int first = 0;
  for (int i = 0; i < host; ++i) {
    first += hosts[static_cast<std::size_t>(i)].ranks;
  }
  return first;
}

int JobLayout::host_of(int rank) const {
  int host = 0;
  int last = static_cast<int>(hosts.size()) - 1;
  for (int end = hosts.front().ranks; rank >= end && host < last;
       end += hosts[static_cast<std::size_t>(host)].ranks) {
    ++host;
  }
  return host;
}

std::string job_namespace(std::string_view job, std::string_view attempt) {
  return fmt::format("ddl-{}-{}", job, attempt);
}

void make_host_names_unique(std::vector<HostShare>& hosts) {
  std::map<std::string, int> holders;
  for (const auto& host : hosts) {
    ++holders[host.name];
  }
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    if (holders[hosts[i].name] > 1) {
      hosts[i].name += fmt::format("-ddl{}", i);
    }
  }
}

Result<void> check_layout(const JobLayout& layout) {
  if (layout.nspace.empty() || layout.nspace.size() > k_max_nspace) {
    return fail(ExitCode::usage, fmt::format("PMIx namespace '{}' must have 1 to {} characters",
                                             layout.nspace, k_max_nspace));
  }
  if (layout.hosts.empty()) {
    return fail(ExitCode::usage, "a PMIx job needs at least one host");
  }
  if (layout.this_host < 0 || layout.this_host >= static_cast<int>(layout.hosts.size())) {
    return fail(ExitCode::usage, fmt::format("host index {} is not one of the job's {} hosts",
                                             layout.this_host, layout.hosts.size()));
  }
  return check_host_names(layout);
}

NamespaceKeys namespace_keys(const JobLayout& layout, const SessionDirs& dirs) {
  int world = layout.world_size();
  int local = layout.local_ranks();
  NamespaceKeys keys;
  keys.job = {
      number_key(key::job_size, ValueType::uint32, world),
      number_key(key::univ_size, ValueType::uint32, world),
      number_key(key::max_procs, ValueType::uint32, world),
      number_key(key::app_size, ValueType::uint32, world),
      number_key(key::job_num_apps, ValueType::uint32, 1),
      number_key(key::num_nodes, ValueType::uint32, static_cast<int>(layout.hosts.size())),
      text_key(key::jobid, layout.nspace),
      number_key(key::appldr, ValueType::rank, 0),
      number_key(key::spawned, ValueType::boolean, 0),
      text_key(key::node_map, node_list(layout), ValueType::regex_nodes),
      text_key(key::proc_map, proc_list(layout), ValueType::regex_procs),
      number_key(key::local_size, ValueType::uint32, local),
      number_key(key::node_size, ValueType::uint32, local),
      text_key(key::local_peers, rank_list(layout.first_local_rank(), local)),
      number_key(key::localldr, ValueType::rank, layout.first_local_rank()),
      text_key(key::tmpdir, dirs.tmpdir),
      text_key(key::nsdir, dirs.nsdir),
      number_key(key::tdir_rmclean, ValueType::boolean, 1),
  };
  for (int rank = 0; rank < world; ++rank) {
    keys.ranks.push_back(rank_keys(layout, rank));
  }
  return keys;
}

std::vector<std::string> rank_identity_env(const JobLayout& layout, int rank) {
  const int host = layout.host_of(rank);
  return {fmt::format("DDL_RANK={}", rank), fmt::format("DDL_WORLD_SIZE={}", layout.world_size()),
          fmt::format("DDL_LOCAL_RANK={}", rank - layout.first_rank(host)),
          fmt::format("DDL_LOCAL_SIZE={}", layout.hosts.at(static_cast<std::size_t>(host)).ranks),
          fmt::format("DDL_NODE_RANK={}", host)};
}

} // namespace ddl::pmix
