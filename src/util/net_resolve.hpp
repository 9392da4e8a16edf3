// SPDX-License-Identifier: MIT
#pragma once

// Host names to addresses, the one place ddl looks them up. `ddl render` and
// `ddl run --dry-run` never wait on DNS (DESIGN: "rendering never needs
// DNS"): in NameLookup::no_dns only numeric addresses, "localhost" and
// /etc/hosts answer, and any other name renders by name. A launch resolves
// every name at once, in parallel, under one deadline (resolve_all).

#include <netdb.h>

#include <string>
#include <vector>

#include "src/util/duration.hpp"

namespace ddl::net {

enum class NameLookup { resolver, no_dns };
// For the whole process; render and --dry-run set no_dns before planning.
void set_name_lookup(NameLookup how);
NameLookup name_lookup();

// getaddrinfo(host, service) as the mode allows ("[v6]" brackets taken off):
// in no_dns, EAI_NONAME for a name that only the resolver could answer.
int lookup(const std::string& host, const char* service, const addrinfo& hints, addrinfo** out);

// Whether `host` is numeric, "localhost" or in /etc/hosts: known without DNS.
bool known_without_dns(const std::string& host);

// One name's answer from resolve_all.
struct NameAnswer {
  bool resolved = false;
  bool loopback = false;  // every address it has is loopback
  std::string why;        // when not resolved
};

// Every name looked up at once (one thread per name, at most 64 at a time);
// a name without an answer when `deadline` has passed is "no answer within
// Ns". In no_dns mode, names unknown without DNS are not resolved.
std::vector<NameAnswer> resolve_all(const std::vector<std::string>& names, Millis deadline);

// How long a launch waits for all of its names together.
inline constexpr Millis k_resolve_deadline{10'000};

} // namespace ddl::net
