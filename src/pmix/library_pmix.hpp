// SPDX-License-Identifier: MIT
// OpenPMIx's server library, opened with dlopen on first use so that one ddl
// binary runs on hosts without it. Only the *_pmix.cpp files include this
// header (they are compiled when the PMIx headers were found at build time).
#pragma once

#include <pmix.h>
#include <pmix_server.h>

#include <string>

namespace ddl::pmix {

// The entry points ddl uses, resolved once. The Info_list calls need
// OpenPMIx 4 or later.
struct PmixApi {
  decltype(&::PMIx_server_init) server_init = nullptr;
  decltype(&::PMIx_server_finalize) server_finalize = nullptr;
  decltype(&::PMIx_server_register_nspace) register_nspace = nullptr;
  decltype(&::PMIx_server_deregister_nspace) deregister_nspace = nullptr;
  decltype(&::PMIx_server_register_client) register_client = nullptr;
  decltype(&::PMIx_server_setup_fork) setup_fork = nullptr;
  decltype(&::PMIx_generate_regex) generate_regex = nullptr;
  decltype(&::PMIx_generate_ppn) generate_ppn = nullptr;
  decltype(&::PMIx_Error_string) error_string = nullptr;
  decltype(&::PMIx_Get_version) get_version = nullptr;
  decltype(&::PMIx_Info_list_start) info_list_start = nullptr;
  decltype(&::PMIx_Info_list_add) info_list_add = nullptr;
  decltype(&::PMIx_Info_list_convert) info_list_convert = nullptr;
  decltype(&::PMIx_Info_list_release) info_list_release = nullptr;
  decltype(&::PMIx_Data_array_destruct) data_array_destruct = nullptr;
  std::string error;  // why loading failed; empty when all is there
};

const PmixApi& pmix_api();

// "PMIX_ERR_NOT_FOUND (-46)": a status as the library names it.
std::string status_text(pmix_status_t status);

} // namespace ddl::pmix
