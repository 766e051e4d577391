#include "ferrite/core/canonical_encoder.h"

#include <openssl/evp.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <array>
#include <cassert>
#include <charconv>
#include <cstdlib>
#include <cstring>

namespace ferrite {
namespace {

// The SHA-256 implementation, fetched once (EVP_sha256() would be looked up
// again by every EVP_DigestInit_ex).
const EVP_MD* sha256_md() {
  static const EVP_MD* md = [] {
    EVP_MD* fetched = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    return fetched != nullptr ? static_cast<const EVP_MD*>(fetched) : EVP_sha256();
  }();
  return md;
}

}  // namespace

void CanonicalEncoder::reset() {
  used_ = 0;
  flushed_ = 0;
  has_element_.clear();
  after_key_ = false;
  discard();
}

void CanonicalEncoder::grow(size_t bytes) {
  const size_t wanted = used_ + bytes;
  // Within a reservation, grow by doubling up to a step of 64 KiB, then a
  // step at a time: resize() zeroes what it adds, and doubling all the way
  // would touch up to twice the text's pages (a 5.75 MB plan text zeroed
  // 8.4 MB). Pages past the text are never touched.
  constexpr size_t kReservedStep = size_t{64} * 1024;
  if (wanted <= buffer_.capacity()) {
    const size_t size = buffer_.size();
    const size_t next = std::max({wanted, std::min(2 * size, size + kReservedStep), size_t{256}});
    buffer_.resize(std::min(buffer_.capacity(), next));
    return;
  }
  buffer_.resize(std::max({wanted, 2 * buffer_.size(), size_t{256}}));
}

void CanonicalEncoder::reserve_pending(size_t bytes) {
  if (buffer_.capacity() < bytes) buffer_.reserve(bytes);
}

void CanonicalEncoder::begin_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!has_element_.empty()) {
    if (has_element_.back() != 0) raw(',');
    has_element_.back() = 1;
  }
}

void CanonicalEncoder::begin_object() {
  begin_value();
  raw('{');
  has_element_.push_back(0);
}

void CanonicalEncoder::end_object() {
  assert(!has_element_.empty() && !after_key_);
  has_element_.pop_back();
  raw('}');
}

void CanonicalEncoder::begin_array() {
  begin_value();
  raw('[');
  has_element_.push_back(0);
}

void CanonicalEncoder::end_array() {
  assert(!has_element_.empty() && !after_key_);
  has_element_.pop_back();
  raw(']');
}

void CanonicalEncoder::key_text(std::string_view name) {
  const char before = begin_member() ? ',' : 0;
  quoted(name, before, ':');
}

namespace {

bool needs_escape_or_check(unsigned char c) {
  return c < 0x20 || c == '"' || c == '\\' || c >= 0x80;
}

// Whether any of eight bytes needs an escape or a UTF-8 check (SWAR: a lane
// is flagged when it is below 0x20, equals '"' or '\\', or has its high bit set).
bool any_flagged8(const char* at) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHigh = 0x8080808080808080ull;
  auto has_zero = [](uint64_t v) { return (v - kOnes) & ~v & kHigh; };
  uint64_t v;
  std::memcpy(&v, at, 8);
  const uint64_t below_space = (v - kOnes * 0x20) & ~v & kHigh;
  const uint64_t special = has_zero(v ^ (kOnes * '"')) | has_zero(v ^ (kOnes * '\\'));
  return (below_space | special | (v & kHigh)) != 0;
}

size_t first_flagged_from(std::string_view text, size_t i) {
  while (i < text.size() && !needs_escape_or_check(static_cast<unsigned char>(text[i]))) ++i;
  return i;
}

#if defined(__SSE2__)
// Bit k set when byte k of the sixteen at `at` needs an escape or a UTF-8
// check. A signed compare with 0x20 flags both the control bytes and every
// byte with its high bit set (negative as int8).
unsigned flagged16(const char* at) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
  const __m128i flagged =
      _mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
                   _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
  return static_cast<unsigned>(_mm_movemask_epi8(flagged));
}
#endif

