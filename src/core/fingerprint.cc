#include "ferrite/core/fingerprint.h"

#include "ferrite/core/canonical_encoder.h"

#include <openssl/evp.h>

#include <array>
#include <cstdio>

namespace ferrite {

std::string sha256_hex(std::string_view bytes) {
  // One reused context per thread; the bytes are hashed as they are.
  thread_local CanonicalSha256 hash;
  hash.reset();
  hash.update(bytes);
  return hash.hex();
}

std::string canonical_json(const nlohmann::json& value) {
  // Hazard: invalid UTF-8 is replaced by U+FFFD, so two different invalid
  // strings would hash alike. Every reader rejects invalid UTF-8 (the JSON
  // parser does), and identities are ASCII, so only text built in code can
  // reach this; callers must keep such text valid UTF-8.
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string canonical_fingerprint(const nlohmann::json& value) {
  // Streamed: the same bytes as canonical_json(value), never materialized.
  thread_local CanonicalSha256 hash;
  hash.reset();
  hash.json(value);
  return hash.hex();
}

bool is_canonical_sha256(std::string_view text) {
  // Called for every fingerprint a compilation checks: one table load per
  // character and a single branch at the end.
  static constexpr auto kLowerHex = [] {
    std::array<uint8_t, 256> table{};
    for (int c = '0'; c <= '9'; ++c) table[static_cast<size_t>(c)] = 1;
    for (int c = 'a'; c <= 'f'; ++c) table[static_cast<size_t>(c)] = 1;
    return table;
  }();
  if (text.size() != 64) return false;
  unsigned valid = 1;
  for (char c : text) valid &= kLowerHex[static_cast<unsigned char>(c)];
  return valid != 0;
}

}  // namespace ferrite
