// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace ddl::rendezvous {

using Digest = std::array<std::uint8_t, 32>;

// SHA-256 (FIPS 180-4), incremental.
class Sha256 {
public:
  Sha256();
  void update(std::string_view bytes);
  Digest finish();

private:
  void compress(const std::uint8_t* block);
  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
};

Digest sha256(std::string_view bytes);
// HMAC-SHA256 (RFC 2104 / RFC 4231).
Digest hmac_sha256(std::string_view key, std::string_view message);
// Compares without an early exit, so timing reveals nothing of where they differ.
bool constant_time_equal(std::string_view a, std::string_view b);
std::string to_hex(std::string_view bytes);
inline std::string_view as_bytes(const Digest& digest) {
  return {reinterpret_cast<const char*>(digest.data()), digest.size()};
}

} // namespace ddl::rendezvous
