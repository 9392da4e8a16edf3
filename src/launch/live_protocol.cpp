// SPDX-License-Identifier: MIT
#include "src/launch/live_protocol.hpp"

#include <fmt/core.h>

#include "src/util/text.hpp"

namespace ddl::live_protocol {

namespace {
constexpr std::string_view k_magic = "ddl-live ";
// What a ddl from before versions answers a versioned line.
constexpr std::string_view k_unknown = "unknown request";
} // namespace

std::string request_line(std::string_view request) { return fmt::format("{}{} {}\n", k_magic, k_version, request); }

Result<std::string> read_request(std::string_view line) {
  if (!line.starts_with(k_magic)) {
    return fail(ExitCode::launch, fmt::format("this job's ddl speaks live protocol version {}, the asking ddl one "
                                              "without versions (an older release): ask with the ddl that started "
                                              "the job",
                                              k_version));
  }
  std::string_view rest = line.substr(k_magic.size());
  const std::size_t blank = rest.find(' ');
  std::string_view version = rest.substr(0, blank);
  if (version != std::to_string(k_version)) {
    return fail(ExitCode::launch, fmt::format("this job's ddl speaks live protocol version {}, the asking ddl "
                                              "version {}: ask with the ddl that started the job",
                                              k_version, escape_control(clip(version, 20))));
  }
  return std::string(blank == std::string_view::npos ? std::string_view() : rest.substr(blank + 1));
}

std::string refusal(std::string_view text) {
  if (text != k_unknown) {
    return std::string(text);
  }
  return fmt::format("this job's ddl speaks a live protocol without versions (an older release), this ddl "
                     "version {}: ask with the ddl that started the job",
                     k_version);
}

} // namespace ddl::live_protocol
