#include "ferrite/core/fingerprint.h"

#include "ferrite/core/canonical_encoder.h"

#include <openssl/evp.h>

#include <array>
#include <cstdio>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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
  // Called for every fingerprint a compilation checks (several per estimate):
  // sixteen characters per step where SSE2 is there, one table load per
  // character elsewhere; a single branch at the end either way.
  if (text.size() != 64) return false;
#if defined(__SSE2__)
  // Signed byte compares: bytes >= 0x80 are negative and fail both ranges.
  const __m128i below_zero = _mm_set1_epi8('0' - 1);
  const __m128i above_nine = _mm_set1_epi8('9' + 1);
  const __m128i below_a = _mm_set1_epi8('a' - 1);
  const __m128i above_f = _mm_set1_epi8('f' + 1);
  __m128i valid = _mm_set1_epi8(-1);
  for (size_t i = 0; i < 64; i += 16) {
    const __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + i));
    const __m128i digit =
        _mm_and_si128(_mm_cmpgt_epi8(block, below_zero), _mm_cmplt_epi8(block, above_nine));
    const __m128i letter =
        _mm_and_si128(_mm_cmpgt_epi8(block, below_a), _mm_cmplt_epi8(block, above_f));
    valid = _mm_and_si128(valid, _mm_or_si128(digit, letter));
  }
  return _mm_movemask_epi8(valid) == 0xffff;
#else
  static constexpr auto kLowerHex = [] {
    std::array<uint8_t, 256> table{};
    for (int c = '0'; c <= '9'; ++c) table[static_cast<size_t>(c)] = 1;
    for (int c = 'a'; c <= 'f'; ++c) table[static_cast<size_t>(c)] = 1;
    return table;
  }();
  unsigned valid = 1;
  for (char c : text) valid &= kLowerHex[static_cast<unsigned char>(c)];
  return valid != 0;
#endif
}

}  // namespace ferrite
