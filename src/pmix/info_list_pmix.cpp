// SPDX-License-Identifier: MIT
#include "src/pmix/info_list_pmix.hpp"

#include <cstdint>
#include <cstdlib>

#include "src/pmix/keys.hpp"

namespace ddl::pmix {

// keys.hpp spells each name as the headers do.
static_assert(key::job_size == PMIX_JOB_SIZE && key::univ_size == PMIX_UNIV_SIZE &&
              key::max_procs == PMIX_MAX_PROCS && key::app_size == PMIX_APP_SIZE &&
              key::job_num_apps == PMIX_JOB_NUM_APPS && key::num_nodes == PMIX_NUM_NODES &&
              key::jobid == PMIX_JOBID && key::appldr == PMIX_APPLDR &&
              key::spawned == PMIX_SPAWNED && key::node_map == PMIX_NODE_MAP &&
              key::proc_map == PMIX_PROC_MAP && key::tmpdir == PMIX_TMPDIR &&
              key::nsdir == PMIX_NSDIR && key::tdir_rmclean == PMIX_TDIR_RMCLEAN);
static_assert(key::local_size == PMIX_LOCAL_SIZE && key::node_size == PMIX_NODE_SIZE &&
              key::local_peers == PMIX_LOCAL_PEERS && key::localldr == PMIX_LOCALLDR &&
              key::proc_info_array == PMIX_PROC_INFO_ARRAY && key::rank == PMIX_RANK &&
              key::global_rank == PMIX_GLOBAL_RANK && key::app_rank == PMIX_APP_RANK &&
              key::appnum == PMIX_APPNUM && key::local_rank == PMIX_LOCAL_RANK &&
              key::node_rank == PMIX_NODE_RANK && key::hostname == PMIX_HOSTNAME &&
              key::nodeid == PMIX_NODEID);

InfoList::InfoList() : list_(pmix_api().info_list_start()) {}

InfoList::~InfoList() { pmix_api().info_list_release(list_); }

void InfoList::add_string(const char* key, const std::string& value) {
  pmix_api().info_list_add(list_, key, value.c_str(), PMIX_STRING);
}

void InfoList::add_bool(const char* key, bool value) {
  pmix_api().info_list_add(list_, key, &value, PMIX_BOOL);
}

Result<void> InfoList::add_regex(const KeyValue& value) {
  const auto& api = pmix_api();
  char* regex = nullptr;
  pmix_status_t status = value.type == ValueType::regex_nodes
                             ? api.generate_regex(value.text.c_str(), &regex)
                             : api.generate_ppn(value.text.c_str(), &regex);
  if (status == PMIX_SUCCESS) {
    status = api.info_list_add(list_, value.key.c_str(), regex, PMIX_REGEX);
  }
  std::free(regex);
  if (status != PMIX_SUCCESS) {
    return fail(ExitCode::launch,
                "PMIx cannot compress the map '" + value.text + "': " + status_text(status));
  }
  return {};
}

Result<void> InfoList::add(const KeyValue& value) {
  const char* key = value.key.c_str();
  auto uint16 = static_cast<std::uint16_t>(value.number);
  auto rank = static_cast<pmix_rank_t>(value.number);
  bool flag = value.number != 0;
  pmix_status_t status = PMIX_SUCCESS;
  switch (value.type) {
  case ValueType::string:
    status = pmix_api().info_list_add(list_, key, value.text.c_str(), PMIX_STRING);
    break;
  case ValueType::uint32:
    status = pmix_api().info_list_add(list_, key, &value.number, PMIX_UINT32);
    break;
  case ValueType::uint16:
    status = pmix_api().info_list_add(list_, key, &uint16, PMIX_UINT16);
    break;
  case ValueType::rank:
    status = pmix_api().info_list_add(list_, key, &rank, PMIX_PROC_RANK);
    break;
  case ValueType::boolean:
    status = pmix_api().info_list_add(list_, key, &flag, PMIX_BOOL);
    break;
  case ValueType::regex_nodes:
  case ValueType::regex_procs:
    return add_regex(value);
  }
  if (status != PMIX_SUCCESS) {
    return fail(ExitCode::launch, "PMIx refused key " + value.key + ": " + status_text(status));
  }
  return {};
}

void InfoList::add_array(const char* key, InfoList& inner) {
  pmix_data_array_t array = inner.take();
  // Info_list_add copies the array: ours is released at once.
  pmix_api().info_list_add(list_, key, &array, PMIX_DATA_ARRAY);
  pmix_api().data_array_destruct(&array);
}

pmix_data_array_t InfoList::take() {
  pmix_data_array_t array{};
  pmix_api().info_list_convert(list_, &array);
  return array;
}

Result<pmix_data_array_t> namespace_info(const NamespaceKeys& keys) {
  InfoList job;
  for (const auto& value : keys.job) {
    if (auto added = job.add(value); !added) {
      return fail(added.error());
    }
  }
  for (const auto& rank_keys : keys.ranks) {
    InfoList rank;
    for (const auto& value : rank_keys) {
      if (auto added = rank.add(value); !added) {
        return fail(added.error());
      }
    }
    job.add_array(PMIX_PROC_INFO_ARRAY, rank);
  }
  return job.take();
}

} // namespace ddl::pmix
