// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <vector>

#include "src/util/process.hpp"

namespace ddl::pmix {

// How the ranks of one host ended, with ddl's gang semantics: the first
// failure decides the host's exit code and stops the others.
// - MPI_Abort (PMIx_Abort) with status S: exit S (1 when S % 256 is 0: an
//   abort never reads as success).
// - A rank that exits non-zero or dies of a signal: its code, or 128+N.
// - A rank that exits 0 without PMIx_Finalize (MPI_Finalize) once any rank of
//   this host has connected: exit 1. Its peers would wait for it in a fence
//   forever; a program that never touches PMIx on any rank is left alone.
// - A failure of the host itself (fence exchange, a rank that cannot start,
//   a signal to ddl): the code it gives.
class HostOutcome {
public:
  // The host's ranks are `first_rank` .. `first_rank + ranks - 1`.
  HostOutcome(int first_rank, int ranks);

  void connected(int rank);
  void finalized(int rank);
  void aborted(int rank, int status, const std::string& message);
  void exited(int rank, ProcessExit how);
  void failed(int code, const std::string& message);

  // A failure happened: the remaining ranks are to be stopped.
  bool failing() const { return !m_reason.empty(); }
  bool all_exited() const;
  bool has_exited(int rank) const;
  // 0 while nothing failed.
  int exit_code() const { return m_code; }
  // The first failure, for the user ("rank 1 called MPI_Abort with status 3").
  const std::string& reason() const { return m_reason; }

private:
  struct RankState {
    bool connected = false;
    bool finalized = false;
    bool exited = false;
  };
  RankState& at(int rank);
  const RankState& at(int rank) const;
  void first_failure(int code, const std::string& reason);

  int m_first_rank;
  std::vector<RankState> m_ranks;
  bool m_any_connected = false;
  int m_code = 0;
  std::string m_reason;
};

} // namespace ddl::pmix
