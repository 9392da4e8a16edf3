// SPDX-License-Identifier: MIT
// Every job-file error, with its exact text and FILE:LINE:COL.
#include <catch2/catch.hpp>

#include "src/job/job.hpp"

namespace {

// The whole error text for `text` (or "" when it loads).
std::string errors(std::string_view text, const ddl::Overrides& overrides = {}) {
  auto job = ddl::parse_job(text, "job.toml", overrides);
  if (job) {
    return "";
  }
  CHECK(job.error().code == ddl::ExitCode::usage);
  return job.error().message;
}

} // namespace

TEST_CASE("malformed TOML gives toml++'s position and description", "[job][errors]") {
  CHECK(errors("[job\nname = 1\n").starts_with("job.toml:1:5: "));
  CHECK(errors("[job]\nname = \n") ==
        "job.toml:2:8: Error while parsing key-value pair: expected value, saw '\\n'");
  CHECK(errors("[job]\nname = \"a\"\nname = \"b\"\n") ==
        "job.toml:3:8: Error while parsing key-value pair: cannot redefine existing string "
        "'name'");
}

TEST_CASE("invalid UTF-8 is an error, not a crash", "[job][errors]") {
  std::string message = errors("[job]\nname = \"\xff\xfe\"\n");
  CHECK(message.starts_with("job.toml:2:"));
}

TEST_CASE("unknown sections and keys, with did-you-mean", "[job][errors]") {
  CHECK(errors("[jbo]\n") == "job.toml:1:2: unknown section 'jbo'; did you mean 'job'?");
  CHECK(errors("[zzzzzzzz]\n") == "job.toml:1:2: unknown section 'zzzzzzzz'");
  CHECK(errors("[job]\ncomand = [\"x\"]\n") ==
        "job.toml:2:1: unknown key 'comand' in [job]; did you mean 'command'?");
  CHECK(errors("[hosts]\nbackend = \"ssh\"\n") ==
        "job.toml:2:1: unknown key 'backend' in [hosts]; it belongs in [launch]");
  CHECK(errors("[ssh]\nqqqqqqq = 1\n") == "job.toml:2:1: unknown key 'qqqqqqq' in [ssh]");
  CHECK(errors("command = [\"x\"]\n") ==
        "job.toml:1:1: unknown top-level key 'command'; it belongs in [job]");
  CHECK(errors("zzzz = 1\n") == "job.toml:1:1: unknown top-level key 'zzzz'");
  CHECK(errors("job = 1\n") == "job.toml:1:7: job: expected a table, got an integer");
}

TEST_CASE("wrong types", "[job][errors]") {
  CHECK(errors("[job]\nmax_restarts = \"3\"\n") ==
        "job.toml:2:16: job.max_restarts: expected an integer, got a string");
  CHECK(errors("[job]\nname = 3\n") == "job.toml:2:8: job.name: expected a string, got an integer");
  CHECK(errors("[launch]\nbind_gpus = \"yes\"\n") ==
        "job.toml:2:13: launch.bind_gpus: expected a boolean (true or false), got a string");
  CHECK(errors("[launch]\nnp = 2.0\n") ==
        "job.toml:2:6: launch.np: expected an integer, got a floating-point number");
  CHECK(errors("[job]\ntimeout = 30\n") ==
        "job.toml:2:11: job.timeout: expected a duration such as \"30s\", got an integer");
  CHECK(errors("[job]\ncommand = 1\n") ==
        "job.toml:2:11: job.command: expected an array of strings or a string, got an integer");
  CHECK(errors("[job]\ncommand = [\"a\", 2]\n") ==
        "job.toml:2:17: job.command[1]: expected a string, got an integer");
  CHECK(errors("[job]\nenv = \"A=1\"\n") ==
        "job.toml:2:7: job.env: expected a table of NAME = \"value\", got a string");
  CHECK(errors("[job]\nenv = { A = 1.5 }\n") ==
        "job.toml:2:13: job.env.A: expected a string, got a floating-point number");
  CHECK(errors("[job]\nenv_pass = \"PATH\"\n") ==
        "job.toml:2:12: job.env_pass: expected an array of strings, got a string");
  CHECK(errors("[job]\nframeworks = [1]\n") ==
        "job.toml:2:15: job.frameworks[0]: expected a string, got an integer");
  CHECK(errors("[hosts]\nlist = 5\n") ==
        "job.toml:2:8: hosts.list: expected an array of strings, got an integer");
  CHECK(errors("[hosts]\nlist = [\"a\", 5]\n") ==
        "job.toml:2:14: hosts.list[1]: expected a string, got an integer");
  CHECK(errors("[hosts]\nslots = true\n") ==
        "job.toml:2:9: hosts.slots: expected an integer or \"gpus\", got a boolean");
  CHECK(errors("[hosts]\nslots = \"all\"\n") ==
        "job.toml:2:9: hosts.slots: expected an integer or \"gpus\", got 'all'");
  CHECK(errors("[hosts]\nslurm = \"yes\"\n") ==
        "job.toml:2:9: hosts.slurm: expected a boolean (true or false), got a string");
}

