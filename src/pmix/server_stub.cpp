// SPDX-License-Identifier: MIT
// The PMIx server of a build without the PMIx headers: always unavailable.
#include "src/pmix/server.hpp"

#ifndef DDL_HAVE_PMIX
namespace ddl::pmix {

namespace {
constexpr const char* k_no_pmix_build =
    "this ddl was built without PMIx support (no pmix_server.h at build time; Debian: "
    "libpmix-dev)";
}

struct Server::State {};

bool server_available(std::string* why) {
  if (why != nullptr) {
    *why = k_no_pmix_build;
  }
  return false;
}

Server::Server(std::unique_ptr<State> state) : state_(std::move(state)) {}
Server::~Server() = default;

Result<std::unique_ptr<Server>> Server::start(const JobLayout& /*layout*/, ServerEvents /*events*/) {
  return fail(ExitCode::usage, std::string("cannot host a PMIx server: ") + k_no_pmix_build);
}

Result<std::vector<std::string>> Server::rank_env(int /*rank*/) const {
  return fail(ExitCode::launch, k_no_pmix_build);
}

const std::string& Server::directory() const {
  static const std::string none;
  return none;
}

std::string Server::library_version() const { return ""; }

} // namespace ddl::pmix
#endif
