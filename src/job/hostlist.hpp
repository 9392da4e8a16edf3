// SPDX-License-Identifier: MIT
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/util/error.hpp"

namespace ddl {

// A host's labels, `key=value` words after it in a list or hostfile line
// ("gpu01:8 rack=r1 gpu=a100"), from Kubernetes node labels or Slurm
// features; [placement] constraints and order read them.
using Labels = std::map<std::string, std::string, std::less<>>;

// A host spec as written in a list or -H: "name", "name:slots", "[v6]:slots",
// with the login that pdsh and ssh users write: "user@name",
// "name:port:slots", "user@[v6]:port:slots", each optionally followed by
// label words: "gpu01:8 rack=r1".
struct HostSpec {
  std::string name;
  std::optional<int> slots;
  std::string user{};         // "" = [ssh] user or the ssh config's
  std::optional<int> port{};  // empty = [ssh] port or the ssh config's
  Labels labels{};
  // The host's GPU ids, when known: never written in a list; a sweep's
  // trial request carries the GPUs of the slots the trial holds.
  std::vector<int> gpus{};
  bool operator==(const HostSpec&) const = default;
};

// "ml@gpu-b:2222:2 rack=r1", "[fe80::1]:4", "gpu-a": the one way a host
// spec is written back as text, which expand_hostlist reads as `spec`
// (gpus aside). A port is written with its slots, as the syntax has it (1
// when none is known).
std::string format_host_spec(const HostSpec& spec);

// "[fe80::1]" for an IPv6 address, a name or IPv4 address as it is: a host
// before ":port".
std::string bracket_ipv6(std::string_view host);

// "ml@10.0.0.5:2222", "[fe80::1]:2222" (brackets around an IPv6 address
// with a port), or `host` alone: what ssh is told to reach.
std::string format_login(std::string_view user, std::string_view host, std::optional<int> port);

// Adds the label `word` ("key=value": key of [A-Za-z0-9._/-], not empty;
// value of the same characters, may be empty) to `labels`; the reason
// when `word` is not one, or its key is already there.
std::optional<std::string> add_label(std::string_view word, Labels& labels);

// "rack=r1 gpu=a100" (sorted by key), "" when none.
std::string format_labels(const Labels& labels);

// Expands Slurm-style hostlists: "node[01-04,07]", "gpu[1-2]-ib",
// "r[1-2]n[1-2]", "a,b" (commas outside brackets separate hosts),
// with an optional ":slots" per item and bracketed IPv6 "[fe80::1]:2".
// An item may start with "user@", and hold a port before its slots
// ("gpu-a:2222:8": a single number after ':' is always the slots).
// label words after an item's host, separated by blanks, apply to every
// host it expands to: "node[01-02]:8 rack=r1".
Result<std::vector<HostSpec>> expand_hostlist(std::string_view text);

} // namespace ddl
