// SPDX-License-Identifier: MIT
#pragma once

// What users of mpirun, torchrun, horovodrun and DeepSpeed's launcher type
// out of habit, met before and after CLI11 parses: spellings with the same
// meaning are rewritten to ddl's, the others are refused with ddl's spelling
// (never a different job than the one meant), and words CLI11 did not take
// are answered with what to write instead. Shared by every subcommand that
// takes the common options (run, hosts, render, bench, sweep).

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "src/util/error.hpp"

namespace ddl::cmd {

// Takes the command to run off `args`: for `ddl run`, as mpirun reads its
// line, from the first word that is neither an option of run (with its
// value) nor the JOB file (the first word that ends in .toml, names a file
// that is not executable, or has a "--" after it), or after "--";
// for the other subcommands, the words after "--". A word after the program
// is the program's, even when ddl has an option spelled so; one of ddl's own
// (--dry-run, --np, ...) there, without "--", is noted on stderr.
std::vector<std::string> take_command(const CLI::App& app, std::vector<std::string>& args);

// Rewrites other launchers' option spellings in `args` (the words before
// "--", args[0] the subcommand) to ddl's: -np, --num-proc, -n (where the
// subcommand has no -n of its own) -> --np; --host, -host -> --hosts;
// -hostfile, --machinefile -> --hostfile; -i/-e -> --include/--exclude.
// torchrun's and DeepSpeed's per-node options (--nproc-per-node, --nnodes,
// --num_gpus, --node-rank, --master-port...) mean something that ddl spells
// differently: a usage error that says how.
Result<void> translate_habits(const CLI::App& app, std::vector<std::string>& args);

// Lets every subcommand of `app` keep the words it does not know, so that
// check_leftover_words can answer them (instead of CLI11's "not expected").
void keep_leftover_words(CLI::App& app);

// After parsing: the words the chosen subcommand did not take. An unknown
// option gets a "did you mean"; a stray word (`ddl run python3 train.py`)
// gets the command line with "--" that runs it. A JOB that is no file and no
// .toml and no other word after it is answered the same way.
Result<void> check_leftover_words(const CLI::App& app);

} // namespace ddl::cmd
