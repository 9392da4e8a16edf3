// SPDX-License-Identifier: MIT
// The rendezvous' few cryptographic needs, from OpenSSL's libcrypto.
#pragma once

#include <string>
#include <string_view>

#include "src/util/error.hpp"

namespace ddl::rendezvous {

// HMAC-SHA256 (RFC 2104 / RFC 4231) of `message` under `key`: 32 raw bytes.
std::string hmac_sha256(std::string_view key, std::string_view message);
// Compares without an early exit, so timing reveals nothing of where they differ.
bool constant_time_equal(std::string_view a, std::string_view b);
// `size` bytes from a cryptographically secure generator.
Result<std::string> random_bytes(std::size_t size);
// Lowercase hex digits, two per byte.
std::string to_hex(std::string_view bytes);

} // namespace ddl::rendezvous
