// SPDX-License-Identifier: MIT
#include "src/pmix/host_outcome.hpp"

#include <algorithm>

#include <fmt/core.h>

#include "src/util/signal_names.hpp"

namespace ddl::pmix {

HostOutcome::HostOutcome(int first_rank, int ranks)
    : m_first_rank(first_rank), m_ranks(static_cast<std::size_t>(ranks)) {}

HostOutcome::RankState& HostOutcome::at(int rank) {
  return m_ranks.at(static_cast<std::size_t>(rank - m_first_rank));
}
const HostOutcome::RankState& HostOutcome::at(int rank) const {
  return m_ranks.at(static_cast<std::size_t>(rank - m_first_rank));
}

void HostOutcome::first_failure(int code, const std::string& reason) {
  if (m_reason.empty()) {
    m_code = code;
    m_reason = reason;
  }
}

void HostOutcome::connected(int rank) {
  at(rank).connected = true;
  m_any_connected = true;
}

void HostOutcome::finalized(int rank) { at(rank).finalized = true; }

void HostOutcome::aborted(int rank, int status, const std::string& message) {
  int code = status % 256 == 0 ? 1 : status & 0xff;
  std::string detail = message.empty() || message == "N/A" ? "" : ": " + message;
  first_failure(code, fmt::format("rank {} called MPI_Abort with status {}{}", rank, status, detail));
}

void HostOutcome::exited(int rank, ProcessExit how) {
  auto& state = at(rank);
  state.exited = true;
  if (how.signal != 0) {
    first_failure(how.code, fmt::format("rank {} was killed by {}", rank, signal_name(how.signal)));
  } else if (how.code != 0) {
    first_failure(how.code, fmt::format("rank {} exited with code {}", rank, how.code));
  } else if (!state.finalized && m_any_connected) {
    first_failure(1, fmt::format("rank {} exited with code 0 without calling MPI_Finalize "
                                 "(PMIx_Finalize) while its peers may wait for it",
                                 rank));
  }
}

void HostOutcome::failed(int code, const std::string& message) { first_failure(code, message); }

bool HostOutcome::all_exited() const {
  return std::all_of(m_ranks.begin(), m_ranks.end(), [](const RankState& s) { return s.exited; });
}

bool HostOutcome::has_exited(int rank) const { return at(rank).exited; }

} // namespace ddl::pmix
