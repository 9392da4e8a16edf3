// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "captured_file.hpp"
#include "src/launch/output.hpp"
#include "src/launch/output_lines.hpp"
#include "src/util/text.hpp"

namespace {
// Each piece, followed by "+" when it is partial and "<CR>" when a '\r' ended it.
std::vector<std::string> feed_all(ddl::LineAssembler& assembler, const std::vector<std::string>& chunks) {
  std::vector<std::string> lines;
  auto emit = [&](std::string_view line, ddl::LineEnd end) {
    lines.emplace_back(std::string(line) + (end == ddl::LineEnd::partial ? "+" : end == ddl::LineEnd::carriage ? "<CR>" : ""));
  };
  for (const auto& chunk : chunks) {
    assembler.feed(chunk, emit);
  }
  assembler.finish(emit);
  return lines;
}
} // namespace

TEST_CASE("LineAssembler joins chunks into whole lines", "[output]") {
  ddl::LineAssembler assembler;
  auto lines = feed_all(assembler, {"he", "llo\nwor", "ld\n\nlast"});
  CHECK(lines == std::vector<std::string>{"hello", "world", "", "last"});
}

TEST_CASE("LineAssembler keeps \\r and invalid UTF-8 as they are", "[output]") {
  ddl::LineAssembler assembler;
  auto lines = feed_all(assembler, {"a\rb\xff\xfe\n"});
  CHECK(lines == std::vector<std::string>{"a\rb\xff\xfe"});
}

TEST_CASE("LineAssembler emits nothing at finish without a partial line", "[output]") {
  ddl::LineAssembler assembler;
  CHECK(feed_all(assembler, {"one\n", "two\n"}) == std::vector<std::string>{"one", "two"});
  CHECK(assembler.pending() == 0);
}

TEST_CASE("LineAssembler cuts a line longer than the cap into pieces", "[output]") {
  ddl::LineAssembler assembler(4);
  auto lines = feed_all(assembler, {"abcdefghij\nxy", "z\n"});
  CHECK(lines == std::vector<std::string>{"abcd+", "efgh+", "ij", "xyz"});
}

TEST_CASE("LineAssembler: the cap is 64 KiB, its memory stays near it", "[output]") {
  ddl::LineAssembler assembler;
  std::size_t pieces = 0;
  std::size_t most = 0;
  std::string chunk(100'000, 'x');
  for (int i = 0; i < 100; ++i) {  // 10 MB, no newline
    assembler.feed(chunk, [&](std::string_view line, ddl::LineEnd end) {
      CHECK(line.size() == ddl::k_max_line_bytes);
      CHECK(end == ddl::LineEnd::partial);
      ++pieces;
    });
    most = std::max(most, assembler.pending());
  }
  CHECK(ddl::k_max_line_bytes == 65536);
  CHECK(pieces == 10'000'000 / 65536);
  CHECK(most <= ddl::k_max_line_bytes);
}

TEST_CASE("LineAssembler splits at a lone \r only when asked", "[output]") {
  ddl::LineAssembler plain(64);
  CHECK(feed_all(plain, {"\r 1%", "\r 2%\r", " 3%\n"}) == std::vector<std::string>{"\r 1%\r 2%\r 3%"});
  ddl::LineAssembler bar(64, true);
  CHECK(feed_all(bar, {"\r 1%", "\r 2%\r", " 3%\r\n", "end\r"}) ==
        std::vector<std::string>{"<CR>", " 1%<CR>", " 2%<CR>", " 3%\r", "end<CR>"});
  ddl::LineAssembler crlf(64, true);
  CHECK(feed_all(crlf, {"a\r", "\nb\r\n"}) == std::vector<std::string>{"a\r", "b\r"});
}

TEST_CASE("LineAssembler keeps a long line whole under the cap", "[output]") {
  ddl::LineAssembler assembler(std::size_t{4} << 20);
  std::string big(3 << 20, 'x');
  std::vector<std::string> chunks;
  for (std::size_t at = 0; at < big.size(); at += 65536) {
    chunks.push_back(big.substr(at, 65536));
  }
  chunks.emplace_back("\n");
  auto lines = feed_all(assembler, chunks);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == big);
}

TEST_CASE("LineTail keeps the last lines, each cut to a width", "[output]") {
  ddl::LineTail tail(2, 3);
  tail.add("first");
  tail.add("second");
  tail.add("third");
  CHECK(std::vector<std::string>(tail.lines().begin(), tail.lines().end()) ==
        std::vector<std::string>{"sec", "thi"});
}

