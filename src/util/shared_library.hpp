// SPDX-License-Identifier: MIT
// Libraries opened at run time (CUDA, NCCL, MPI, PMIx), so that one ddl
// binary runs on hosts without them.
#pragma once

#include <dlfcn.h>

#include <initializer_list>
#include <string>

#include <fmt/core.h>

namespace ddl {

// The first of `names` that opens (RTLD_GLOBAL: their own plugins resolve
// symbols through it); nullptr with every name tried listed in `tried`.
inline void* open_first(std::initializer_list<const char*> names, std::string& tried) {
  for (const char* name : names) {
    if (void* handle = ::dlopen(name, RTLD_NOW | RTLD_GLOBAL)) {
      return handle;
    }
    tried += std::string(tried.empty() ? "" : ", ") + name;
  }
  return nullptr;
}

// Looks `symbol` up into `out`; the first one missing is named in `error`.
template <typename T> bool bind(void* lib, const char* symbol, T& out, std::string& error) {
  out = reinterpret_cast<T>(::dlsym(lib, symbol));
  if (out == nullptr && error.empty()) {
    error = fmt::format("symbol {} missing from the loaded library", symbol);
  }
  return out != nullptr;
}

} // namespace ddl