// Length of the prefix of `text` with no byte that needs an escape or a
// UTF-8 check: below 0x20, '"', '\\', or 0x80 and above. Blocks that would
// run past the end are read overlapping the last full block instead (never
// past the string).
size_t clean_prefix(std::string_view text) {
  const char* data = text.data();
  const size_t size = text.size();
#if defined(__SSE2__)
  if (size >= 16) {
    size_t i = 0;
    for (; i + 16 <= size; i += 16) {
      if (const unsigned mask = flagged16(data + i); mask != 0) {
        return i + static_cast<size_t>(__builtin_ctz(mask));
      }
    }
    if (i == size) return size;
    // Bytes before i are clean, so the first flagged bit is at or past i.
    if (const unsigned mask = flagged16(data + size - 16); mask != 0) {
      return size - 16 + static_cast<size_t>(__builtin_ctz(mask));
    }
    return size;
  }
#endif
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    if (any_flagged8(data + i)) return first_flagged_from(text, i);
  }
  if (i == size) return size;
  if (size >= 8) {
    return any_flagged8(data + size - 8) ? first_flagged_from(text, i) : size;
  }
  return first_flagged_from(text, i);
}

}  // namespace

void CanonicalEncoder::quoted(std::string_view text, char before, char after) {
  const size_t clean = clean_prefix(text);
  if (clean == text.size()) {
    // The common case: one reservation, one copy.
    const size_t extra = 2 + (before != 0 ? 1 : 0) + (after != 0 ? 1 : 0);
    char* out = room(text.size() + extra);
    if (before != 0) *out++ = before;
    *out++ = '"';
    // An empty view may have a null data pointer, which memcpy must not get.
    if (!text.empty()) std::memcpy(out, text.data(), text.size());
    out += text.size();
    *out++ = '"';
    if (after != 0) *out = after;
    written();
    return;
  }
  if (before != 0) raw(before);
  const std::string_view rest = text.substr(clean);
  const bool ascii = std::none_of(rest.begin(), rest.end(),
                                  [](char c) { return static_cast<unsigned char>(c) >= 0x80; });
  if (!ascii) {
    // Non-ASCII: nlohmann's own serializer decides validity and replacement,
    // so the bytes are dump()'s by construction.
    const nlohmann::json value = std::string(text);
    raw(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  } else {
    static constexpr char kHex[] = "0123456789abcdef";
    raw('"');
    raw(text.substr(0, clean));
    for (size_t i = clean; i < text.size(); ++i) {
      const unsigned char c = static_cast<unsigned char>(text[i]);
      switch (c) {
        case '"': raw("\\\""); break;
        case '\\': raw("\\\\"); break;
        case '\b': raw("\\b"); break;
        case '\f': raw("\\f"); break;
        case '\n': raw("\\n"); break;
        case '\r': raw("\\r"); break;
        case '\t': raw("\\t"); break;
        default:
          if (c < 0x20) {
            const char escape[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xf]};
            raw(std::string_view(escape, sizeof escape));
          } else {
            raw(static_cast<char>(c));
          }
      }
    }
    raw('"');
  }
  if (after != 0) raw(after);
}

void CanonicalEncoder::string(std::string_view text) {
  begin_value();
  quoted(text);
}

void CanonicalEncoder::unsigned_integer(uint64_t value) {
  begin_value();
  std::array<char, 24> digits{};
  auto end = std::to_chars(digits.data(), digits.data() + digits.size(), value).ptr;
  raw(std::string_view(digits.data(), static_cast<size_t>(end - digits.data())));
}

void CanonicalEncoder::integer(int64_t value) {
  begin_value();
  std::array<char, 24> digits{};
  auto end = std::to_chars(digits.data(), digits.data() + digits.size(), value).ptr;
  raw(std::string_view(digits.data(), static_cast<size_t>(end - digits.data())));
}

