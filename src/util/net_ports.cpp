// SPDX-License-Identifier: MIT
// Free ports for torch.master_port: bind tests here, /proc/net/tcp elsewhere.
#include <fmt/core.h>

#include <cstdlib>
#include <random>
#include <vector>

#include "src/util/net.hpp"
#include "src/util/text.hpp"

namespace ddl::net {
namespace {

// The wildcard torch's store listens on: IPv6 (dual stack, so an IPv4
// listener on the port conflicts too), else IPv4 where IPv6 is off.
Result<Fd> listen_wildcard(int port) {
  auto v6 = listen_tcp("::", port, 1);
  return v6 ? std::move(v6) : listen_tcp("0.0.0.0", port, 1);
}

// Binds ports first+1 .. first+count-1 (held in `held`); false when one is taken.
bool hold_rest(int first, int count, std::vector<Fd>& held) {
  for (int port = first + 1; port < first + count; ++port) {
    auto fd = listen_wildcard(port);
    if (!fd) {
      return false;
    }
    held.push_back(std::move(*fd));
  }
  return true;
}

Result<int> check_ports_here(int first, int count) {
  std::vector<Fd> held;
  for (int port = first; port < first + count; ++port) {
    auto fd = listen_wildcard(port);
    if (!fd) {
      return fail(ExitCode::launch,
                  fmt::format("port {} is already in use on this machine (another job's "
                              "store?): {}",
                              port, fd.error().message));
    }
    held.push_back(std::move(*fd));
  }
  return first;
}

} // namespace

Result<int> free_ports_here(int first, int count) {
  if (first != 0) {
    return check_ports_here(first, count);
  }
  for (int attempt = 0; attempt < 32; ++attempt) {
    auto fd = listen_wildcard(0);
    if (!fd) {
      return fail(fd.error());
    }
    const int port = local_port(fd->get());
    std::vector<Fd> held;
    if (port > 0 && port + count - 1 <= 65535 && hold_rest(port, count, held)) {
      return port;
    }
  }
  return fail(ExitCode::launch, fmt::format("found no {} free consecutive ports on this machine", count));
}

std::set<int> ports_in_proc_net_tcp(std::string_view text) {
  std::set<int> ports;
  for (const auto& line : split(text, '\n')) {
    // "  0: 0100007F:1F90 00000000:0000 0A ...": the local address's port, hex.
    const auto words = split(trim(line), ' ');
    std::vector<std::string_view> fields;
    for (const auto& word : words) {
      if (!word.empty()) {
        fields.push_back(word);
      }
    }
    if (fields.size() < 2 || fields[0].empty() || fields[0].back() != ':') {
      continue;  // the header line, or not a socket line
    }
    // TIME_WAIT (06) holds no port against a listener that sets SO_REUSEADDR
    // (torch's store does): the port of a job that just ended is free again.
    if (fields.size() > 3 && fields[3] == "06") {
      continue;
    }
    const auto colon = fields[1].rfind(':');
    if (colon == std::string_view::npos) {
      continue;
    }
    const std::string hex(fields[1].substr(colon + 1));
    char* end = nullptr;
    const long port = std::strtol(hex.c_str(), &end, 16);
    if (!hex.empty() && end != nullptr && *end == '\0' && port > 0 && port <= 65535) {
      ports.insert(static_cast<int>(port));
    }
  }
  return ports;
}

int pick_unused_ports(const std::set<int>& used, int count) {
  constexpr int low = 20000;
  constexpr int high = 32767;
  std::random_device seed;
  std::mt19937 engine(seed());
  std::uniform_int_distribution<int> start(low, high - count + 1);
  const int offset = start(engine) - low;
  const int span = high - count + 1 - low + 1;
  for (int i = 0; i < span; ++i) {
    const int first = low + (offset + i) % span;
    bool free = true;
    for (int port = first; port < first + count && free; ++port) {
      free = !used.contains(port);
    }
    if (free) {
      return first;
    }
  }
  return 0;
}

} // namespace ddl::net
