// SPDX-License-Identifier: MIT
#include "rendezvous/crypto.hpp"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <array>

#include <fmt/format.h>

namespace ddl::rendezvous {

std::string hmac_sha256(std::string_view key, std::string_view message) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
  unsigned int size = 0;
  // HMAC() fails only when the digest is unavailable, which libcrypto always has.
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac.data(), &size);
  return {reinterpret_cast<const char*>(mac.data()), size};
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

Result<std::string> random_bytes(std::size_t size) {
  std::string out(size, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(size)) != 1) {
    std::array<char, 256> reason{};
    ERR_error_string_n(ERR_get_error(), reason.data(), reason.size());
    return fail(ExitCode::launch, fmt::format("RAND_bytes: {}", reason.data()));
  }
  return out;
}

std::string to_hex(std::string_view bytes) {
  static constexpr std::string_view k_digits = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    out += k_digits[byte >> 4];
    out += k_digits[byte & 0xf];
  }
  return out;
}

} // namespace ddl::rendezvous
