// SPDX-License-Identifier: MIT
// The PMIx attribute names ddl registers, spelled as OpenPMIx's pmix_common.h
// spells them, so that the namespace's keys can be built and tested without
// the PMIx headers. server_pmix.cpp checks each against the header's macro
// at compile time.
#pragma once

#include <string_view>

namespace ddl::pmix::key {

// Job level (the whole namespace).
inline constexpr std::string_view job_size = "pmix.job.size";
inline constexpr std::string_view univ_size = "pmix.univ.size";
inline constexpr std::string_view max_procs = "pmix.max.size";
inline constexpr std::string_view app_size = "pmix.app.size";
inline constexpr std::string_view job_num_apps = "pmix.job.napps";
inline constexpr std::string_view num_nodes = "pmix.num.nodes";
inline constexpr std::string_view jobid = "pmix.jobid";
inline constexpr std::string_view appldr = "pmix.aldr";
inline constexpr std::string_view spawned = "pmix.spawned";
inline constexpr std::string_view node_map = "pmix.nmap";
inline constexpr std::string_view proc_map = "pmix.pmap";
inline constexpr std::string_view tmpdir = "pmix.tmpdir";
inline constexpr std::string_view nsdir = "pmix.nsdir";
inline constexpr std::string_view tdir_rmclean = "pmix.tdir.rmclean";
// This host's share of the job.
inline constexpr std::string_view local_size = "pmix.local.size";
inline constexpr std::string_view node_size = "pmix.node.size";
inline constexpr std::string_view local_peers = "pmix.lpeers";
inline constexpr std::string_view localldr = "pmix.lldr";
// One array of these per rank of the job, under proc_info_array.
inline constexpr std::string_view proc_info_array = "pmix.pdata";
inline constexpr std::string_view rank = "pmix.rank";
inline constexpr std::string_view global_rank = "pmix.grank";
inline constexpr std::string_view app_rank = "pmix.apprank";
inline constexpr std::string_view appnum = "pmix.appnum";
inline constexpr std::string_view local_rank = "pmix.lrank";
inline constexpr std::string_view node_rank = "pmix.nrank";
inline constexpr std::string_view hostname = "pmix.hname";
inline constexpr std::string_view nodeid = "pmix.nodeid";

} // namespace ddl::pmix::key
