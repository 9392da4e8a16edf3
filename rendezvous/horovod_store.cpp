// SPDX-License-Identifier: MIT
#include "rendezvous/horovod_store.hpp"

#include <fmt/format.h>

namespace ddl::rendezvous {
namespace {

// "/scope/key" -> scope and key; both non-empty, nothing else.
bool split_target(const std::string& target, std::string& scope, std::string& key) {
  if (target.size() < 4 || target.front() != '/') return false;
  const std::size_t slash = target.find('/', 1);
  if (slash == std::string::npos || slash == 1 || slash + 1 == target.size()) return false;
  if (target.find('/', slash + 1) != std::string::npos) return false;
  scope = target.substr(1, slash - 1);
  key = target.substr(slash + 1);
  return true;
}

std::size_t entry_bytes(const std::string& scope, const std::string& key, const std::string& value) {
  constexpr std::size_t k_entry_overhead = 64;  // so that empty values still count
  return k_entry_overhead + scope.size() + key.size() + value.size();
}

} // namespace

HorovodStore::HorovodStore(ScopeSizes sizes, std::size_t max_bytes)
    : sizes_(std::move(sizes)), max_bytes_(max_bytes) {}

HttpResponse HorovodStore::handle(const HttpRequest& request) {
  std::string scope;
  std::string key;
  if (!split_target(request.target, scope, key)) {
    return {400, "the path must be /scope/key\n"};
  }
  if (request.method == "GET") {
    auto in_scope = values_.find(scope);
    if (in_scope == values_.end()) return {404, ""};
    auto value = in_scope->second.find(key);
    if (value == in_scope->second.end()) return {404, ""};
    return {200, value->second};
  }
  if (request.method == "PUT") return put(scope, key, request.body);
  if (request.method == "DELETE") return remove(scope, key);
  return {405, "GET, PUT or DELETE\n"};
}

HttpResponse HorovodStore::put(const std::string& scope, const std::string& key, const std::string& value) {
  auto& in_scope = values_[scope];
  auto old = in_scope.find(key);
  const std::size_t freed = old == in_scope.end() ? 0 : entry_bytes(scope, key, old->second);
  const std::size_t added = entry_bytes(scope, key, value);
  if (bytes_ - freed + added > max_bytes_) {
    if (in_scope.empty()) values_.erase(scope);
    return {507, fmt::format("the store is full ({} bytes)\n", max_bytes_)};
  }
  bytes_ = bytes_ - freed + added;
  in_scope[key] = value;
  return {200, ""};
}

HttpResponse HorovodStore::remove(const std::string& scope, const std::string& key) {
  auto erase_scope = [&] {
    if (auto in_scope = values_.find(scope); in_scope != values_.end()) {
      for (const auto& [k, v] : in_scope->second) bytes_ -= entry_bytes(scope, k, v);
      values_.erase(in_scope);
    }
  };
  if (auto size = sizes_.find(scope); size != sizes_.end()) {
    auto& done = finished_[scope];
    done.insert(key);
    if (static_cast<int>(done.size()) >= size->second) {
      erase_scope();
      finished_.erase(scope);
    }
    return {200, ""};
  }
  auto in_scope = values_.find(scope);
  if (in_scope != values_.end()) {
    if (auto value = in_scope->second.find(key); value != in_scope->second.end()) {
      bytes_ -= entry_bytes(scope, key, value->second);
      in_scope->second.erase(value);
    }
    if (in_scope->second.empty()) values_.erase(in_scope);
  }
  return {200, ""};
}

void HorovodStore::clear() {
  values_.clear();
  finished_.clear();
  bytes_ = 0;
}

HorovodStore::ScopeSizes horovod_scope_sizes(const Plan& plan) {
  HorovodStore::ScopeSizes sizes;
  sizes["global"] = plan.world_size;
  for (const auto& slot : plan.ranks) {
    sizes["local_" + plan.hosts.at(slot.host_index).name] = slot.local_size;
    sizes["cross_" + std::to_string(slot.local_rank)] = slot.cross_size;
  }
  return sizes;
}

} // namespace ddl::rendezvous
