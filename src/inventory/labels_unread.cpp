// SPDX-License-Identifier: MIT
#include <fmt/core.h>

#include "src/inventory/inventory.hpp"
#include "src/util/log.hpp"
#include "src/util/signals.hpp"

namespace ddl {

Result<void> labels_unread(Inventory& hosts, LabelNeed need, const Error& error, std::string_view shown_as,
                           std::string_view what, std::string_view hint) {
  if (stop::is_stop_error(error)) {
    return fail(error);
  }
  if (need != LabelNeed::required) {
    print_warning(fmt::format("{}: {}", shown_as, error.message));
    for (Host& host : hosts) {
      host.labels_error = error.message;  // for ddl hosts --json, which a script reads without stderr
    }
    return {};
  }
  return fail(ExitCode::launch,
              fmt::format("[placement] uses host labels (constraints or order), but {} could not be read: {}; {}",
                          what, error.message, hint));
}

} // namespace ddl
