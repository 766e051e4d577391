#include "ferrite/core/canonical_encoder.h"

#include <openssl/evp.h>

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

bool needs_escape_or_check(unsigned char c) { return c < 0x20 || c == '"' || c == '\\' || c >= 0x80; }

}  // namespace

void CanonicalEncoder::reset() {
  buffer_.clear();
  flushed_ = 0;
  has_element_.clear();
  after_key_ = false;
  discard();
}

void CanonicalEncoder::begin_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!has_element_.empty()) {
    if (has_element_.back()) raw(',');
    has_element_.back() = true;
  }
}

void CanonicalEncoder::begin_object() {
  begin_value();
  raw('{');
  has_element_.push_back(false);
}

void CanonicalEncoder::end_object() {
  assert(!has_element_.empty() && !after_key_);
  has_element_.pop_back();
  raw('}');
}

void CanonicalEncoder::begin_array() {
  begin_value();
  raw('[');
  has_element_.push_back(false);
}

void CanonicalEncoder::end_array() {
  assert(!has_element_.empty() && !after_key_);
  has_element_.pop_back();
  raw(']');
}

void CanonicalEncoder::key(std::string_view name) {
  assert(!has_element_.empty() && !after_key_);
  if (has_element_.back()) raw(',');
  has_element_.back() = true;
  quoted(name);
  raw(':');
  after_key_ = true;
}

// Length of the prefix of `text` with no byte that needs an escape or a
// UTF-8 check. Eight bytes at a time (SWAR): a lane is flagged when it is
// below 0x20, equals '"' or '\\', or has its high bit set.
static size_t clean_prefix(std::string_view text) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHigh = 0x8080808080808080ull;
  auto has_zero = [](uint64_t v) { return (v - kOnes) & ~v & kHigh; };
  size_t i = 0;
  for (; i + 8 <= text.size(); i += 8) {
    uint64_t v;
    std::memcpy(&v, text.data() + i, 8);
    const uint64_t below_space = (v - kOnes * 0x20) & ~v & kHigh;
    const uint64_t special = has_zero(v ^ (kOnes * '"')) | has_zero(v ^ (kOnes * '\\'));
    if ((below_space | special | (v & kHigh)) != 0) break;
  }
  while (i < text.size() && !needs_escape_or_check(static_cast<unsigned char>(text[i]))) ++i;
  return i;
}

void CanonicalEncoder::quoted(std::string_view text) {
  const size_t clean = clean_prefix(text);
  if (clean == text.size()) {
    raw('"');
    raw(text);
    raw('"');
    return;
  }
  for (size_t i = clean; i < text.size(); ++i) {
    if (static_cast<unsigned char>(text[i]) >= 0x80) {
      // Non-ASCII: nlohmann's own serializer decides validity and replacement,
      // so the bytes are dump()'s by construction.
      raw(nlohmann::json(std::string(text))
              .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      return;
    }
  }
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
  raw(encoded);
}

void CanonicalEncoder::json_without_member(const nlohmann::json& value, std::string_view omitted) {
  if (!value.is_object()) {
    json(value);
    return;
  }
  begin_object();
  for (const auto& [name, member] : value.get_ref<const nlohmann::json::object_t&>()) {
    if (name == omitted) continue;
    key(name);
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
        key(name);
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
  EVP_DigestUpdate(ctx, buffer_.data(), buffer_.size());
  flushed_ += buffer_.size();
  buffer_.clear();
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
  flush();  // also starts the digest of an empty document
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(context_), digest.data(), &length);
  started_ = false;
  reset();
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(length * 2);
  for (unsigned int i = 0; i < length; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 0xf]);
  }
  return out;
}

}  // namespace ferrite
