// SPDX-License-Identifier: MIT
#pragma once
// Lenient field access for kubectl's JSON (pods.cpp, nodes.cpp): a missing
// field or one of another type reads as empty, never throws.

#include <string>

// nlohmann's inlined iterators trip GCC 12's -Wnull-dereference at -O2
// (here too: the functions below use them).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <nlohmann/json.hpp>

namespace ddl::kubernetes {

// The string at `key` of an object, "" when absent or not a string.
inline std::string text_at(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) {
    return "";
  }
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// The value at `key` of an object; null when absent or not an object.
inline const nlohmann::json& member(const nlohmann::json& object, const char* key) {
  static const nlohmann::json null_value;
  if (!object.is_object()) {
    return null_value;
  }
  auto it = object.find(key);
  return it != object.end() ? *it : null_value;
}

} // namespace ddl::kubernetes

#pragma GCC diagnostic pop