TEST_CASE("valid_utf8 replaces only invalid bytes", "[output]") {
  CHECK(ddl::valid_utf8("plain \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80") == "plain \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  CHECK(ddl::valid_utf8("a\xffz") == "a\xef\xbf\xbdz");
  CHECK(ddl::valid_utf8("\xc0\xaf") == "\xef\xbf\xbd\xef\xbf\xbd");  // overlong '/'
  CHECK(ddl::valid_utf8("cut \xe2\x82") == "cut \xef\xbf\xbd\xef\xbf\xbd");
}

TEST_CASE("secret_start_at_end finds the start of a secret cut at the end", "[output]") {
  CHECK(ddl::secret_start_at_end("xx ab", {"abc"}) == 2);
  CHECK(ddl::secret_start_at_end("xx a", {"abc", "aq"}) == 1);
  CHECK(ddl::secret_start_at_end("xx abc", {"abc"}) == 0);  // whole: redact's job
  CHECK(ddl::secret_start_at_end("xx b", {"abc"}) == 0);
  CHECK(ddl::secret_start_at_end("", {"abc", ""}) == 0);
}

TEST_CASE("redact replaces every copy of a secret", "[output]") {
  CHECK(ddl::redact("t=abc and abc!", {"abc"}) == "t=[redacted] and [redacted]!");
  CHECK(ddl::redact("nothing", {"abc", ""}) == "nothing");
}

TEST_CASE("Output never shows a secret cut across pieces at the line cap", "[output]") {
  ddl::test::CapturedFile out;
  {
    ddl::OutputOptions options;
    options.stdout_fd = out.fd;
    options.secrets = {"s3cr3t"};
    ddl::Output output(options);
    output.line(0, ddl::Stream::out, "aaa s3c", ddl::LineEnd::partial);
    output.line(0, ddl::Stream::out, "r3t bbb", ddl::LineEnd::newline);
    output.line(1, ddl::Stream::out, "ccc s3", ddl::LineEnd::partial);
    output.exited(1, ddl::RankExit{});  // the held end is not lost
  }
  CHECK(out.text() == "[0+] aaa \n[0] [redacted] bbb\n[1+] ccc \n[1] s3\n");
}

TEST_CASE("RankTagRouter: a host's lines to the logs of its MPI ranks", "[output]") {
  using ddl::LineEnd;
  using ddl::Stream;
  ddl::RankTagRouter router({2, 3});
  REQUIRE(router.active());
  CHECK(router.world_size() == 5);
  auto routed = [&](int host, Stream stream, std::string_view text, LineEnd end = LineEnd::newline) {
    auto r = router.route(host, stream, text, end);
    return std::to_string(r.rank) + ":" + std::string(r.text);
  };
  CHECK(routed(1, Stream::out, "[3] hello") == "3:hello");
  CHECK(routed(0, Stream::err, "[1] ] [2] x") == "1:] [2] x");
  // The worker's own words, and a tag of another host's rank: the host's first rank, whole.
  CHECK(routed(1, Stream::err, "ddl: error: rank 3 called MPI_Abort") == "2:ddl: error: rank 3 called MPI_Abort");
  CHECK(routed(1, Stream::out, "[0] not this host's") == "2:[0] not this host's");
  CHECK(routed(0, Stream::out, "[1]no blank") == "0:[1]no blank");
  CHECK(routed(0, Stream::out, "[] x") == "0:[] x");
  // A cut piece and a '\r' update go on where they started, per stream.
  CHECK(routed(1, Stream::out, "[4] long", LineEnd::partial) == "4:long");
  CHECK(routed(1, Stream::err, "[3] other stream") == "3:other stream");
  CHECK(routed(1, Stream::out, "[2] still rank 4's line", LineEnd::carriage) == "4:[2] still rank 4's line");
  CHECK(routed(1, Stream::out, " end") == "4: end");
  CHECK(routed(1, Stream::out, "[2] next") == "2:next");
  // The worker's piece of a long line, "[R+] ": that rank's, and its line
  // goes on in the rank's next piece, whatever other rank comes between.
  auto piece = router.route(1, Stream::out, "[3+] first half", LineEnd::newline);
  CHECK((piece.rank == 3 && piece.text == "first half" && piece.continues));
  CHECK(routed(1, Stream::out, "[4] between") == "4:between");
  auto rest = router.route(1, Stream::out, "[3] second half", LineEnd::newline);
  CHECK((rest.rank == 3 && rest.text == "second half" && !rest.continues));
  CHECK(routed(1, Stream::out, "[3+]x") == "2:[3+]x");
  // The worker's verdict above ("rank 3 called MPI_Abort"): the MPI rank it
  // blames, the first one, of its own host only.
  CHECK(router.blamed(1) == 3);
  CHECK_FALSE(router.blamed(0));
  router.route(0, Stream::out, "[1] cut", LineEnd::partial);
  router.reset();
  CHECK_FALSE(router.blamed(1));
  CHECK(routed(1, Stream::err, "ddl: error: rank 0 exited with code 3") == "2:ddl: error: rank 0 exited with code 3");
  CHECK_FALSE(router.blamed(1));
  router.route(1, Stream::err, "ddl: error: rank 4 called MPI_Abort with status 7", LineEnd::newline);
  router.route(1, Stream::err, "ddl: error: rank 2 exited with code 1", LineEnd::newline);
  CHECK(router.blamed(1) == 4);
  CHECK(ddl::RankTagRouter::lines_of(4, {"[4] a", "[3] b", "ddl: x", "[4+] c", "[4] d"}) ==
        std::vector<std::string>{"a", "c", "d"});
  router.reset();
  CHECK(routed(0, Stream::out, "[0] new attempt") == "0:new attempt");
  CHECK_FALSE(ddl::RankTagRouter().active());
}
