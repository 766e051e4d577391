#include "ferrite/core/fingerprint.h"

#include <openssl/evp.h>

#include <array>
#include <cstdio>

namespace ferrite {

std::string sha256_hex(std::string_view bytes) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  // EVP_Digest is a one-shot call; it cannot fail for SHA-256 on valid memory.
  EVP_Digest(bytes.data(), bytes.size(), digest.data(), &length, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(length * 2);
  for (unsigned int i = 0; i < length; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 0xf]);
  }
  return out;
}

std::string canonical_json(const nlohmann::json& value) {
  // Hazard: invalid UTF-8 is replaced by U+FFFD, so two different invalid
  // strings would hash alike. Every reader rejects invalid UTF-8 (the JSON
  // parser does), and identities are ASCII, so only text built in code can
  // reach this; callers must keep such text valid UTF-8.
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string canonical_fingerprint(const nlohmann::json& value) {
  return sha256_hex(canonical_json(value));
}

bool is_canonical_sha256(std::string_view text) {
  if (text.size() != 64) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace ferrite
