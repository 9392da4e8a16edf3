// SPDX-License-Identifier: MIT
// `ddl hosts`: the inventory a job would run on.
#include <fmt/core.h>
#include <memory>

#include "backends/kubernetes/kubectl.hpp"
#include "backends/probe.hpp"
#include "cmd/command.hpp"
#include "src/render/render.hpp"
#include "src/util/table.hpp"

namespace ddl::cmd {

namespace {

struct HostsOptions {
  CommonOptions common;
  bool check = false;
};

std::string gpu_list(const Host& host, std::string_view none) {
  if (host.gpus.empty()) {
    return std::string(none);
  }
  std::string out;
  for (int gpu : host.gpus) {
    out += (out.empty() ? "" : ",") + std::to_string(gpu);
  }
  return out;
}

std::string hosts_table(const Inventory& inventory) {
  std::vector<TableRow> rows = {{"NAME", "ADDRESS", "SLOTS", "GPUS", "SOURCE"}};
  for (const auto& host : inventory) {
    rows.push_back({host.name, host.address, std::to_string(host.slots), gpu_list(host, "-"), host.source});
  }
  return align_columns(rows);
}

std::string hosts_json(const Inventory& inventory) {
  std::string items;
  for (const auto& host : inventory) {
    items += fmt::format("{}{{\"name\":{},\"address\":{},\"slots\":{},\"gpus\":[{}],\"source\":{}}}",
                         items.empty() ? "" : ",", json_quote(host.name), json_quote(host.address),
                         host.slots, gpu_list(host, ""), json_quote(host.source));
  }
  return "{\"hosts\":[" + items + "]}\n";
}

std::string checked_table(const Inventory& inventory, const std::vector<HostCheck>& checks) {
  std::vector<TableRow> rows = {{"NAME", "ADDRESS", "REACHABLE", "DDL", "GPUS", "ERROR"}};
  for (std::size_t i = 0; i < inventory.size(); ++i) {
    const HostCheck& check = checks[i];
    rows.push_back({inventory[i].name, inventory[i].address, check.reachable ? "yes" : "no",
                    check.ddl_version.empty() ? "-" : check.ddl_version,
                    check.gpu_count ? std::to_string(*check.gpu_count) : "-", check.error.empty() ? "-" : check.error});
  }
  return align_columns(rows);
}

std::string checked_json(const Inventory& inventory, const std::vector<HostCheck>& checks) {
  std::string items;
  for (std::size_t i = 0; i < inventory.size(); ++i) {
    const Host& host = inventory[i];
    const HostCheck& check = checks[i];
    items += fmt::format(
        "{}{{\"name\":{},\"address\":{},\"slots\":{},\"gpus\":[{}],\"source\":{},\"reachable\":{},"
        "\"ddl_version\":{},\"gpu_count\":{},\"error\":{}}}",
        items.empty() ? "" : ",", json_quote(host.name), json_quote(host.address), host.slots, gpu_list(host, ""),
        json_quote(host.source), check.reachable ? "true" : "false",
        check.ddl_version.empty() ? "null" : json_quote(check.ddl_version),
        check.gpu_count ? std::to_string(*check.gpu_count) : "null",
        check.error.empty() ? "null" : json_quote(check.error));
  }
  return "{\"hosts\":[" + items + "]}\n";
}

// --check: every host reached through the backend; exit 3 when any failed.
int check_inventory(const JobSpec& job, const Inventory& inventory, bool json) {
  auto checks = check_hosts(job, inventory);
  fmt::print("{}", json ? checked_json(inventory, checks) : checked_table(inventory, checks));
  for (const auto& check : checks) {
    if (!check.reachable || !check.error.empty()) {
      return to_int(ExitCode::launch);
    }
  }
  return 0;
}

int run_hosts(const HostsOptions& opts) {
  auto job = load_job_for(opts.common);
  if (!job) {
    return report(job.error());
  }
  auto inventory = kubernetes::job_inventory(*job);
  if (!inventory) {
    return report(inventory.error());
  }
  if (opts.check) {
    return check_inventory(*job, *inventory, opts.common.json);
  }
  if (auto probed = probe_gpu_slots(*job, std::move(*inventory)); probed) {
    inventory = std::move(*probed);
  } else {
    return report(probed.error());
  }
  fmt::print("{}", opts.common.json ? hosts_json(*inventory) : hosts_table(*inventory));
  return 0;
}

} // namespace

void add_hosts(CLI::App& app, Command& selected) {
  auto opts = std::make_shared<HostsOptions>();
  CLI::App* sub = app.add_subcommand("hosts", "List the hosts a job would run on");
  add_common_options(*sub, opts->common);
  sub->add_flag("--check", opts->check, "Reach every host through the backend and report on it");
  sub->callback([&selected, opts] { selected = [opts] { return run_hosts(*opts); }; });
}

} // namespace ddl::cmd
