// SPDX-License-Identifier: MIT
// pmix_info_t arrays built through the library's Info_list calls (no PMIx
// macro, since each expands to library calls that ddl resolves by dlsym).
#pragma once

#include <string>

#include "src/pmix/layout.hpp"
#include "src/pmix/library_pmix.hpp"
#include "src/util/error.hpp"

namespace ddl::pmix {

// A list of pmix_info_t under construction; released when destroyed.
class InfoList {
public:
  InfoList();
  ~InfoList();
  InfoList(const InfoList&) = delete;
  InfoList& operator=(const InfoList&) = delete;

  void add_string(const char* key, const std::string& value);
  void add_bool(const char* key, bool value);
  // Adds `value` as PMIx gets it; regex values are compressed first.
  Result<void> add(const KeyValue& value);
  // Adds `inner`'s entries as one PMIX_DATA_ARRAY value under `key`.
  void add_array(const char* key, InfoList& inner);
  // The list as an array of pmix_info_t, for the caller to release with
  // PMIx_Data_array_destruct.
  pmix_data_array_t take();

private:
  Result<void> add_regex(const KeyValue& value);
  void* list_;
};

// The namespace's keys as one array of pmix_info_t for
// PMIx_server_register_nspace: the job's keys, then each rank's under
// PMIX_PROC_INFO_ARRAY.
Result<pmix_data_array_t> namespace_info(const NamespaceKeys& keys);

} // namespace ddl::pmix
