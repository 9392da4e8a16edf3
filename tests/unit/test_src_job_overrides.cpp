// SPDX-License-Identifier: MIT
// Command-line overrides and the job file on disk (load_job).
#include <catch2/catch.hpp>

#include <array>
#include <filesystem>
#include <fstream>
#include <functional>

#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/job/job.hpp"

using namespace std::chrono_literals;

namespace {

// The host list as text, one spec per host (format_host_spec).
std::vector<std::string> list_text(const std::vector<ddl::HostSpec>& list) {
  std::vector<std::string> out;
  for (const auto& spec : list) out.push_back(ddl::format_host_spec(spec));
  return out;
}

std::string errors(std::string_view text, const ddl::Overrides& overrides) {
  auto job = ddl::parse_job(text, "job.toml", overrides);
  return job ? std::string() : job.error().message;
}

// A private directory, removed at the end of the test.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    path = std::filesystem::temp_directory_path() /
           ("ddl-job-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
    return (path / name).string();
  }
  static int& counter() {
    static int n = 0;
    return n;
  }
};

// What `check` returns, run without root's right to read any file: as it
// is for a user, in a child process that becomes user nobody for root.
std::string as_unprivileged(const std::function<std::string()>& check) {
  if (::geteuid() != 0) {
    return check();
  }
  std::array<int, 2> pipe_fds{};
  REQUIRE(::pipe(pipe_fds.data()) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::close(pipe_fds[0]);
    constexpr uid_t k_nobody = 65534;
    if (::setgroups(0, nullptr) != 0 || ::setresgid(k_nobody, k_nobody, k_nobody) != 0 ||
        ::setresuid(k_nobody, k_nobody, k_nobody) != 0 || ::geteuid() == 0) {
      ::_exit(2);
    }
    const std::string out = check();
    ssize_t wrote = ::write(pipe_fds[1], out.data(), out.size());
    ::_exit(wrote == static_cast<ssize_t>(out.size()) ? 0 : 3);
  }
  ::close(pipe_fds[1]);
  std::string out;
  std::array<char, 4096> chunk{};
  for (ssize_t got = 0; (got = ::read(pipe_fds[0], chunk.data(), chunk.size())) > 0;) {
    out.append(chunk.data(), static_cast<std::size_t>(got));
  }
  ::close(pipe_fds[0]);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);  // 2: could not become nobody
  return out;
}

} // namespace

TEST_CASE("options alone are enough without a job file", "[job][overrides]") {
  ddl::Overrides o;
  o.hosts = {"a:2,b:2"};
  o.backend = "ssh";
  o.np = "3";
  o.timeout = "1h30m";
  o.max_restarts = 2;
  o.log_dir = "logs";
  o.env = {"A=1", "B=x=y", "C="};
  o.command = {"python3", "train.py"};
  auto job = ddl::load_job("", o);
  REQUIRE(job);
  CHECK(list_text(job->hosts.list) == std::vector<std::string>{"a:2", "b:2"});
  CHECK(job->launch.backend == ddl::BackendKind::ssh);
  CHECK(job->launch.np.max == 3);
  CHECK(job->timeout == 90min);
  CHECK(job->max_restarts == 2);
  CHECK(job->log_dir == "logs");
  CHECK(job->env == ddl::EnvList{{"A", "1"}, {"B", "x=y"}, {"C", ""}});
  CHECK(job->command == std::vector<std::string>{"python3", "train.py"});
  CHECK_FALSE(job->command_is_shell);
}

