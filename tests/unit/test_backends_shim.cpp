// SPDX-License-Identifier: MIT
// The shim run by the real /bin/sh: env and argv byte for byte, exit codes,
// signals, and that EOF on stdin leaves nothing running.
#include <catch2/catch.hpp>

#include <chrono>
#include <optional>
#include <csignal>
#include <fcntl.h>
#include <fstream>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <fmt/core.h>

#include "backends/shim.hpp"
#include "src/util/signal_names.hpp"

extern char** environ;

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// `/bin/sh -c SHIM` with pipes on stdin, stdout and stderr.
class ShimProcess {
public:
  explicit ShimProcess(const ddl::ShimJob& job, std::optional<std::string> check = std::nullopt) {
    int in[2], out[2], err[2];
    REQUIRE(pipe2(in, O_CLOEXEC) == 0);
    REQUIRE(pipe2(out, O_CLOEXEC) == 0);
    REQUIRE(pipe2(err, O_CLOEXEC) == 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err[1], 2);
    std::string script(ddl::shim_script());
    char* argv[] = {const_cast<char*>("sh"), const_cast<char*>("-c"), script.data(), nullptr};
    REQUIRE(posix_spawn(&pid_, "/bin/sh", &actions, nullptr, argv, environ) == 0);
    posix_spawn_file_actions_destroy(&actions);
    close(in[0]);
    close(out[1]);
    close(err[1]);
    stdin_ = in[1];
    stdout_ = out[0];
    stderr_ = err[0];
    if (check) {
      write_line(*check);
      return;
    }
    auto payload = ddl::shim_payload(job);
    REQUIRE(payload.has_value());
    write_line(*payload);
  }
  ~ShimProcess() {
    close_stdin();
    if (!reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    close(stdout_);
    close(stderr_);
  }
  void write_line(std::string_view text) {
    REQUIRE(write(stdin_, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  }
  void close_stdin() {
    if (stdin_ >= 0) {
      close(stdin_);
      stdin_ = -1;
    }
  }
  // Reads until stdout holds a newline (or `limit` passes); returns that line.
  std::string stdout_line(std::chrono::milliseconds limit = 5s) {
    auto end = Clock::now() + limit;
    while (out_.find('\n') == std::string::npos && Clock::now() < end) {
      pump(50ms);
    }
    auto newline = out_.find('\n');
    if (newline == std::string::npos) {
      return {};
    }
    std::string line = out_.substr(0, newline);
    out_.erase(0, newline + 1);
    return line;
  }
  // Waits for the shim to end, draining output; returns the wait status.
  std::optional<int> wait(std::chrono::milliseconds limit = 10s) {
    auto end = Clock::now() + limit;
    while (Clock::now() < end) {
      pump(20ms);
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        reaped_ = true;
        while (pump(0ms)) {
        }
        return status;
      }
    }
    return std::nullopt;
  }
  const std::string& out() const { return out_; }
  const std::string& err() const { return err_; }

private:
  bool pump(std::chrono::milliseconds timeout) {
    pollfd fds[] = {{stdout_, POLLIN, 0}, {stderr_, POLLIN, 0}};
    if (poll(fds, 2, static_cast<int>(timeout.count())) <= 0) {
      return false;
    }
    bool got = false;
    char buffer[4096];
    for (int i = 0; i < 2; ++i) {
      if (fds[i].revents & (POLLIN | POLLHUP)) {
        ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
        if (n > 0) {
          (i == 0 ? out_ : err_).append(buffer, static_cast<std::size_t>(n));
          got = true;
        }
      }
    }
    return got;
  }
  pid_t pid_ = -1;
  int stdin_ = -1, stdout_ = -1, stderr_ = -1;
  bool reaped_ = false;
  std::string out_, err_;
};

ddl::ShimJob sh_job(const std::string& script, ddl::Millis grace = 2000ms) {
  ddl::ShimJob job;
  job.argv = {"/bin/sh", "-c", script};
  job.grace = grace;
  return job;
}

// True when `pid` is gone or a zombie.
bool is_gone(long pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) {
    return true;
  }
  auto close_paren = text.rfind(')');
  return close_paren != std::string::npos && close_paren + 2 < text.size() && text[close_paren + 2] == 'Z';
}

bool gone_within(long pid, std::chrono::milliseconds limit) {
  auto end = Clock::now() + limit;
  while (Clock::now() < end) {
    if (is_gone(pid)) {
      return true;
    }
    std::this_thread::sleep_for(20ms);
  }
  return is_gone(pid);
}

} // namespace

