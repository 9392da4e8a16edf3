// SPDX-License-Identifier: MIT
#pragma once

// The network interface each host's ranks use toward rank 0, and the
// variables ddl sets from it.

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "src/plan/plan.hpp"

namespace ddl {

// The network interface of one host for the job's traffic: the one holding
// the address that the host's own route to rank 0's address leaves from.
struct HostInterface {
  std::string name;     // "eth0"; "" when none was found
  std::string address;  // the address it holds, the one peers reach
  std::string why;      // how it was chosen, or why none was
  bool unreachable = false;  // the host could not be reached (the launch reports it)
};

// What ddl sets per host from HostInterface::name, unless the user sets it.
inline constexpr std::array<std::string_view, 3> k_interface_variables = {
    "GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME", "HOROVOD_GLOO_IFACE"};

// The interface `name` holding `source`, the address a host's route to
// `target` (rank 0's address) leaves from, with why it was chosen.
HostInterface interface_found(std::string name, std::string source, const std::string& target);
// No interface, and why.
HostInterface interface_unknown(std::string why);

// Per host, the interface chosen and why (what --dry-run prints after the
// plan table); "" when `interfaces` is empty.
std::string interfaces_text(const Plan& plan, const std::vector<HostInterface>& interfaces,
                            const std::string& target);

} // namespace ddl
