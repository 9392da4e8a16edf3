// SPDX-License-Identifier: MIT
// The session broker's frames (backends/ssh/broker_wire.hpp): what a trial
// and the broker read back is what the other wrote, however the bytes
// arrive, and a length over the limit stops the stream instead of waiting.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "backends/ssh/broker_wire.hpp"

using namespace ddl::broker;

TEST_CASE("broker frames: encoded frames come back whole, one byte at a time", "[broker]") {
  std::string wire = encode(Type::open, 7, "sh -c 'ddl shim'") + encode(Type::eof, 7) +
                     encode(Type::err, 4294967295U, std::string("a\0b", 3));
  REQUIRE(wire.substr(0, 9) == std::string("\0\0\0\x15\x02\0\0\0\x07", 9));
  FrameReader reader;
  std::vector<Frame> frames;
  for (char byte : wire) {
    reader.feed(std::string_view(&byte, 1));
    while (auto frame = reader.next()) frames.push_back(*frame);
  }
  REQUIRE(frames.size() == 3);
  CHECK((frames[0].type == Type::open && frames[0].channel == 7 && frames[0].bytes == "sh -c 'ddl shim'"));
  CHECK((frames[1].type == Type::eof && frames[1].channel == 7 && frames[1].bytes.empty()));
  CHECK((frames[2].type == Type::err && frames[2].channel == 4294967295U && frames[2].bytes == std::string("a\0b", 3)));
  CHECK_FALSE(reader.bad());
}

TEST_CASE("broker frames: a length below the header or over 64 MiB is a bad stream", "[broker]") {
  FrameReader short_frame;
  short_frame.feed(std::string("\0\0\0\x04\x03\0\0\0", 8));
  CHECK_FALSE(short_frame.next());
  CHECK(short_frame.bad());
  FrameReader huge;
  huge.feed(std::string("\x04\0\0\x01\x03", 5));
  CHECK_FALSE(huge.next());
  CHECK(huge.bad());
  FrameReader partial;
  partial.feed(encode(Type::data, 1, "half").substr(0, 10));
  CHECK_FALSE(partial.next());
  CHECK_FALSE(partial.bad());
}
