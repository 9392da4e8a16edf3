// SPDX-License-Identifier: MIT
#include "rendezvous/protocol.hpp"

#include "rendezvous/crypto.hpp"
#include "src/util/text.hpp"

namespace ddl::rendezvous {

std::uint32_t read_be32(const char* bytes) {
  const auto* b = reinterpret_cast<const unsigned char*>(bytes);
  return std::uint32_t{b[0]} << 24 | std::uint32_t{b[1]} << 16 | std::uint32_t{b[2]} << 8 |
         std::uint32_t{b[3]};
}

void append_be32(std::string& out, std::uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((value >> shift) & 0xff));
  }
}

FrameWriter::FrameWriter(MsgType type) {
  out_.assign(4, '\0');
  out_.push_back(static_cast<char>(type));
}

FrameWriter& FrameWriter::u32(std::uint32_t value) {
  append_be32(out_, value);
  return *this;
}

FrameWriter& FrameWriter::bytes(std::string_view value) {
  append_be32(out_, static_cast<std::uint32_t>(value.size()));
  out_.append(value);
  return *this;
}

FrameWriter& FrameWriter::raw(std::string_view value) {
  out_.append(value);
  return *this;
}

std::string FrameWriter::finish() {
  std::string length;
  append_be32(length, static_cast<std::uint32_t>(out_.size() - 4));
  out_.replace(0, 4, length);
  return std::move(out_);
}

FrameReader::FrameReader(std::string_view payload) : rest_(payload) {
  if (!rest_.empty()) {
    type_ = static_cast<MsgType>(static_cast<unsigned char>(rest_.front()));
    rest_.remove_prefix(1);
  }
}

std::optional<std::uint32_t> FrameReader::u32() {
  if (rest_.size() < 4) return std::nullopt;
  std::uint32_t value = read_be32(rest_.data());
  rest_.remove_prefix(4);
  return value;
}

std::optional<std::string_view> FrameReader::bytes() {
  auto size = u32();
  if (!size) return std::nullopt;
  return raw(*size);
}

std::optional<std::string_view> FrameReader::raw(std::size_t size) {
  if (rest_.size() < size) return std::nullopt;
  std::string_view value = rest_.substr(0, size);
  rest_.remove_prefix(size);
  return value;
}

std::string join_message(std::string_view nonce, std::uint32_t rank, std::uint32_t world_size,
                         std::string_view job) {
  std::string message(nonce);
  append_be32(message, rank);
  append_be32(message, world_size);
  message.append(job);
  return message;
}

std::string join_mac(std::string_view token, std::string_view nonce, std::uint32_t rank,
                     std::uint32_t world_size, std::string_view job) {
  return hmac_sha256(token, join_message(nonce, rank, world_size, job));
}

Result<std::string> generate_token() {
  auto bytes = random_bytes(32);
  if (!bytes) return fail(bytes.error());
  return to_hex(*bytes);
}

} // namespace ddl::rendezvous