TEST_CASE("impossible values", "[job][errors]") {
  CHECK(errors("[launch]\nnp = 0\n") == "job.toml:2:6: launch.np: must be between 1 and 1000000");
  CHECK(errors("[launch]\nnp = -4\n") == "job.toml:2:6: launch.np: must be between 1 and 1000000");
  CHECK(errors("[launch]\nnp = 99999999999\n") == "job.toml:2:6: launch.np: must be between 1 and 1000000");
  CHECK(errors("[job]\nmax_restarts = -1\n") ==
        "job.toml:2:16: job.max_restarts: must be at least 0");
  CHECK(errors("[ssh]\nfanout = 0\n") == "job.toml:2:10: ssh.fanout: must be at least 1");
  CHECK(errors("[ssh]\nport = 0\n") == "job.toml:2:8: ssh.port: must be between 1 and 65535");
  CHECK(errors("[ssh]\nport = 65536\n") == "job.toml:2:8: ssh.port: must be between 1 and 65535");
  CHECK(errors("[rendezvous]\nport = -1\n") ==
        "job.toml:2:8: rendezvous.port: must be between 0 and 65535");
  CHECK(errors("[torch]\nmaster_port = 70000\n") ==
        "job.toml:2:15: torch.master_port: must be between 0 and 65535");
  CHECK(errors("[tensorflow]\nport = 0\n") ==
        "job.toml:2:8: tensorflow.port: must be between 1 and 65535");
  CHECK(errors("[tensorflow]\nchief = 2\n") == "job.toml:2:9: tensorflow.chief: must be 0 or 1");
  CHECK(errors("[tensorflow]\nevaluator = 2\n") ==
        "job.toml:2:13: tensorflow.evaluator: must be 0 or 1");
  CHECK(errors("[tensorflow]\nps = -1\n") == "job.toml:2:6: tensorflow.ps: must be at least 0");
  CHECK(errors("[hosts]\nslots = 0\n") == "job.toml:2:9: hosts.slots: must be between 1 and 1000000");
  CHECK(errors("[job]\nname = \"\"\n") == "job.toml:2:8: job.name: must not be empty");
  CHECK(errors("[job]\ncommand = []\n") == "job.toml:2:11: job.command: must not be empty");
  CHECK(errors("[job]\ncommand = \"\"\n") == "job.toml:2:11: job.command: must not be empty");
  CHECK(errors("[hosts]\nlist = []\n") == "job.toml:2:8: hosts.list: must not be empty");
  CHECK(errors("[hosts]\nhostfile = \"\"\n") == "job.toml:2:12: hosts.hostfile: must not be empty");
}

TEST_CASE("durations", "[job][errors]") {
  CHECK(errors("[job]\ntimeout = \"5x\"\n") ==
        "job.toml:2:11: job.timeout: invalid duration '5x'; use a number and a unit: "
        "500ms, 30s, 5m, 2h, 1h30m");
  CHECK(errors("[job]\ntimeout = \"0s\"\n") == "job.toml:2:11: job.timeout: must be longer than 0");
  CHECK(errors("[job]\ngrace = \"0s\"\n").empty());
  CHECK(errors("[ssh]\nconnect_timeout = \"-1s\"\n") ==
        "job.toml:2:19: ssh.connect_timeout: invalid duration '-1s'; use a number and a unit: "
        "500ms, 30s, 5m, 2h, 1h30m");
  CHECK(errors("[rendezvous]\ntimeout = \"\"\n") ==
        "job.toml:2:11: rendezvous.timeout: invalid duration ''; use a number and a unit: "
        "500ms, 30s, 5m, 2h, 1h30m");
  CHECK(errors("[hosts]\ndiscovery_timeout = \"0ms\"\n") ==
        "job.toml:2:21: hosts.discovery_timeout: must be longer than 0");
}

