// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "src/launch/output.hpp"
#include "src/launch/output_lines.hpp"

namespace {
std::vector<std::string> feed_all(ddl::LineAssembler& assembler, const std::vector<std::string>& chunks) {
  std::vector<std::string> lines;
  auto emit = [&](std::string_view line) { lines.emplace_back(line); };
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
  CHECK(lines == std::vector<std::string>{"abcd", "efgh", "ij", "xyz"});
}

TEST_CASE("LineAssembler keeps a long line whole under the cap", "[output]") {
  ddl::LineAssembler assembler;
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
