// SPDX-License-Identifier: MIT
// libFuzzer harness: the job-file loader and the hostlist expander must turn
// any bytes into a JobSpec or an error message, never a crash or a hang.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "src/inventory/inventory.hpp"
#include "src/job/job.hpp"

namespace {

void check(bool condition) {
  if (!condition) {
    __builtin_trap();
  }
}

void check_duration_round_trip(ddl::Millis value) {
  check(ddl::parse_duration(ddl::format_duration(value)) == value);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);

  auto job = ddl::parse_job(text, "fuzz.toml", {});
  if (job) {
    // Whatever loads is valid: its hosts write back to text that reads as
    // the same host (a port is written with its slots), its durations print back.
    for (const ddl::HostSpec& spec : job->hosts.list) {
      auto again = ddl::expand_hostlist(ddl::format_host_spec(spec));
      check(again.has_value() && again->size() == 1 && again->front().name == spec.name &&
            again->front().user == spec.user && again->front().port == spec.port &&
            again->front().labels == spec.labels);
    }
    check_duration_round_trip(job->grace);
    check_duration_round_trip(job->ssh.connect_timeout);
    check_duration_round_trip(job->rendezvous.timeout);
    if (job->timeout) {
      check_duration_round_trip(*job->timeout);
    }
  } else {
    check(!job.error().message.empty());
    check(job.error().code == ddl::ExitCode::usage);
  }

  auto hosts = ddl::expand_hostlist(text);
  if (hosts) {
    check(!hosts->empty() && hosts->size() <= 65536);
  } else {
    check(!hosts.error().message.empty());
  }
  if (auto duration = ddl::parse_duration(text)) {
    check_duration_round_trip(*duration);
  }
  return 0;
}
