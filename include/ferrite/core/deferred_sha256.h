// ferrite/core/deferred_sha256.h — a SHA-256 whose bytes are known now and
// whose digest is computed the first time someone reads it.
//
// Contract: a `DeferredSha256` is either empty (hex() is ""), a digest given
// as text (any text: `is_canonical_sha256()` checks it), or a digest of the
// bytes a `Source` writes. A Source's digest is computed at most once, by the
// first hex() call from any thread (run_once, core/once.h), and the Source then
// releases what it held to write them (`release()`); copies share the one
// Source, so they share the one computation. Equality: two copies of one
// Source are equal without hashing anything (their bytes are the same bytes);
// otherwise the digests' texts are compared, computing any not yet computed.
// A Source's digest is lowercase-hex SHA-256 by construction, so
// `is_canonical_sha256()` holds for it without computing it.
//
// Why: the compiler resolves most nodes several times (probe, alignment and
// packing rounds) and keeps only the last resolution; each resolution names
// its estimator input by fingerprint, and the estimator echoes it back. A
// fingerprint carried as a DeferredSha256 is hashed only if a plan, a
// workspace id or a reader needs its text — once per chosen provider rather
// than once per candidate per round — while the echo check (the estimator
// claims the core's fingerprint) stays exact.
//
// Hazard: a Source must write the same bytes whenever it is asked (it is
// immutable once shared), and must not read anything that can change or die
// before the digest is first read: it owns or shares what it writes.
//
// Example:
//   class Greeting : public DeferredSha256::Source {
//     void write(CanonicalSha256& out) const override { out.update("hello"); }
//   };
//   DeferredSha256 digest = DeferredSha256::of(std::make_shared<Greeting>());
//   DeferredSha256 copy = digest;
//   bool same = copy == digest;          // true, nothing hashed
//   const std::string& hex = digest.hex();  // sha256_hex("hello"), computed now
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "ferrite/core/canonical_encoder.h"
#include "ferrite/core/once.h"

namespace ferrite {

class DeferredSha256 {
 public:
  class Source {
   public:
    Source() = default;
    virtual ~Source() = default;
    Source(const Source&) = delete;
    Source& operator=(const Source&) = delete;

   protected:
    // Writes the covered bytes into `out`, a digest just started (raw bytes
    // through out.update(), or canonical structure; the two may be mixed).
    virtual void write(CanonicalSha256& out) const = 0;
    // Called once, after the digest is computed: drop what write() needed.
    virtual void release() {}

   private:
    friend class DeferredSha256;
    OnceFlag once_;  // done once hex_ holds the digest
    bool given_ = false;  // hex_ was given as text, not computed
    std::string hex_;
  };

  DeferredSha256() = default;
  // A digest already known as text (checked only by is_canonical_sha256()).
  DeferredSha256(std::string hex);  // NOLINT(google-explicit-constructor)
  DeferredSha256(const char* hex) : DeferredSha256(std::string(hex)) {}  // NOLINT
  static DeferredSha256 of(std::shared_ptr<Source> source);

  // The lowercase-hex digest, computed now if it was not yet; "" when empty.
  const std::string& hex() const;
  // True when hex() will not hash anything (empty, given, or computed).
  bool computed() const;
  // A Source's digest is canonical by construction; given text is checked.
  bool is_canonical_sha256() const;

  friend bool operator==(const DeferredSha256& a, const DeferredSha256& b);
  friend bool operator==(const DeferredSha256& a, std::string_view b) { return a.hex() == b; }

 private:
  class Known;
  std::shared_ptr<Source> source_;
};

}  // namespace ferrite
