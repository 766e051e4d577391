// ferrite/core/canonical_encoder.h — the canonical JSON encoding, streamed.
//
// Contract: a CanonicalEncoder writes exactly the bytes `canonical_json(j)`
// (fingerprint.h) would produce for the document its calls describe, without
// building that document: compact JSON, no whitespace, strings escaped as
// nlohmann's dump(-1, ' ', false, replace) escapes them (", \, \b \f \n \r \t,
// other bytes below 0x20 as \u00xx in lowercase hex, 0x7f and valid UTF-8
// verbatim, invalid UTF-8 replaced by U+FFFD), integers in decimal. The CALLER
// keeps the canonical key order: keys of one object must be given in byte-wise
// ascending order (tests compare each hand-written encoding with the
// document it replaces); `json(j)` streams a whole nlohmann
// tree, whose keys are already sorted. Floating-point numbers are not part of
// the canonical form; `json(j)` still writes them as dump() would.
//
// `CanonicalSha256` is an encoder whose bytes go straight into one reused
// OpenSSL SHA-256 context; `hex()` ends the document and returns the digest,
// which equals sha256_hex(canonical_json(j)) for the same document. An encoder
// describes one document at a time; `reset()` (or hex()) starts a new one.
//
// Example:
//   CanonicalSha256 hash;
//   hash.begin_object();
//   hash.key("a"); hash.unsigned_integer(2);
//   hash.key("b"); hash.string("x");
//   hash.end_object();
//   std::string fp = hash.hex();  // == canonical_fingerprint({{"a",2},{"b","x"}})
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <absl/container/inlined_vector.h>
#include <nlohmann/json.hpp>

namespace ferrite {

template <class Tag>
class Identity;  // core/identity.h

// A member name spelled in the source: a string literal whose bytes JSON
// writes as they are (none below 0x20, no `"`, no `\`, ASCII only), checked
// when the call is compiled (a literal that needs escaping does not
// compile). The encoder writes it with no escape scan.
class LiteralKey {
 public:
  template <size_t N>
  consteval LiteralKey(const char (&text)[N])  // NOLINT(google-explicit-constructor)
      : text_(text, N - 1) {
    for (size_t i = 0; i + 1 < N; ++i) {
      const unsigned char c = static_cast<unsigned char>(text[i]);
      if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) {
        throw "a literal key must need no escaping in JSON";
      }
    }
  }
  std::string_view text() const { return text_; }

 private:
  std::string_view text_;
};

class CanonicalEncoder {
 public:
  CanonicalEncoder() = default;
  virtual ~CanonicalEncoder() = default;
  CanonicalEncoder(const CanonicalEncoder&) = delete;
  CanonicalEncoder& operator=(const CanonicalEncoder&) = delete;

  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  // The next member's key; the value call that follows is its value.
  // `key` takes a literal (LiteralKey), `key_text` a name known only at run
  // time (an identity, a document's key), escaped as any string.
  void key(LiteralKey name) { verbatim_key(name.text()); }
  // An identity as a member name (an attribute id, a component id): written
  // without an escape scan, as `string(const Identity&)` is.
  template <class Tag>
  void key(const Identity<Tag>& name) {
    verbatim_key(name.view());
  }
  void key_text(std::string_view name);
  void string(std::string_view text);
  // An identity's text, written without an escape scan: identities hold
  // portable bytes only (letters, digits, `. _ - : /`; validate_identity) or,
  // moved from, the empty text.
  template <class Tag>
  void string(const Identity<Tag>& id) {
    begin_value();
    verbatim_quoted(id.view());
  }
  // An array of identities (any range of Identity<Tag>), each as its text,
  // in the range's order: how every id list and id set is encoded.
  template <class Ids>
  void id_array(const Ids& ids) {
    begin_array();
    for (const auto& id : ids) string(id);
    end_array();
  }
  void unsigned_integer(uint64_t value);
  void integer(int64_t value);
  void boolean(bool value);
  void null();
  // A value already in canonical form (bytes an encoder wrote), as it is.
  void canonical_value(std::string_view encoded);
  // A whole nlohmann document or subtree, canonically.
  void json(const nlohmann::json& value);
  // `json(value)` for an object, leaving out its top-level member `omitted`.
  void json_without_member(const nlohmann::json& value, std::string_view omitted);

  // Bytes written since the last reset (including any already flushed).
  uint64_t size() const { return flushed_ + used_; }
  void reset();

 protected:
  // Called when the pending bytes reach the flush threshold (kFlushBytes
  // unless a subclass keeps everything); default keeps everything.
  virtual void flush() {}
  // Called by reset(): forget any bytes already flushed.
  virtual void discard() {}