TEST_CASE("shim script can be single-quoted for any login shell", "[shim]") {
  CHECK(ddl::shim_script().find('\'') == std::string_view::npos);
  CHECK(ddl::shim_ssh_command().starts_with("exec sh -c '"));
}

TEST_CASE("shim payload refuses NUL and bad names", "[shim]") {
  ddl::ShimJob job;
  job.argv = {"true"};
  job.env = {{"GOOD", std::string("a\0b", 3)}, {"1BAD", "x"}};
  auto payload = ddl::shim_payload(job);
  REQUIRE_FALSE(payload.has_value());
  CHECK(payload.error().message ==
        "environment variable GOOD holds a NUL byte\ninvalid environment variable name '1BAD'");
  CHECK(payload.error().code == ddl::ExitCode::usage);
  CHECK_FALSE(ddl::shim_payload(ddl::ShimJob{}).has_value());
}

TEST_CASE("shim passes env and argv byte for byte", "[shim]") {
  std::vector<std::string> values = {
      "plain", "two  spaces ", "it's \"quoted\"", "$HOME and ${PATH}", "`id` $(id)",
      "line1\nline2\n", "back\\slash \\n", "", "*?[a]~", "\t\r\x01\xff\xfe", "'", "''\\'"};
  ddl::ShimJob job = sh_job("printf '%s\\0' \"$DDL_V0\" \"$DDL_V1\" \"$DDL_V2\" \"$DDL_V3\" "
                            "\"$DDL_V4\" \"$DDL_V5\" \"$DDL_V6\" \"$DDL_V7\" \"$DDL_V8\" "
                            "\"$DDL_V9\" \"$DDL_V10\" \"$DDL_V11\" \"$@\"");
  job.argv.push_back("argv0");
  std::string expected;
  for (std::size_t i = 0; i < values.size(); ++i) {
    job.env.emplace_back("DDL_V" + std::to_string(i), values[i]);
    expected += values[i] + '\0';
  }
  for (const auto& value : values) {
    job.argv.push_back(value);
    expected += value + '\0';
  }
  ShimProcess shim(job);
  auto status = shim.wait();
  REQUIRE(status.has_value());
  CHECK(WIFEXITED(*status));
  CHECK(WEXITSTATUS(*status) == 0);
  CHECK(shim.out() == expected);
  CHECK(shim.err().starts_with("ddl-shim: pid "));
}

TEST_CASE("shim returns the exit code and runs in the workdir", "[shim]") {
  ddl::ShimJob job = sh_job("pwd; exit 42");
  job.workdir = "/usr";
  ShimProcess shim(job);
  auto status = shim.wait();
  REQUIRE(status.has_value());
  REQUIRE(WIFEXITED(*status));
  CHECK(WEXITSTATUS(*status) == 42);
  CHECK(shim.out() == "/usr\n");
}

TEST_CASE("shim reports a missing command and workdir", "[shim]") {
  SECTION("command") {
    ddl::ShimJob job;
    job.argv = {"ddl-no-such-command-xyz"};
    ShimProcess shim(job);
    auto status = shim.wait();
    REQUIRE(status.has_value());
    REQUIRE(WIFEXITED(*status));
    CHECK(WEXITSTATUS(*status) == 127);
  }
  SECTION("workdir") {
    ddl::ShimJob job = sh_job("true");
    job.workdir = "/nonexistent/ddl-dir";
    ShimProcess shim(job);
    auto status = shim.wait();
    REQUIRE(status.has_value());
    REQUIRE(WIFEXITED(*status));
    CHECK(WEXITSTATUS(*status) == 126);
  }
}

TEST_CASE("shim dies by the signal that killed the command", "[shim]") {
  ShimProcess shim(sh_job("kill -s SEGV $$"));
  auto status = shim.wait();
  REQUIRE(status.has_value());
  REQUIRE(WIFSIGNALED(*status));
  CHECK(WTERMSIG(*status) == SIGSEGV);
}