TEST_CASE("enumerations", "[job][errors]") {
  CHECK(errors("[launch]\nbackend = \"shh\"\n") ==
        "job.toml:2:11: launch.backend: 'shh' is not one of auto, local, ssh, kubernetes, mpirun, slurm; "
        "did you mean 'ssh'?");
  CHECK(errors("[launch]\nbackend = \"slurm\"\n").empty());
  CHECK(errors("[slurm]\npartition = \"gpu\"\n") ==
        "job.toml:2:13: slurm.partition: ddl does not request allocations; run it inside one "
        "(salloc -p PARTITION ... or sbatch -p PARTITION ...)");
  CHECK(errors("[job]\nframeworks = [\"pytorch\"]\n") ==
        "job.toml:2:15: job.frameworks: 'pytorch' is not one of torch, tensorflow, horovod, jax, "
        "mpi; did you mean 'torch'?");
  CHECK(errors("[mpirun]\nflavour = \"mpi\"\n") ==
        "job.toml:2:11: mpirun.flavour: 'mpi' is not one of auto, openmpi, mpich");
  CHECK(errors("[mpirun]\nargs = [\"--mca\", 1]\n") != "");
  CHECK(errors("[mpirun]\nflavor = \"mpich\"\n").find("did you mean 'flavour'?") != std::string::npos);
  CHECK(errors("[ssh]\nhost_key_check = \"accept_new\"\n") ==
        "job.toml:2:18: ssh.host_key_check: 'accept_new' is not one of yes, accept-new, no; "
        "did you mean 'accept-new'?");
}

TEST_CASE("env names and values", "[job][errors]") {
  CHECK(errors("[job]\nenv = { \"BAD-NAME\" = \"1\" }\n") ==
        "job.toml:2:9: job.env: 'BAD-NAME' is not a valid variable name ([A-Za-z_][A-Za-z0-9_]*)");
  CHECK(errors("[job]\nenv = { \"1X\" = \"1\" }\n") ==
        "job.toml:2:9: job.env: '1X' is not a valid variable name ([A-Za-z_][A-Za-z0-9_]*)");
  CHECK(errors("[job]\nenv = { A = \"x\\u0000y\" }\n") ==
        "job.toml:2:13: job.env.A: value contains a NUL byte");
  CHECK(errors("[job]\ncommand = [\"a\\u0000\"]\n") ==
        "job.toml:2:12: job.command[0]: contains a NUL byte");
  CHECK(errors("[job]\nworkdir = \"a\\u0000\"\n") ==
        "job.toml:2:11: job.workdir: contains a NUL byte");
  CHECK(errors("[job]\nenv_pass = [\"NCCL-*\"]\n") ==
        "job.toml:2:13: job.env_pass: 'NCCL-*' is not a variable name or a NAME_* pattern");
  CHECK(errors("[job]\nenv_pass = [\"*\"]\n") ==
        "job.toml:2:13: job.env_pass: '*' is not a variable name or a NAME_* pattern");
  CHECK(errors("[job]\nenv_pass = [\"A*B\"]\n") ==
        "job.toml:2:13: job.env_pass: 'A*B' is not a variable name or a NAME_* pattern");
  CHECK(errors("[job]\nenv_pass = [\"A\", \"B*\"]\n").empty());
}

TEST_CASE("host names and hostlists in [hosts] list", "[job][errors]") {
  CHECK(errors("[hosts]\nlist = [\"-oProxyCommand=x\"]\n") ==
        "job.toml:2:9: hosts.list: bad host name '-oProxyCommand=x': starts with '-'");
  CHECK(errors("[hosts]\nlist = [\"a b\"]\n") ==
        "job.toml:2:9: hosts.list: bad host name 'a b': contains a space");
  CHECK(errors("[hosts]\nlist = [\"a;reboot\"]\n") ==
        "job.toml:2:9: hosts.list: bad host name 'a;reboot': contains the shell metacharacter ';'");
  CHECK(errors("[hosts]\nlist = [\"a$(x)\"]\n") ==
        "job.toml:2:9: hosts.list: bad host name 'a$(x)': contains the shell metacharacter '$'");
  CHECK(errors("[hosts]\nlist = [\"node[1-3\"]\n") ==
        "job.toml:2:9: hosts.list: '[' without ']' in 'node[1-3'");
  CHECK(errors("[hosts]\nlist = [\"node[3-1]\"]\n") ==
        "job.toml:2:9: hosts.list: reversed range '3-1' in 'node[3-1]'");
  CHECK(errors("[hosts]\nlist = [\"a:0\"]\n") == "job.toml:2:9: hosts.list: bad slot count '0' in 'a:0'");
}

