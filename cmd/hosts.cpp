// SPDX-License-Identifier: MIT
// `ddl hosts`: the inventory a job would run on.
#include <algorithm>
#include <fmt/core.h>
#include <memory>
#include <spdlog/spdlog.h>

#include "backends/registry.hpp"
#include "cmd/command.hpp"
#include "src/session/mpi_mode.hpp"
#include "src/session/preflight_gate.hpp"
#include "src/launch/plan_hosts.hpp"
#include "src/plan/placement.hpp"
#include "src/util/json.hpp"
#include "src/util/signals.hpp"
#include "src/util/table.hpp"
#include "src/util/net_resolve.hpp"

namespace ddl::cmd {

namespace {

struct HostsOptions {
  CommonOptions common;
  bool check = false;
  bool bench = false;
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

bool any_labels(const Inventory& inventory) {
  return std::ranges::any_of(inventory, [](const Host& host) { return !host.labels.empty(); });
}

// Why [placement] constraints leave `host` out; "" when they do not.
std::string left_out_why(const JobSpec& job, const Host& host) {
  return constraint_problem(job.placement.constraints, host).value_or("");
}

// The LABELS cell: the labels [placement] names first, then the others, at
// most k_labels_shown in all and "+N more" (a Kubernetes node has dozens;
// --json lists every one).
constexpr std::size_t k_labels_shown = 3;

std::string labels_cell(const JobSpec& job, const Labels& labels) {
  std::vector<std::string> words;
  auto named = [&](const std::string& key) {
    return job.placement.constraints.contains(key) || key == job.placement.order;
  };
  for (bool wanted : {true, false}) {
    for (const auto& [key, value] : labels) {
      if (named(key) == wanted) {
        words.push_back(key + "=" + value);
      }
    }
  }
  std::string cell;
  for (std::size_t i = 0; i < words.size() && i < k_labels_shown; ++i) {
    cell += (cell.empty() ? "" : " ") + words[i];
  }
  if (words.size() > k_labels_shown) {
    cell += fmt::format(" +{} more", words.size() - k_labels_shown);
  }
  return cell;
}

// One row of the hosts table: LABELS only when some host has one, EXCLUDED
// only with constraints.
TableRow host_row(TableRow row, bool labels, std::string label_text, bool constraints, std::string why) {
  if (labels) {
    row.push_back(label_text.empty() ? "-" : std::move(label_text));
  }
  if (constraints) {
    row.push_back(why.empty() ? "-" : std::move(why));
  }
  return row;
}

std::string hosts_table(const JobSpec& job, const Inventory& inventory) {
  const bool labels = any_labels(inventory);
  const bool constraints = !job.placement.constraints.empty();
  std::vector<TableRow> rows;
  rows.push_back(host_row({"NAME", "ADDRESS", "SLOTS", "GPUS", "SOURCE"}, labels, "LABELS", constraints, "EXCLUDED"));
  for (const auto& host : inventory) {
    rows.push_back(host_row({host.name, login_address(host), std::to_string(host.slots), gpu_list(host, "-"), host.source},
                            labels, labels_cell(job, host.labels), constraints, left_out_why(job, host)));
  }
  return align_columns(rows);
}

// The contract's keys; "user" and "port" only for a host that names them.
Json host_json(const Host& host) {
  Json entry = {{"name", host.name}, {"address", host.address}, {"slots", host.slots}, {"gpus", host.gpus},
                {"source", host.source}};
  if (!host.user.empty()) {
    entry["user"] = host.user;
  }
  if (host.port) {
    entry["port"] = *host.port;
  }
  if (!host.labels.empty()) {  // the contract's shape stays as it was for hosts without labels
    entry["labels"] = Json(host.labels);
  }
  if (!host.labels_error.empty()) {
    entry["labels_error"] = host.labels_error;
  }
  return entry;
}

// `{"hosts": [...]}` and a newline.
std::string hosts_document(Json hosts) { return to_json_text({{"hosts", std::move(hosts)}}) + "\n"; }

std::string hosts_json(const JobSpec& job, const Inventory& inventory) {
  Json hosts = Json::array();
  for (const auto& host : inventory) {
    Json entry = host_json(host);
    if (!job.placement.constraints.empty()) {
      std::string why = left_out_why(job, host);
      entry.update({{"excluded", why.empty() ? Json(nullptr) : Json(std::move(why))}});
    }
    hosts.push_back(std::move(entry));
  }
  return hosts_document(std::move(hosts));
}

std::string checked_table(const Inventory& inventory, const std::vector<HostCheck>& checks) {
  std::vector<TableRow> rows = {{"NAME", "ADDRESS", "REACHABLE", "DDL", "GPUS", "ERROR"}};
  for (std::size_t i = 0; i < inventory.size(); ++i) {
    const HostCheck& check = checks[i];
    rows.push_back({inventory[i].name, login_address(inventory[i]), check.reachable ? "yes" : "no",
                    check.ddl_version.empty() ? "-" : check.ddl_version,
                    check.gpu_count ? std::to_string(*check.gpu_count) : "-", check.error.empty() ? "-" : check.error});
  }
  return align_columns(rows);
}

// A value, or null when `present` is false.
template <typename T> Json or_null(bool present, const T& value) { return present ? Json(value) : Json(nullptr); }

// --check's rows as JSON: each host with what reaching it found.
Json checked_hosts(const Inventory& inventory, const std::vector<HostCheck>& checks) {
  Json hosts = Json::array();
  for (std::size_t i = 0; i < inventory.size(); ++i) {
    const HostCheck& check = checks[i];
    Json host = host_json(inventory[i]);
    host.update({{"reachable", check.reachable},
                 {"ddl_version", or_null(!check.ddl_version.empty(), check.ddl_version)},
                 {"gpu_count", or_null(check.gpu_count.has_value(), check.gpu_count.value_or(0))},
                 {"error", or_null(!check.error.empty(), check.error)}});
    hosts.push_back(std::move(host));
  }
  return hosts;
}

// --check --bench: the preflight gate's network check among the hosts
// (session::check_network), without a job: its summary and findings, or in
// JSON its event under "preflight"; exit 3 when it names a host or link.
int bench_network(const JobSpec& job, const std::shared_ptr<Backend>& backend, const Inventory& inventory,
                  Json* document) {
  auto outcome = session::check_network(job, backend, inventory);
  if (!outcome) {
    return report(outcome.error());
  }
  const bool clean = outcome->verdict.findings.empty();
  if (document != nullptr) {
    (*document)["preflight"] = session::preflight_event(*outcome, clean ? "passed" : "found");
  } else {
    fmt::print("\n{}\n", session::preflight_summary(*outcome));
    for (const PreflightFinding& finding : outcome->verdict.findings) {
      fmt::print("  {}\n", finding.why);
    }
  }
  return clean ? 0 : to_int(ExitCode::launch);
}

// --check: every host reached through the backend; exit 3 when any failed.
// With --bench, then the network among those reached.
// The check's connections (ssh) serve the network check.
int check_inventory(const JobSpec& job, const std::shared_ptr<Backend>& backend, const Inventory& inventory,
                    const HostsOptions& opts) {
  auto checks = backend->check(inventory);
  if (stop::requested()) {
    return report(stop::error("checking the hosts"));
  }
  bool all_reached = true;
  Inventory reached;
  for (std::size_t i = 0; i < checks.size() && i < inventory.size(); ++i) {
    if (!checks[i].reachable || !checks[i].error.empty()) {
      all_reached = false;
    } else {
      reached.push_back(inventory[i]);
    }
  }
  int code = all_reached ? 0 : to_int(ExitCode::launch);
  if (!opts.bench || reached.size() < 2) {
    fmt::print("{}", opts.common.json ? hosts_document(checked_hosts(inventory, checks))
                                      : checked_table(inventory, checks));
    return code;
  }
  if (opts.common.json) {
    Json document{{"hosts", checked_hosts(inventory, checks)}};
    const int network = bench_network(job, backend, reached, &document);
    fmt::print("{}\n", to_json_text(document));
    return code != 0 ? code : network;
  }
  fmt::print("{}", checked_table(inventory, checks));
  const int network = bench_network(job, backend, reached, nullptr);
  return code != 0 ? code : network;
}

int run_hosts(const HostsOptions& opts) {
  auto job = load_job_for(opts.common);
  if (!job) {
    return report(job.error());
  }
  // Listing (and checking, which reports each host) never waits on DNS.
  net::set_name_lookup(net::NameLookup::no_dns);
  job->hosts.show_labels = true;  // node labels and Slurm features, at the cost of one call
  *job = session::with_mpi_choice(*job, session::resolve_mpi_launch(*job));  // the backend ddl run picks
  auto selected = select_backend(*job);
  if (!selected) {
    return report(selected.error());
  }
  Backend& backend = *selected->backend;
  auto inventory = hosts_for_plan(*job, backend, std::move(selected->hosts),
                                  opts.check ? HostSteps::before_probe : HostSteps::all);
  if (!inventory) {
    return report(inventory.error());
  }
  if (opts.bench && !opts.check) {
    return report(Error{ExitCode::usage, "--bench: only with --check (ddl hosts --check --bench)"});
  }
  if (opts.check) {
    return check_inventory(*job, selected->backend, *inventory, opts);
  }
  fmt::print("{}", opts.common.json ? hosts_json(*job, *inventory) : hosts_table(*job, *inventory));
  return 0;
}

} // namespace

void add_hosts(CLI::App& app, Command& selected) {
  auto opts = std::make_shared<HostsOptions>();
  CLI::App* sub = app.add_subcommand("hosts", "List the hosts a job would run on");
  add_common_options(*sub, opts->common);
  sub->add_flag("--check", opts->check, "Reach every host through the backend and report on it");
  sub->add_flag("--bench", opts->bench,
                "With --check: then the network among them, as [preflight] checks it; exit 3 naming a slow host or link");
  sub->footer("Examples:\n  ddl hosts -H 'node[01-04]:8' --check\n  ddl hosts -H 'node[01-16]:8' --check --bench\n"
              "  ddl hosts job.toml --json");
  sub->callback([&selected, opts] { selected = [opts] { return run_hosts(*opts); }; });
}

} // namespace ddl::cmd