TEST_CASE("shim reports the pid of the command's process group", "[shim]") {
  ShimProcess shim(sh_job("echo $$ $(ps -o pgid= -p $$) $(ps -o sid= -p $$)"));
  auto status = shim.wait();
  REQUIRE(status.has_value());
  ddl::ShimStderr filter;
  filter.feed(shim.err());
  REQUIRE(filter.pid().has_value());
  std::string pid = std::to_string(*filter.pid());
  CHECK(shim.out() == pid + " " + pid + " " + pid + "\n");
}

TEST_CASE("shim forwards INT to a command that traps it", "[shim]") {
  ShimProcess shim(sh_job("trap 'echo got-int; exit 7' INT; echo ready; while :; do sleep 0.05; done"));
  REQUIRE(shim.stdout_line() == "ready");
  shim.write_line(*ddl::shim_signal_line(SIGINT));
  auto status = shim.wait();
  REQUIRE(status.has_value());
  REQUIRE(WIFEXITED(*status));
  CHECK(WEXITSTATUS(*status) == 7);
  CHECK(shim.out() == "got-int\n");
}

TEST_CASE("shim: EOF on stdin kills the whole process group", "[shim]") {
  ShimProcess shim(sh_job("sleep 30 & echo $!; sleep 30; echo not-reached"));
  std::string child = shim.stdout_line();
  REQUIRE_FALSE(child.empty());
  auto start = Clock::now();
  shim.close_stdin();
  auto status = shim.wait();
  REQUIRE(status.has_value());
  CHECK(Clock::now() - start < 4s);
  REQUIRE(WIFSIGNALED(*status));
  CHECK(WTERMSIG(*status) == SIGTERM);
  CHECK(gone_within(std::stol(child), 3s));
  CHECK(shim.out().find("not-reached") == std::string::npos);
}

TEST_CASE("shim: stop escalates to KILL after grace", "[shim]") {
  ShimProcess shim(sh_job("trap '' TERM; echo ready; while :; do sleep 0.05; done", 300ms));
  REQUIRE(shim.stdout_line() == "ready");
  auto start = Clock::now();
  shim.write_line(ddl::k_shim_stop_line);
  auto status = shim.wait();
  REQUIRE(status.has_value());
  auto took = Clock::now() - start;
  CHECK(took >= 250ms);
  CHECK(took < 3s);
  REQUIRE(WIFSIGNALED(*status));
  CHECK(WTERMSIG(*status) == SIGKILL);
}

TEST_CASE("shim leaves no background child after the command exits", "[shim]") {
  ShimProcess shim(sh_job("sleep 30 & echo $!; exit 0"));
  std::string child = shim.stdout_line();
  REQUIRE_FALSE(child.empty());
  auto status = shim.wait();
  REQUIRE(status.has_value());
  REQUIRE(WIFEXITED(*status));
  CHECK(WEXITSTATUS(*status) == 0);
  CHECK(gone_within(std::stol(child), 3s));
}

TEST_CASE("ShimStderr strips only the marker line", "[shim]") {
  ddl::ShimStderr filter;
  CHECK(filter.feed("ddl-shim: pi").empty());
  CHECK(filter.feed("d 1234\nhello").empty() == false);
  CHECK(filter.pid() == 1234);
  CHECK(filter.feed(" world") == " world");
  ddl::ShimStderr other;
  CHECK(other.feed("error: x\n") == "error: x\n");
  CHECK_FALSE(other.pid().has_value());
  ddl::ShimStderr partial;
  CHECK(partial.feed("ddl").empty());
  CHECK(partial.flush() == "ddl");
}

TEST_CASE("signal names map to numbers", "[shim]") {
  CHECK(ddl::signal_number("TERM") == 15);
  CHECK(ddl::signal_number("SIGKILL") == 9);
  CHECK(ddl::signal_number("SEGV") == 11);
  CHECK_FALSE(ddl::signal_number("NOPE").has_value());
  CHECK(ddl::shim_signal_line(SIGINT) == "INT\n");
  CHECK_FALSE(ddl::shim_signal_line(SIGSEGV).has_value());
}