TEST_CASE("control characters in echoed text are escaped", "[job][errors]") {
  CHECK(errors("[job]\n\"a\\u0001\\n\" = 1\n") == "job.toml:2:1: unknown key 'a\\x01\\x0a' in [job]");
  CHECK(errors("[launch]\nbackend = \"ss\\th\"\n") ==
        "job.toml:2:11: launch.backend: 'ss\\x09h' is not one of auto, local, ssh, kubernetes, mpirun, slurm; "
        "did you mean 'ssh'?");
}

TEST_CASE("only one host source", "[job][errors]") {
  CHECK(errors("[hosts]\nlist = [\"a\"]\nslurm = true\n") ==
        "job.toml:3:9: hosts.slurm: conflicts with hosts.list; give only one of list, hostfile, "
        "slurm, discovery_script");
}

TEST_CASE("all errors at once, in file order", "[job][errors]") {
  CHECK(errors("[launch]\nnp = 0\n[jbo]\n[ssh]\nport = 0\n") ==
        "job.toml:2:6: launch.np: must be between 1 and 1000000\n"
        "job.toml:3:2: unknown section 'jbo'; did you mean 'job'?\n"
        "job.toml:5:8: ssh.port: must be between 1 and 65535");
}

TEST_CASE("job file over the size cap", "[job][errors]") {
  std::string big(ddl::k_max_job_file_bytes + 1, '#');
  CHECK(errors(big) == "job.toml: job file is larger than 1048576 bytes");
}

TEST_CASE("nesting beyond the cap is an error at its place, not a parser crash", "[job][errors]") {
  std::string dotted = "a";
  for (int i = 0; i < 50'000; ++i) {
    dotted += ".a";
  }
  CHECK(errors(dotted + " = 1\n") ==
        "job.toml:1:130: nested more than 64 levels deep (tables, arrays, inline tables and "
        "dotted keys together)");
  std::string header = "[x";
  for (int i = 0; i < 50'000; ++i) {
    header += ".x";
  }
  CHECK(errors("[job]\n" + header + "]\n").starts_with("job.toml:2:"));
  CHECK(errors("x = " + std::string(50'000, '[') + "\n").starts_with("job.toml:1:"));
  CHECK(errors("x = " + std::string(10'000, '{') + "\n").starts_with("job.toml:1:"));
}

TEST_CASE("nesting inside strings and comments is not counted", "[job][errors]") {
  std::string many_dots(500, '.');
  std::string brackets(500, '[');
  CHECK(errors("[job]\nname = \"" + many_dots + "\"\n# " + brackets + "\n"
               "workdir = '" + brackets + "'\ncommand = \"\"\"\n" + brackets + "\"\"\"\n") == "");
}

TEST_CASE("rank and slot counts above ddl's limit are refused", "[job][errors]") {
  CHECK(errors("[launch]\nnp = 1000001\n") == "job.toml:2:6: launch.np: must be between 1 and 1000000");
  CHECK(errors("[hosts]\nslots = 5000000\n") ==
        "job.toml:2:9: hosts.slots: must be between 1 and 1000000");
  ddl::Overrides big_np;
  big_np.np = "5000000";
  CHECK(errors("", big_np) == "--np: 5000000 is above ddl's limit of 1000000 ranks");
}

TEST_CASE("[mpi] launch and --mpi: mpirun or pmix", "[job][errors][pmix]") {
  auto job = ddl::parse_job("[mpi]\nlaunch = \"pmix\"\n", "job.toml", {});
  REQUIRE(job);
  CHECK(job->mpi.launch == ddl::MpiLaunch::pmix);
  auto plain = ddl::parse_job("[job]\nname = \"x\"\n", "job.toml", {});
  REQUIRE(plain);
  CHECK(plain->mpi.launch == ddl::MpiLaunch::mpirun);
  ddl::Overrides overrides;
  overrides.mpi = "mpirun";
  auto overridden = ddl::parse_job("[mpi]\nlaunch = \"pmix\"\n", "job.toml", overrides);
  REQUIRE(overridden);
  CHECK(overridden->mpi.launch == ddl::MpiLaunch::mpirun);
  CHECK(errors("[mpi]\nlaunch = \"pmi\"\n") ==
        "job.toml:2:10: mpi.launch: 'pmi' is not one of mpirun, pmix, auto; did you mean 'pmix'?");
  overrides.mpi = "orted";
  CHECK(errors("", overrides).starts_with("--mpi: 'orted' is not one of mpirun, pmix, auto"));
  auto automatic = ddl::parse_job("[mpi]\nlaunch = \"auto\"\n", "job.toml", {});
  REQUIRE(automatic);
  CHECK(automatic->mpi.launch == ddl::MpiLaunch::automatic);
  CHECK(ddl::to_string(ddl::MpiLaunch::automatic) == "auto");
}
