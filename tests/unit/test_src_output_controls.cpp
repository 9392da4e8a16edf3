// SPDX-License-Identifier: MIT
// Issue 19's output controls: rank lists, line prefixes (ddl's and
// torchrun's), --fold, and their job-file keys.
#include <catch2/catch.hpp>

#include "src/job/job.hpp"
#include "src/launch/output_fold.hpp"
#include "src/util/line_prefix.hpp"
#include "src/util/rank_list.hpp"

using namespace ddl;

TEST_CASE("parse_rank_list", "[output]") {
  std::string problem;
  SECTION("numbers and inclusive ranges") {
    auto list = parse_rank_list("0, 3-4", problem);
    REQUIRE(list);
    CHECK(list->contains(0));
    CHECK_FALSE(list->contains(1));
    CHECK(list->contains(3));
    CHECK(list->contains(4));
    CHECK_FALSE(list->contains(5));
    CHECK(list->highest() == 4);
  }
  SECTION("refuses what is not a rank list, saying why") {
    CHECK_FALSE(parse_rank_list("", problem));
    CHECK(problem == "names no rank (write e.g. 0,3-4)");
    CHECK_FALSE(parse_rank_list("0,x", problem));
    CHECK(problem == "'x' is not a rank (a number from 0)");
    CHECK_FALSE(parse_rank_list("4-2", problem));
    CHECK(problem == "'4-2' runs backwards");
    CHECK_FALSE(parse_rank_list("-1", problem));
  }
  CHECK(compress_ranks({0, 1, 2, 5, 7, 8}) == "0-2,5,7-8");
}

TEST_CASE("LinePrefix", "[output]") {
  PrefixFields fields{3, "node-b", 1, 2, false};
  CHECK(LinePrefix::standard().render(fields) == "[3] ");
  fields.partial = true;
  CHECK(LinePrefix::standard().render(fields) == "[3+] ");
  fields.partial = false;
  std::string problem;
  auto custom = LinePrefix::parse("{host}/{local_rank} #{attempt} {{r{rank}}}: ", problem);
  REQUIRE(custom);
  CHECK(custom->render(fields) == "node-b/1 #2 {r3}: ");
  CHECK_FALSE(LinePrefix::parse("{rnak}", problem));
  CHECK(problem == "unknown field {rnak} (did you mean {rank}?); the fields are {rank}, {host}, {local_rank}, "
                   "{attempt} and {partial}");
  CHECK_FALSE(LinePrefix::parse("{rank", problem));
  CHECK(problem == "a '{' without its '}' (write '{{' for a brace)");
  CHECK_FALSE(LinePrefix::parse("rank}", problem));
}

TEST_CASE("from_torch_template", "[output]") {
  // torch fills ${role_name}, ${rank} (global) and ${local_rank} with
  // string.Template.safe_substitute: $name works too, $$ is $, others stay.
  CHECK(from_torch_template("[${role_name}${rank}]:") == "[default{rank}]:");
  CHECK(from_torch_template("$rank/$local_rank ") == "{rank}/{local_rank} ");
  std::string problem;
  // What stays is literal text: its braces are escaped in ddl's template.
  CHECK(from_torch_template("$$ ${unknown} $other {x}") == "$ ${{unknown}} $other {{x}}");
  auto kept = LinePrefix::parse(from_torch_template("$$ ${unknown} $other {x} ${rank"), problem);
  REQUIRE(kept);
  CHECK(kept->render({5, "h", 1, 0, false}) == "$ ${unknown} $other {x} ${rank");
  auto prefix = LinePrefix::parse(from_torch_template("[${role_name}${rank}]:"), problem);
  REQUIRE(prefix);
  CHECK(prefix->render({5, "h", 1, 0, false}) == "[default5]:");
}

TEST_CASE("FoldBuffer", "[output]") {
  FoldBuffer fold;
  fold.reset(4);
  for (int rank : {0, 1, 3}) {
    fold.add(rank, "same", "\n");
  }
  fold.add(2, "sa", "");  // a piece cut at the line cap goes on
  fold.add(2, "me", "\n");
  fold.add(3, "more", "\n");
  CHECK(fold.folded({"a", "a", "b", "b"}) ==
        "----------------\nranks 0-2 (a,b)\n----------------\nsame\n"
        "----------------\nrank 3 (b)\n----------------\nsame\nmore\n");
  SECTION("a rank past its share is cut, and says so") {
    fold.reset(1);
    std::string big(600 << 10, 'x');
    fold.add(0, big, "\n");
    fold.add(0, big, "\n");
    fold.add(0, "after", "\n");
    std::string text = fold.folded({"a"});
    CHECK(text.find("(ddl: output cut at 1024 KiB for --fold; --log-dir keeps all of it)\n") != std::string::npos);
    CHECK(text.find("after") == std::string::npos);
  }
}

TEST_CASE("job output keys", "[output][job]") {
  Overrides none;
  auto job = parse_job("[job]\ncommand = \"true\"\noutput_ranks = \"0,2-3\"\nprefix = \"{host}: \"\n"
                       "timestamps = true\nlog_dir = \"logs\"\nsplit_logs = true\n",
                       "job.toml", none);
  REQUIRE(job);
  CHECK(job->output_ranks.contains(2));
  CHECK_FALSE(job->output_ranks.contains(1));
  CHECK(job->prefix == "{host}: ");
  CHECK(job->timestamps);
  CHECK(job->split_logs);
  auto bad = parse_job("[job]\ncommand = \"true\"\noutput_ranks = \"0,a\"\nprefix = \"{rnk}\"\nsplit_logs = true\n"
                       "fold = true\ntimestamps = true\n",
                       "job.toml", none);
  REQUIRE_FALSE(bad);
  const std::string& text = bad.error().message;
  CHECK(text.find("job.toml:3:16: job.output_ranks: 'a' is not a rank (a number from 0)") != std::string::npos);
  CHECK(text.find("job.toml:4:10: job.prefix: unknown field {rnk}") != std::string::npos);
  CHECK(text.find("job.toml:5:14: job.split_logs: needs a log directory (job.log_dir or --log-dir)") !=
        std::string::npos);
  CHECK(text.find("job.toml:6:8: job.fold: does not go with timestamps") != std::string::npos);
  Overrides flags;
  flags.output_ranks = "1-";
  flags.fold = true;
  auto from_flags = parse_job("", "", flags);
  REQUIRE_FALSE(from_flags);
  CHECK(from_flags.error().message.find("--output-ranks: '' is not a rank") != std::string::npos);
}
