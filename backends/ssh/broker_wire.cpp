// SPDX-License-Identifier: MIT
#include "backends/ssh/broker_wire.hpp"

#include "backends/ssh/host_session.hpp"
#include "src/util/text.hpp"

namespace ddl::broker {

namespace {

// A frame is a rank's env or a piece of its output: far below this.
constexpr std::uint32_t k_max_frame = 64U << 20U;

void put_u32(std::string& out, std::uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((value >> static_cast<unsigned>(shift)) & 0xffU));
  }
}

std::uint32_t get_u32(std::string_view in) {
  std::uint32_t value = 0;
  for (int i = 0; i < 4; ++i) {
    value = (value << 8U) | static_cast<unsigned char>(in[static_cast<std::size_t>(i)]);
  }
  return value;
}

} // namespace

std::string ready_bytes() { return "{\"version\":" + std::to_string(k_protocol) + "}"; }

std::string encode(Type type, std::uint32_t channel, std::string_view bytes) {
  std::string out;
  out.reserve(9 + bytes.size());
  put_u32(out, static_cast<std::uint32_t>(5 + bytes.size()));
  out.push_back(static_cast<char>(type));
  put_u32(out, channel);
  out.append(bytes);
  return out;
}

bool tell(ChannelListener& listener, const Frame& frame) {
  switch (frame.type) {
  case Type::out:
  case Type::err:
    listener.data(frame.bytes, frame.type == Type::err);
    return true;
  case Type::exit_status:
    if (auto status = parse_int(frame.bytes)) {
      listener.exit_status(static_cast<int>(*status));
    }
    return true;
  case Type::exit_signal:
    listener.exit_signal(frame.bytes);
    return true;
  case Type::closed:
    listener.ended();
    return true;
  default:
    return false;
  }
}

std::optional<Frame> FrameReader::next() {
  std::string_view rest = std::string_view(buffer_).substr(start_);
  if (bad_ || rest.size() < 4) {
    return std::nullopt;
  }
  const std::uint32_t length = get_u32(rest);
  if (length < 5 || length > k_max_frame) {
    bad_ = true;
    return std::nullopt;
  }
  if (rest.size() < 4 + static_cast<std::size_t>(length)) {
    return std::nullopt;
  }
  Frame frame;
  frame.type = static_cast<Type>(static_cast<unsigned char>(rest[4]));
  frame.channel = get_u32(rest.substr(5));
  frame.bytes = std::string(rest.substr(9, length - 5));
  start_ += 4 + length;
  if (start_ == buffer_.size()) {
    buffer_.clear();
    start_ = 0;
  } else if (start_ > (1U << 20U)) {
    buffer_.erase(0, start_);
    start_ = 0;
  }
  return frame;
}

} // namespace ddl::broker