TEST_CASE("overrides replace the job file's values", "[job][overrides]") {
  std::string text = "[job]\ncommand = \"echo hi\"\nenv = { A = \"file\", B = \"file\" }\n"
                     "[hosts]\nslurm = true\nslots = 4\n[launch]\nnp = 2\n";
  ddl::Overrides o;
  o.hosts = {"x", "y:2"};
  o.np = "5";
  o.env = {"B=flag", "Z=new"};
  o.command = {"true"};
  auto job = ddl::parse_job(text, "job.toml", o);
  REQUIRE(job);
  CHECK(list_text(job->hosts.list) == std::vector<std::string>{"x", "y:2"});
  CHECK(job->hosts.slurm == ddl::SlurmHosts::off);
  CHECK(job->hosts.slots == 4);
  CHECK(job->launch.np.max == 5);
  CHECK(job->env == ddl::EnvList{{"A", "file"}, {"B", "flag"}, {"Z", "new"}});
  CHECK(job->command == std::vector<std::string>{"true"});
  CHECK_FALSE(job->command_is_shell);
}

TEST_CASE("the hostfile option replaces the job file's host source", "[job][overrides]") {
  TempDir dir;
  std::string hostfile = dir.write("hosts", "a slots=2\n");
  ddl::Overrides o;
  o.hostfile = hostfile;
  auto job = ddl::parse_job("[hosts]\nlist = [\"x\"]\n", "job.toml", o);
  REQUIRE(job);
  CHECK(job->hosts.list.empty());
  CHECK(job->hosts.hostfile == hostfile);
}

TEST_CASE("override errors name the option, without a file position", "[job][overrides]") {
  ddl::Overrides o;
  o.np = "0";
  o.max_restarts = -1;
  o.timeout = "soon";
  o.backend = "sssh";
  o.env = {"NOVALUE", "BAD-NAME=1"};
  o.hosts = {"a,,b", "-evil"};
  CHECK(errors("[launch]\nnp = 0\n", o) ==
        "job.toml:2:6: launch.np: must be between 1 and 1000000\n"
        "--hosts: empty host in 'a,,b'\n"
        "--hosts: bad host name '-evil': starts with '-'\n"
        "--backend: 'sssh' is not one of auto, local, ssh, kubernetes, mpirun, slurm; did you mean 'ssh'?\n"
        "--np: must be at least 1\n"
        "--timeout: invalid duration 'soon'; use a number and a unit: 500ms, 30s, 5m, 2h, 1h30m\n"
        "--max-restarts: must be at least 0\n"
        "--env: 'NOVALUE' is not NAME=VALUE\n"
        "--env: 'BAD-NAME' is not a valid variable name ([A-Za-z_][A-Za-z0-9_]*)");
}

TEST_CASE("more override errors", "[job][overrides]") {
  ddl::Overrides both;
  both.hosts = {"a"};
  both.hostfile = "/nonexistent/hosts";
  CHECK(errors("", both) == "--hostfile: cannot be combined with --hosts");
  ddl::Overrides zero;
  zero.timeout = "0s";
  CHECK(errors("", zero) == "--timeout: must be longer than 0");
  ddl::Overrides missing;
  missing.hostfile = "/nonexistent/hosts";
  CHECK(errors("", missing) ==
        "--hostfile: cannot read '/nonexistent/hosts': No such file or directory");
}

TEST_CASE("load_job: missing, directory, oversized and good files", "[job][file]") {
  TempDir dir;
  auto missing = ddl::load_job((dir.path / "nope.toml").string(), {});
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == ddl::ExitCode::usage);
  CHECK(missing.error().message ==
        (dir.path / "nope.toml").string() + ": cannot read job file: No such file or directory");

  auto directory = ddl::load_job(dir.path.string(), {});
  REQUIRE_FALSE(directory);
  CHECK(directory.error().message == dir.path.string() + ": is a directory, not a job file");

  std::string big = dir.write("big.toml", std::string(ddl::k_max_job_file_bytes + 10, '#'));
  auto oversized = ddl::load_job(big, {});
  REQUIRE_FALSE(oversized);
  CHECK(oversized.error().message == big + ": job file is larger than 1048576 bytes");

  std::string good = dir.write("train.toml", "[launch]\nnp = 0\n");
  auto bad = ddl::load_job(good, {});
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message == good + ":2:6: launch.np: must be between 1 and 1000000");

  std::string fine = dir.write("resnet.toml", "[job]\ncommand = [\"true\"]\n");
  auto loaded = ddl::load_job(fine, {});
  REQUIRE(loaded);
  CHECK(loaded->name == "resnet");
  CHECK(loaded->source == fine);
}

