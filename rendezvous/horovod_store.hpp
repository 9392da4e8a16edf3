// SPDX-License-Identifier: MIT
#pragma once

// Horovod's gloo rendezvous store, as horovodrun's http_server.py keeps it:
// values under /scope/key. GET of a missing key is 404 (the client polls);
// PUT stores the body; DELETE /scope/<rank> of a scope the plan declares
// (global, local_<HOROVOD_HOSTNAME>, cross_<HOROVOD_LOCAL_RANK>) counts that
// rank as finished and clears the scope once all its ranks are; in any other
// scope it deletes the one key. Bounded: a PUT that would take the store
// past max_bytes is refused (507).

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <unordered_map>

#include "rendezvous/http_request.hpp"
#include "src/plan/plan.hpp"

namespace ddl::rendezvous {

class HorovodStore {
public:
  // scope -> number of ranks in it.
  using ScopeSizes = std::map<std::string, int>;
  HorovodStore(ScopeSizes sizes, std::size_t max_bytes);

  HttpResponse handle(const HttpRequest& request);
  // Every value dropped (a new attempt of the gang).
  void clear();
  std::size_t bytes() const { return bytes_; }

private:
  HttpResponse put(const std::string& scope, const std::string& key, const std::string& value);
  HttpResponse remove(const std::string& scope, const std::string& key);

  ScopeSizes sizes_;
  std::size_t max_bytes_;
  std::size_t bytes_ = 0;
  std::unordered_map<std::string, std::unordered_map<std::string, std::string>> values_;
  std::map<std::string, std::set<std::string>> finished_;
};

// The scopes horovodrun declares for `plan`: global (world size),
// local_<host name> (ranks on it), cross_<local rank> (hosts with it).
HorovodStore::ScopeSizes horovod_scope_sizes(const Plan& plan);

} // namespace ddl::rendezvous
