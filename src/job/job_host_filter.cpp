// SPDX-License-Identifier: MIT
// --include / --exclude syntax (DeepSpeed's launcher): "host1:0,1@host2".
#include <fmt/core.h>

#include "src/job/job_host_filter.hpp"
#include "src/job/hostlist.hpp"
#include "src/job/limits.hpp"
#include "src/util/text.hpp"

namespace ddl {

namespace {

Unexpected bad(std::string message) { return fail(ExitCode::usage, std::move(message)); }

Result<std::vector<int>> parse_slot_ids(std::string_view text, std::string_view item) {
  std::vector<int> ids;
  for (const std::string& word : split(text, ',')) {
    auto id = word.size() <= 9 ? parse_int(word) : std::nullopt;
    if (!id || *id < 0 || *id >= k_max_world_size) {
      return bad(fmt::format("bad slot '{}' in '{}'", word, item));
    }
    ids.push_back(static_cast<int>(*id));
  }
  return ids;
}

// "node[1-2]:0,1" -> node1 {0,1}, node2 {0,1}.
Result<std::vector<HostSlots>> parse_item(std::string_view item) {
  std::size_t colon = item.find(':');
  std::string_view names = item.substr(0, colon);
  if (names.empty()) {
    return bad(fmt::format("no host in '{}'", item));
  }
  std::vector<int> ids;
  if (colon != item.npos) {
    auto parsed = parse_slot_ids(item.substr(colon + 1), item);
    if (!parsed) {
      return fail(parsed.error());
    }
    ids = std::move(*parsed);
  }
  auto hosts = expand_hostlist(names);
  if (!hosts) {
    return fail(hosts.error());
  }
  std::vector<HostSlots> out;
  for (const HostSpec& host : *hosts) {
    out.push_back(HostSlots{host.name, ids});
  }
  return out;
}

} // namespace

Result<std::vector<HostSlots>> parse_host_filter(std::string_view text) {
  if (trim(text).empty()) {
    return bad("empty host filter");
  }
  std::vector<HostSlots> filter;
  for (const std::string& item : split(text, '@')) {
    auto hosts = parse_item(trim(item));
    if (!hosts) {
      return fail(hosts.error());
    }
    if (filter.size() + hosts->size() > k_max_hosts) {
      return bad(fmt::format("'{}' names more than {} hosts", text, k_max_hosts));
    }
    filter.insert(filter.end(), hosts->begin(), hosts->end());
  }
  return filter;
}

} // namespace ddl