  // The bytes written and not yet flushed.
  std::string_view pending() const { return {buffer_.data(), used_}; }
  // Marks the pending bytes flushed (a flush() override calls it).
  void consume_pending() {
    flushed_ += used_;
    used_ = 0;
  }
  // For an encoder that keeps its whole text: flush() is never called.
  void keep_everything() { flush_at_ = SIZE_MAX; }
  // Room for `bytes` more bytes before the buffer has to grow.
  void reserve_pending(size_t bytes);
  // The buffer cut to the pending bytes, as a string (for a text encoder).
  std::string& pending_string() {
    buffer_.resize(used_);
    return buffer_;
  }

  uint64_t flushed_ = 0;
  static constexpr size_t kFlushBytes = 8192;

 private:
  void begin_value();
  // Marks the open object as having a member and the next value as the
  // member's; true when a comma must come first.
  bool begin_member() {
    assert(!has_element_.empty() && !after_key_);
    const bool comma = has_element_.back() != 0;
    has_element_.back() = 1;
    after_key_ = true;
    return comma;
  }
  // Hazard: `room` hands out bytes past the pending ones, which the caller
  // must write all of before anything else touches the buffer.
  char* room(size_t bytes) {
    if (buffer_.size() - used_ < bytes) grow(bytes);
    char* at = buffer_.data() + used_;
    used_ += bytes;
    return at;
  }
  void grow(size_t bytes);
  void written() {
    if (used_ >= flush_at_) flush();
  }
  void raw(std::string_view bytes) {
    std::memcpy(room(bytes.size()), bytes.data(), bytes.size());
    written();
  }
  void raw(char c) {
    *room(1) = c;
    written();
  }
  // `,"text":` (the comma only when the open object has a member already)
  // for a member name that needs no escaping.
  void verbatim_key(std::string_view text) {
    const bool comma = begin_member();
    char* out = room(text.size() + 3 + (comma ? 1 : 0));
    if (comma) *out++ = ',';
    *out++ = '"';
    if (!text.empty()) std::memcpy(out, text.data(), text.size());
    out += text.size();
    *out++ = '"';
    *out = ':';
    written();
  }
  // `"text"` for text that needs no escaping.
  void verbatim_quoted(std::string_view text) {
    char* out = room(text.size() + 2);
    *out++ = '"';
    if (!text.empty()) std::memcpy(out, text.data(), text.size());
    out[text.size()] = '"';
    written();
  }
  // `"text"`, preceded by `before` and followed by `after` when they are not
  // NUL (the comma before a member, the colon after a key).
  void quoted(std::string_view text, char before = 0, char after = 0);

  // buffer_[0, used_) holds the pending bytes; the rest of buffer_.size() is
  // room already allocated (its contents are meaningless).
  std::string buffer_;
  size_t used_ = 0;
  size_t flush_at_ = kFlushBytes;
  // Per open container: has it a member/element yet? Inline up to a depth
  // no canonical document here reaches, so a fresh encoder (a short text
  // encoded once) allocates nothing for it.
  absl::InlinedVector<uint8_t, 32> has_element_;
  bool after_key_ = false;
};

// Collects the encoding in memory: `text()` is canonical_json's output.
class CanonicalText : public CanonicalEncoder {
 public:
  CanonicalText() { keep_everything(); }
  const std::string& text() { return pending_string(); }
  // Room for `bytes` of text before the buffer has to grow. A large text
  // that grows by doubling copies itself about once more and touches fresh
  // memory for every copy; an estimate (too large costs only address space
  // the text never writes) avoids both.
  void reserve(size_t bytes) { reserve_pending(bytes); }
  // Moves the text out; the encoder is then empty (reset() before reuse).
  std::string release() {
    std::string text = std::move(pending_string());
    reset();
    return text;
  }
};

// Streams the encoding into SHA-256 (one OpenSSL context per object, reused).
class CanonicalSha256 : public CanonicalEncoder {
 public:
  CanonicalSha256();
  ~CanonicalSha256() override;
  // Lowercase hex SHA-256 of the bytes written; resets for the next document.
  std::string hex();
  // The same 64 digits appended to `out` (a caller's reused buffer: no
  // allocation once it has room); resets as hex() does.
  void append_hex(std::string& out);
  // Hashes `bytes` as they are, outside any JSON structure (sha256_hex).
  void update(std::string_view bytes);

 protected:
  void flush() override;
  void discard() override { started_ = false; }

 private:
  void* context_;  // EVP_MD_CTX*
  bool started_ = false;
};

}  // namespace ferrite
