// SPDX-License-Identifier: MIT
#include <memory>

#include <fmt/core.h>

#include "cmd/command.hpp"
#include "src/job/init_template.hpp"

namespace ddl::cmd {

namespace {

struct InitOptions {
  std::string template_name = "torch";
  std::string file = "job.toml";
  bool force = false;
};

int run_init(const InitOptions& opts) {
  auto written = write_init_template(opts.template_name, opts.file, opts.force);
  if (!written) {
    return report(written.error());
  }
  for (const std::string& path : *written) {
    fmt::print("wrote {}\n", path);
  }
  fmt::print("next: edit {0}, then check it with 'ddl run {0} --dry-run'\n", opts.file);
  return 0;
}

} // namespace

void add_init(CLI::App& app, Command& selected) {
  auto opts = std::make_shared<InitOptions>();
  CLI::App* sub = app.add_subcommand("init", "Write a commented starter job file");
  sub->add_option("file", opts->file, "The job file to write (default: job.toml)");
  sub->add_option("-t,--template", opts->template_name,
                  "torch (default), tensorflow, horovod, jax, mpi, kubernetes, slurm or sweep "
                  "(kubernetes also writes FILE's .yaml manifest)")
      ->check(CLI::IsMember(init_template_names()));
  sub->add_flag("-f,--force", opts->force, "Overwrite existing files");
  sub->footer("Examples:\n  ddl init\n  ddl init --template horovod horovod.toml");
  sub->callback([&selected, opts] { selected = [opts] { return run_init(*opts); }; });
}

} // namespace ddl::cmd