void CanonicalEncoder::boolean(bool value) {
  begin_value();
  raw(value ? std::string_view("true") : std::string_view("false"));
}

void CanonicalEncoder::null() {
  begin_value();
  raw(std::string_view("null"));
}

void CanonicalEncoder::canonical_value(std::string_view encoded) {
  begin_value();
  // A long text (a program's or a weight schema's) is copied a flush's worth
  // at a time, so a hashing encoder's buffer stays small.
  while (encoded.size() > kFlushBytes) {
    raw(encoded.substr(0, kFlushBytes));
    encoded.remove_prefix(kFlushBytes);
  }
  // raw() copies with memcpy, which must not get an empty view's null pointer.
  if (!encoded.empty()) raw(encoded);
}

void CanonicalEncoder::json_without_member(const nlohmann::json& value, std::string_view omitted) {
  if (!value.is_object()) {
    json(value);
    return;
  }
  begin_object();
  for (const auto& [name, member] : value.get_ref<const nlohmann::json::object_t&>()) {
    if (name == omitted) continue;
    key_text(name);
    json(member);
  }
  end_object();
}

void CanonicalEncoder::json(const nlohmann::json& value) {
  using value_t = nlohmann::json::value_t;
  switch (value.type()) {
    case value_t::object: {
      begin_object();
      const auto& members = value.get_ref<const nlohmann::json::object_t&>();
      for (const auto& [name, member] : members) {
        key_text(name);
        json(member);
      }
      end_object();
      return;
    }
    case value_t::array: {
      begin_array();
      for (const auto& element : value.get_ref<const nlohmann::json::array_t&>()) json(element);
      end_array();
      return;
    }
    case value_t::string:
      string(value.get_ref<const std::string&>());
      return;
    case value_t::number_unsigned:
      unsigned_integer(value.get<uint64_t>());
      return;
    case value_t::number_integer:
      integer(value.get<int64_t>());
      return;
    case value_t::boolean:
      boolean(value.get<bool>());
      return;
    case value_t::null:
      null();
      return;
    default:
      // Floats, binary, discarded: not canonical; written exactly as dump() does.
      begin_value();
      raw(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      return;
  }
}

CanonicalSha256::CanonicalSha256() : context_(EVP_MD_CTX_new()) {
  if (context_ == nullptr) std::abort();  // allocation failure: nothing to recover
}

CanonicalSha256::~CanonicalSha256() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(context_)); }

void CanonicalSha256::flush() {
  auto* ctx = static_cast<EVP_MD_CTX*>(context_);
  if (!started_) {
    EVP_DigestInit_ex(ctx, sha256_md(), nullptr);
    started_ = true;
  }
  const std::string_view bytes = pending();
  EVP_DigestUpdate(ctx, bytes.data(), bytes.size());
  consume_pending();
}

void CanonicalSha256::update(std::string_view bytes) {
  flush();
  if (!started_) {
    EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(context_), sha256_md(), nullptr);
    started_ = true;
  }
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(context_), bytes.data(), bytes.size());
  flushed_ += bytes.size();
}

std::string CanonicalSha256::hex() {
  std::string out;
  append_hex(out);
  return out;
}

void CanonicalSha256::append_hex(std::string& out) {
  flush();  // also starts the digest of an empty document
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(context_), digest.data(), &length);
  started_ = false;
  reset();
  static constexpr char kHex[] = "0123456789abcdef";
  // Sized once and written in place (a push_back per digit checked the
  // capacity 64 times).
  const size_t at_begin = out.size();
  out.resize(at_begin + size_t{length} * 2);
  char* at = out.data() + at_begin;
  for (unsigned int i = 0; i < length; ++i) {
    *at++ = kHex[digest[i] >> 4];
    *at++ = kHex[digest[i] & 0xf];
  }
}

}  // namespace ferrite