TEST_CASE("shim check block: ready, then the payload", "[shim]") {
  auto check = ddl::shim_check_payload("/usr", "sh");
  REQUIRE(check.has_value());
  CHECK(check->starts_with("check "));
  ddl::ShimStderr filter;
  CHECK(filter.feed("ddl-shim: ready\nddl-shim: pid 7\nrest").empty() == false);
  CHECK(filter.ready());
  CHECK(filter.pid() == 7);
}

TEST_CASE("shim check block over the real sh", "[shim]") {
  SECTION("passes, waits, then runs the payload") {
    ddl::ShimJob job = sh_job("echo ran-$X");
    job.env = {{"X", "1"}};
    ShimProcess shim(job, *ddl::shim_check_payload("/usr", "sh"));
    for (int i = 0; i < 100 && shim.err().find("ready") == std::string::npos; ++i) {
      shim.wait(50ms);
    }
    REQUIRE(shim.err() == "ddl-shim: ready\n");
    shim.write_line(*ddl::shim_payload(job));
    auto status = shim.wait();
    REQUIRE(status.has_value());
    CHECK(WIFEXITED(*status));
    CHECK(shim.out() == "ran-1\n");
  }
  SECTION("EOF while waiting ends it quietly") {
    ShimProcess shim(sh_job("true"), *ddl::shim_check_payload("/", "sh"));
    shim.close_stdin();
    auto status = shim.wait();
    REQUIRE(status.has_value());
    REQUIRE(WIFEXITED(*status));
    CHECK(WEXITSTATUS(*status) == 0);
  }
  SECTION("missing command: 127, missing workdir: 126") {
    ShimProcess missing(sh_job("true"), *ddl::shim_check_payload("/", "ddl-no-such-command"));
    auto status = missing.wait();
    REQUIRE(status.has_value());
    CHECK(WEXITSTATUS(*status) == 127);
    ShimProcess nodir(sh_job("true"), *ddl::shim_check_payload("/nonexistent/ddl", "sh"));
    status = nodir.wait();
    REQUIRE(status.has_value());
    CHECK(WEXITSTATUS(*status) == 126);
  }
}

// Pumps until stderr holds `marker` (5 s at most).
void wait_for_stderr(ShimProcess& shim, std::string_view marker) {
  for (int i = 0; i < 100 && shim.err().find(marker) == std::string::npos; ++i) {
    shim.wait(50ms);
  }
}

TEST_CASE("shim answers probe requests, then checks and runs the rank on the same stdin", "[shim]") {
  auto probe = ddl::shim_probe_request("echo \"route to $1\"; echo oops >&2; exit 3\n", {"10.0.0.1 x'y"});
  REQUIRE(probe.has_value());
  CHECK(probe->starts_with(fmt::format("probe {} ", ddl::k_shim_protocol)));
  ddl::ShimJob job = sh_job("echo ran-$X");
  job.env = {{"X", "1"}};
  ShimProcess shim(job, *probe);
  wait_for_stderr(shim, "answered");
  REQUIRE(shim.err() == "ddl-shim: a route to 10.0.0.1 x'y\nddl-shim: a oops\nddl-shim: a \nddl-shim: answered 3\n");
  ddl::ShimStderr filter;
  CHECK(filter.feed(shim.err()).empty());
  REQUIRE(filter.answered());
  auto answer = filter.take_answer();
  CHECK(answer.status == 3);
  CHECK(answer.out == "route to 10.0.0.1 x'y\noops\n\n");
  CHECK_FALSE(filter.answered());
  // A second request to the same shim, then the rank's check and payload.
  shim.write_line(*ddl::shim_probe_request("echo second\n", {}));
  wait_for_stderr(shim, "answered 0");
  shim.write_line(*ddl::shim_check_payload("/usr", "sh"));
  wait_for_stderr(shim, "ready");
  shim.write_line(*ddl::shim_payload(job));
  auto status = shim.wait();
  REQUIRE(status.has_value());
  CHECK(WIFEXITED(*status));
  CHECK(WEXITSTATUS(*status) == 0);
  CHECK(shim.out() == "ran-1\n");
  CHECK(shim.err().find("ddl-shim: a second\nddl-shim: a \nddl-shim: answered 0\nddl-shim: ready\n") !=
        std::string::npos);
}