TEST_CASE("hostfile and discovery script are checked, relative to the job file",
          "[job][file]") {
  TempDir dir;
  dir.write("hosts.txt", "a slots=2\n");
  std::string script = dir.write("discover.sh", "#!/bin/sh\necho a:2\n");
  ::chmod(script.c_str(), 0755);
  dir.write("plain.sh", "echo a\n");
  std::string job_file = dir.write("job.toml", "[hosts]\nhostfile = \"hosts.txt\"\n");
  auto job = ddl::load_job(job_file, {});
  REQUIRE(job);
  CHECK(job->hosts.hostfile == (dir.path / "hosts.txt").string());

  job_file = dir.write("job.toml", "[hosts]\ndiscovery_script = \"discover.sh\"\n");
  job = ddl::load_job(job_file, {});
  REQUIRE(job);
  CHECK(job->hosts.discovery_script == (dir.path / "discover.sh").string());

  job_file = dir.write("job.toml", "[hosts]\nhostfile = \"missing.txt\"\n");
  job = ddl::load_job(job_file, {});
  REQUIRE_FALSE(job);
  CHECK(job.error().message == job_file + ":2:12: hosts.hostfile: cannot read '" +
                                   (dir.path / "missing.txt").string() +
                                   "': No such file or directory");

  job_file = dir.write("job.toml", "[hosts]\nhostfile = \"/\"\n");
  job = ddl::load_job(job_file, {});
  REQUIRE_FALSE(job);
  CHECK(job.error().message == job_file + ":2:12: hosts.hostfile: '/' is a directory");

  job_file = dir.write("job.toml", "[hosts]\ndiscovery_script = \"plain.sh\"\n");
  job = ddl::load_job(job_file, {});
  REQUIRE_FALSE(job);
  CHECK(job.error().message == job_file + ":2:20: hosts.discovery_script: '" +
                                   (dir.path / "plain.sh").string() + "' is not executable");

  job_file = dir.write("job.toml", "[hosts]\ndiscovery_script = \"/nonexistent/x.sh\"\n");
  job = ddl::load_job(job_file, {});
  REQUIRE_FALSE(job);
  CHECK(job.error().message == job_file +
                                   ":2:20: hosts.discovery_script: cannot run '/nonexistent/x.sh': "
                                   "No such file or directory");

  // -H replaces the source, so the job file's missing hostfile does not matter.
  job_file = dir.write("job.toml", "[hosts]\nhostfile = \"missing.txt\"\n");
  ddl::Overrides o;
  o.hosts = {"a"};
  CHECK(ddl::load_job(job_file, o));
}

TEST_CASE("a script name without a directory does not search PATH", "[job][file]") {
  auto job = ddl::parse_job("[hosts]\ndiscovery_script = \"no-such-script\"\n", "job.toml", {});
  REQUIRE_FALSE(job);
  CHECK(job.error().message == "job.toml:2:20: hosts.discovery_script: cannot run "
                               "'./no-such-script': No such file or directory");
}

TEST_CASE("an unreadable hostfile is reported", "[job][file]") {
  TempDir dir;
  ::chmod(dir.path.c_str(), 0755);  // so that the file's own mode is what refuses
  std::string hostfile = dir.write("hosts", "a\n");
  ::chmod(hostfile.c_str(), 0);
  ddl::Overrides o;
  o.hostfile = hostfile;
  // Root reads any file: the check runs as user nobody (as root runs this suite in CI).
  CHECK(as_unprivileged([&] { return errors("", o); }) == "--hostfile: cannot read '" + hostfile + "': Permission denied");
}
