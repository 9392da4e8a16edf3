// SPDX-License-Identifier: MIT
#pragma once

// The lines of `ddl worker pmix-host` (--mpi pmix), written by the worker and
// read by ddl: each MPI rank's line tagged "[R] ", a piece of a line too long
// to hold "[R+] " (the line goes on in R's next piece), and the worker's
// verdict on its host, "ddl: error: rank R ..." when a rank failed first.
// Their version is k_version: ddl asks the worker for it (`--lines N`), and
// a worker that writes another refuses to start, naming both (the host's ddl
// may be another release than the launching one). doc/protocols.md.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "src/util/error.hpp"

namespace ddl::rank_tag {

// The lines' version: raised whenever what a tag or verdict looks like changes.
inline constexpr int k_version = 1;
// Ok where ddl asks for `asked`, the version this worker writes; else
// ExitCode::launch naming both versions.
Result<void> check_version(int asked);

std::string tag(int rank);        // "[R] "
std::string continued(int rank);  // "[R+] "

struct Tag {
  int rank = -1;
  std::size_t text_at = 0;  // where the line's own text starts
  bool continues = false;   // "[R+] "
};
// nullopt for a line without such a tag.
std::optional<Tag> parse(std::string_view line);

// "ddl: error: REASON"; a REASON naming a rank starts "rank R ".
std::string verdict_line(std::string_view reason);
// R of a verdict line naming a rank; nullopt for any other line.
std::optional<int> blamed_rank(std::string_view line);

} // namespace ddl::rank_tag
