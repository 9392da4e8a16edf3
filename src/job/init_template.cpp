// SPDX-License-Identifier: MIT
#include "src/job/init_template.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <unistd.h>

#include <fmt/core.h>

#include "src/util/embedded.hpp"
#include "src/util/file.hpp"
#include "src/util/own_path.hpp"
#include "src/util/text.hpp"

namespace ddl {

namespace fs = std::filesystem;

namespace {

struct PlannedFile {
  std::string path;
  std::string contents;
};

// The manifest's and the job file's comments name each other; they follow the
// names the user chose.
Result<std::vector<PlannedFile>> plan_kubernetes(const std::string& path, std::string_view toml,
                                                 std::string_view yaml) {
  fs::path manifest = fs::path(path).replace_extension(".yaml");
  if (manifest == fs::path(path)) {
    return fail(ExitCode::usage,
                fmt::format("'{}' would be both the job file and the Kubernetes manifest; "
                            "name the job file something.toml",
                            path));
  }
  auto rename = [&](std::string_view text) {
    std::string out = replace_all(std::string(text), "kubernetes.yaml", manifest.filename().string());
    return replace_all(std::move(out), "kubernetes.toml", fs::path(path).filename().string());
  };
  return std::vector<PlannedFile>{{path, rename(toml)}, {manifest.string(), rename(yaml)}};
}

Result<std::vector<PlannedFile>> plan_files(std::string_view name, const std::string& path) {
  auto toml = embedded_file(fmt::format("templates/{}.toml", name));
  if (!toml) {
    return fail(ExitCode::usage, fmt::format("this ddl was built without the '{}' template", name));
  }
  if (name != "kubernetes") {
    return std::vector<PlannedFile>{{path, std::string(*toml)}};
  }
  auto yaml = embedded_file("templates/kubernetes.yaml");
  if (!yaml) {
    return fail(ExitCode::usage, "this ddl was built without templates/kubernetes.yaml");
  }
  return plan_kubernetes(path, *toml, *yaml);
}

// Never through another user's link; without --force never over a file
// that appeared after the check below.
Result<void> write_file(const PlannedFile& file, bool force) {
  auto fd = open_named_file(file.path, !force, "file");
  if (!fd) {
    return fail(fd.error());
  }
  const bool written = write_fully(*fd, file.contents);
  const int saved = errno;
  ::close(*fd);
  if (!written) {
    return fail(ExitCode::usage, fmt::format("cannot write '{}': {}", file.path, std::strerror(saved)));
  }
  return {};
}

} // namespace

const std::vector<std::string>& init_template_names() {
  static const std::vector<std::string> names = {"torch", "tensorflow", "horovod", "jax", "mpi", "kubernetes", "slurm", "sweep"};
  return names;
}

Result<std::vector<std::string>> write_init_template(std::string_view name, const std::string& path,
                                                     bool force) {
  const auto& names = init_template_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    return fail(ExitCode::usage, fmt::format("unknown template '{}'; choose one of torch, tensorflow, "
                                             "horovod, jax, mpi, kubernetes, slurm, sweep",
                                             name));
  }
  auto planned = plan_files(name, path);
  if (!planned) {
    return fail(planned.error());
  }
  if (!force) {
    for (const PlannedFile& file : *planned) {
      std::error_code ec;
      if (fs::exists(fs::symlink_status(file.path, ec))) {
        return fail(ExitCode::usage,
                    fmt::format("'{}' already exists; not overwriting it.\n"
                                "Choose another file name (ddl init --template {} FILE), or add --force "
                                "to replace it.",
                                file.path, name));
      }
    }
  }
  std::vector<std::string> written;
  for (const PlannedFile& file : *planned) {
    if (auto ok = write_file(file, force); !ok) {
      return fail(ok.error());
    }
    written.push_back(file.path);
  }
  return written;
}

} // namespace ddl
