// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "src/util/text.hpp"

TEST_CASE("did_you_mean", "[text]") {
  std::vector<std::string> words = {"run", "render", "hosts"};
  SECTION("finds a near miss") { CHECK(ddl::did_you_mean("rnu", words) == "run"); }
  SECTION("gives nothing for a far word") { CHECK(ddl::did_you_mean("xyzzyq", words).empty()); }
}

TEST_CASE("shell_quote", "[text]") {
  CHECK(ddl::shell_quote("a b") == "'a b'");
  CHECK(ddl::shell_quote("it's") == "'it'\\''s'");
  CHECK(ddl::shell_quote("") == "''");
}

TEST_CASE("parse_int", "[text]") {
  CHECK(ddl::parse_int("42") == 42);
  CHECK_FALSE(ddl::parse_int("-1").has_value());
  CHECK_FALSE(ddl::parse_int("4x").has_value());
  CHECK_FALSE(ddl::parse_int("").has_value());
}

TEST_CASE("clip and quote_input cut long input with its length", "[text]") {
  CHECK(ddl::clip("short") == "short");
  CHECK(ddl::clip(std::string(300, 'a'), 4) == "aaaa… (300 bytes)");
  // Never inside a UTF-8 character: "é" is two bytes.
  CHECK(ddl::clip("aé" + std::string(10, 'b'), 2) == "a… (13 bytes)");
  CHECK(ddl::quote_input("a\nb") == "'a\\x0ab'");
  CHECK(ddl::quote_input("b;" + std::string(100000, 'a')) ==
        "'b;" + std::string(198, 'a') + "…' (100002 bytes)");
  CHECK(ddl::last_lines("x\n" + std::string(300000, 'y') + "\n", 1) ==
        std::string(ddl::k_quote_max_bytes, 'y') + "… (300000 bytes)");
}

TEST_CASE("escape_control keeps a line one line", "[text]") {
  CHECK(ddl::escape_control("plain é") == "plain é");
  CHECK(ddl::escape_control("a\nb\tc\rd\x1b[2J\x01\x7f") == "a\\nb\\tc\\rd\\e[2J\\x01\\x7f");
}

TEST_CASE("shell_word: bare, '...' or $'...'", "[text]") {
  CHECK(ddl::shell_word("/usr/lib:x=1,2@h%+") == "/usr/lib:x=1,2@h%+");
  CHECK(ddl::shell_word("") == "''");
  CHECK(ddl::shell_word("it's $HOME") == "'it'\\''s $HOME'");
  CHECK(ddl::shell_word("a\nLD_PRELOAD=x") == "$'a\\nLD_PRELOAD=x'");
  CHECK(ddl::shell_word("q'\\\x1b") == "$'q\\'\\\\\\e'");
}

TEST_CASE("replace_all replaces every match once, never inside what it put", "[text]") {
  CHECK(ddl::replace_all("{a}-{a}", "{a}", "x") == "x-x");
  CHECK(ddl::replace_all("aa", "a", "aa") == "aaaa");
  CHECK(ddl::replace_all("kept", "", "x") == "kept");
}