TEST_CASE("shim exec request: one that returns is answered, one that execs takes the stdin over", "[shim]") {
  auto returns = ddl::shim_exec_request("[ \"$1\" = go ] && exec cat; (exit 4)\n", {"stay"});
  REQUIRE(returns.has_value());
  CHECK(returns->starts_with(fmt::format("exec {} ", ddl::k_shim_protocol)));
  ShimProcess shim(sh_job("true"), *returns);
  wait_for_stderr(shim, "answered");
  CHECK(shim.err() == "ddl-shim: answered 4\n");
  // The shim reads on: this one replaces it with cat, which echoes the rest.
  shim.write_line(*ddl::shim_exec_request("[ \"$1\" = go ] && exec cat; (exit 4)\n", {"go"}));
  shim.write_line("frames from here on\n");
  shim.close_stdin();
  auto status = shim.wait();
  REQUIRE(status.has_value());
  CHECK(WIFEXITED(*status));
  CHECK(WEXITSTATUS(*status) == 0);
  CHECK(shim.out() == "frames from here on\n");
  CHECK(shim.err() == "ddl-shim: answered 4\n");
}

TEST_CASE("shim refuses a probe request of another protocol version", "[shim]") {
  ShimProcess shim(sh_job("true"), "probe 1 5\ntrue\n");
  auto status = shim.wait();
  REQUIRE(status.has_value());
  REQUIRE(WIFEXITED(*status));
  CHECK(WEXITSTATUS(*status) == 125);
  CHECK(shim.err() == fmt::format("ddl-shim: protocol {}\n", ddl::k_shim_protocol));
  ddl::ShimStderr filter;
  CHECK(filter.feed(shim.err()).empty());
  CHECK(filter.protocol() == std::to_string(ddl::k_shim_protocol));
}

TEST_CASE("ShimStderr passes login-shell noise and still finds the markers", "[shim]") {
  ddl::ShimStderr filter;
  CHECK(filter.feed("pyenv: cannot rehash\nddl-shim: re") == "pyenv: cannot rehash\n");
  CHECK_FALSE(filter.ready());
  CHECK(filter.feed("ady\nmore noise\nddl-shim: pid 42\nout").empty() == false);
  CHECK(filter.ready());
  CHECK(filter.pid() == 42);
  CHECK(filter.decided());
  CHECK(filter.feed("ddl-shim: pid 1\n") == "ddl-shim: pid 1\n");
}

TEST_CASE("shim: a silent launcher ends the whole process group", "[shim]") {
  ddl::ShimJob job = sh_job("sleep 30 & echo $!; sleep 30; echo not-reached", 300ms);
  job.heartbeat = 200ms;
  ShimProcess shim(job);
  std::string child = shim.stdout_line();
  REQUIRE_FALSE(child.empty());
  auto start = Clock::now();
  auto status = shim.wait();
  REQUIRE(status.has_value());
  auto took = Clock::now() - start;
  // k_shim_heartbeat_misses periods without a beat, stdin still open.
  CHECK(took >= 200ms * (ddl::k_shim_heartbeat_misses - 1));
  CHECK(took < 3s);
  REQUIRE(WIFSIGNALED(*status));
  CHECK(WTERMSIG(*status) == SIGTERM);
  CHECK(gone_within(std::stol(child), 3s));
  CHECK(shim.out().find("not-reached") == std::string::npos);
}

TEST_CASE("shim: heartbeats keep the rank running", "[shim]") {
  ddl::ShimJob job = sh_job("echo ready; sleep 1.5; exit 5", 300ms);
  job.heartbeat = 200ms;
  ShimProcess shim(job);
  REQUIRE(shim.stdout_line() == "ready");
  auto end = Clock::now() + 2500ms;
  std::optional<int> status;
  while (!status && Clock::now() < end) {
    shim.write_line(ddl::k_shim_beat_line);
    status = shim.wait(100ms);
  }
  REQUIRE(status.has_value());
  REQUIRE(WIFEXITED(*status));
  CHECK(WEXITSTATUS(*status) == 5);
}
