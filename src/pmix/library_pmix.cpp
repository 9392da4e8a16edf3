// SPDX-License-Identifier: MIT
#include "src/pmix/library_pmix.hpp"

#include <mutex>

#include <fmt/core.h>

#include "src/util/shared_library.hpp"

namespace ddl::pmix {

namespace {

PmixApi load_api() {
  PmixApi api;
  std::string tried;
  void* lib = open_first({"libpmix.so.2", "libpmix.so"}, tried);
  if (lib == nullptr) {
    api.error = "OpenPMIx's library is not installed on this host (tried " + tried +
                "); install OpenPMIx 4 or later (Debian and Ubuntu: apt-get install libpmix2; "
                "Fedora and RHEL: dnf install pmix)";
    return api;
  }
  std::string& e = api.error;
  bind(lib, "PMIx_server_init", api.server_init, e);
  bind(lib, "PMIx_server_finalize", api.server_finalize, e);
  bind(lib, "PMIx_server_register_nspace", api.register_nspace, e);
  bind(lib, "PMIx_server_deregister_nspace", api.deregister_nspace, e);
  bind(lib, "PMIx_server_register_client", api.register_client, e);
  bind(lib, "PMIx_server_setup_fork", api.setup_fork, e);
  bind(lib, "PMIx_generate_regex", api.generate_regex, e);
  bind(lib, "PMIx_generate_ppn", api.generate_ppn, e);
  bind(lib, "PMIx_Error_string", api.error_string, e);
  bind(lib, "PMIx_Get_version", api.get_version, e);
  bind(lib, "PMIx_Info_list_start", api.info_list_start, e);
  bind(lib, "PMIx_Info_list_add", api.info_list_add, e);
  bind(lib, "PMIx_Info_list_convert", api.info_list_convert, e);
  bind(lib, "PMIx_Info_list_release", api.info_list_release, e);
  bind(lib, "PMIx_Data_array_destruct", api.data_array_destruct, e);
  if (!e.empty()) {
    e = "the PMIx library found is too old for ddl (OpenPMIx 4 or later is needed): " + e;
  }
  return api;
}

} // namespace

const PmixApi& pmix_api() {
  static std::once_flag once;
  static PmixApi api;
  std::call_once(once, [] { api = load_api(); });
  return api;
}

std::string status_text(pmix_status_t status) {
  const char* name = pmix_api().error_string != nullptr ? pmix_api().error_string(status) : nullptr;
  return fmt::format("{} ({})", name != nullptr ? name : "PMIx error", status);
}

} // namespace ddl::pmix
