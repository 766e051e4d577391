// ferrite/core/identity.h — stable, portable identities.
//
// Contract: an `Identity<Tag>` is a validated string: 1..=160 bytes, each byte
// ASCII alphanumeric or one of `. _ - : /`. Invalid values are unrepresentable:
// the only ways to get one are `create` (returns an InvalidIdentity error that
// names the kind and the reason) and `literal` (for compile-time constants;
// terminates on invalid input, so never call it on data from a file).
// Identities order by plain byte-wise comparison, which fixes every iteration
// order that reaches a hash or an output file. They are interned: a copy
// shares one reference-counted text (no allocation), equality compares
// pointers, and a moved-from identity holds the empty text. `str()` is a view
// of the interned bytes (NUL-terminated, `c_str()`), valid while the
// identity, or any copy of it, lives.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(NodeId node, NodeId::create("layer.0.attn"));
//   auto op = OperationId::literal("operation.rms_norm");
#pragma once

#include <atomic>
#include <compare>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "ferrite/core/status.h"

namespace ferrite {

inline constexpr size_t kMaxIdentityBytes = 160;

// Validates `value` against the identity rules; `kind` names the identity in
// the error ("node", "operation attribute", ...).
Result<void> validate_identity(std::string_view kind, std::string_view value);

// Interned identity texts (identity.cc): each distinct text exists once while
// any identity holds it, counted by reference, so copying an identity
// allocates nothing and two identities are equal exactly when they hold the
// same text. The last identity to let go frees it (under its shard's lock,
// so a concurrent intern of the same text either finds it alive or makes it
// anew). Thread-safe. HAZARDS: the counts of texts many threads copy at once
// (a provider id, an arena's resource id) are contended atomics — a net gain
// on two compile threads (docs/performance.md, step 16), to be measured again
// on many cores; and the shards' mutexes are process state, so a process
// that forks while another thread interns leaves the child's shard locked
// (Ferrite never forks).
namespace identity_internal {
// Allocated with its bytes inline after it, then a NUL (make_interned_text
// in identity.cc): one allocation per distinct text, and an order compare
// reads the entry it already holds — one cache miss per side at every level
// of an ordered map's search.
struct InternedText {
  mutable std::atomic<uint64_t> references{1};
  uint32_t shard = 0;
  uint32_t size = 0;      // of the text, whose bytes follow this struct
  bool immortal = false;  // the empty text of moved-from identities

  std::string_view inline_view() const noexcept {
    return {reinterpret_cast<const char*>(this) + sizeof(InternedText), size};
  }
};
// `text` interned, with one reference taken for the caller.
const InternedText* intern(std::string_view text);
// The immortal empty text a moved-from identity holds.
const InternedText* empty_text() noexcept;
void release_slow(const InternedText* text) noexcept;

inline void retain(const InternedText* text) noexcept {
  if (!text->immortal) text->references.fetch_add(1, std::memory_order_relaxed);
}
inline void release(const InternedText* text) noexcept {
  if (text->immortal) return;
  uint64_t count = text->references.load(std::memory_order_relaxed);
  while (count > 1) {
    if (text->references.compare_exchange_weak(count, count - 1, std::memory_order_release,
                                               std::memory_order_relaxed)) {
      return;
    }
  }
  release_slow(text);  // possibly the last reference: decided under the lock
}
}  // namespace identity_internal

template <class Tag>
class Identity {
 public:
  static Result<Identity> create(std::string_view value) {
    FERRITE_RETURN_IF_ERROR(validate_identity(Tag::kKind, value));
    return Identity(value);
  }
  // For string literals in code and tests only: aborts on an invalid value.
  static Identity literal(std::string_view value) {
    auto result = create(value);
    if (!result) abort_invalid_literal(result.error());
    return std::move(*result);
  }
  static constexpr std::string_view kind() { return Tag::kKind; }

  Identity(const Identity& other) noexcept : text_(other.text_) {
    identity_internal::retain(text_);
  }
  // A moved-from identity holds the empty text (as a moved-from string would).
  Identity(Identity&& other) noexcept
      : text_(std::exchange(other.text_, identity_internal::empty_text())) {}
  Identity& operator=(const Identity& other) noexcept {
    identity_internal::retain(other.text_);
    identity_internal::release(text_);
    text_ = other.text_;
    return *this;
  }
  Identity& operator=(Identity&& other) noexcept {
    if (this != &other) {
      identity_internal::release(text_);
      text_ = std::exchange(other.text_, identity_internal::empty_text());
    }
    return *this;
  }
  ~Identity() { identity_internal::release(text_); }

  // The text, a view of the interned bytes (see the contract above).
  std::string_view str() const noexcept { return text_->inline_view(); }
  std::string_view view() const noexcept { return text_->inline_view(); }
  // The same bytes, NUL-terminated.
  const char* c_str() const noexcept { return text_->inline_view().data(); }

  // Interned: equal texts are one object, so equality is a pointer compare;
  // order is the texts' byte-wise order.
  friend bool operator==(const Identity& a, const Identity& b) { return a.text_ == b.text_; }
  friend std::strong_ordering operator<=>(const Identity& a, const Identity& b) {
    if (a.text_ == b.text_) return std::strong_ordering::equal;
    return a.text_->inline_view().compare(b.text_->inline_view()) < 0
               ? std::strong_ordering::less
               : std::strong_ordering::greater;
  }

  // A hash of the interned text's address, in O(1) whatever the text's
  // length: equal identities hash equal (they hold one text). For look-up
  // tables only (IdentityAddressHash): addresses differ between runs, so a
  // table keyed by it must never be iterated into anything hashed, written
  // or shown. Valid while the table holds its keys (an identity key keeps
  // its text alive).
  size_t address_hash() const noexcept {
    uint64_t x = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(text_));
    x ^= x >> 33;  // a 64-bit finalizer: allocation addresses share low bits
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return static_cast<size_t>(x);
  }

 private:
  explicit Identity(std::string_view value) : text_(identity_internal::intern(value)) {}
  const identity_internal::InternedText* text_;  // never null
};

[[noreturn]] void abort_invalid_literal(const Status& status);

// The hasher of look-up tables keyed by identities:
// `IdentityHashMap<NodeId, size_t>` (identity_hash_map.h). Named, not a
// std::hash specialization, so that every such table says at its
// declaration that its order is the addresses' (never iterate it into output).
struct IdentityAddressHash {
  template <class Tag>
  size_t operator()(const Identity<Tag>& id) const noexcept {
    return id.address_hash();
  }
};

#define FERRITE_DEFINE_IDENTITY(Name, kind_text)                 \
  struct Name##Tag {                                             \
    static constexpr std::string_view kKind = kind_text;         \
  };                                                             \
  using Name = Identity<Name##Tag>

FERRITE_DEFINE_IDENTITY(CapabilityId, "capability");
FERRITE_DEFINE_IDENTITY(DeviceId, "device");
FERRITE_DEFINE_IDENTITY(ModelFamilyId, "model family");
FERRITE_DEFINE_IDENTITY(NodeId, "node");
FERRITE_DEFINE_IDENTITY(OperationId, "operation");
FERRITE_DEFINE_IDENTITY(PlanId, "plan");
FERRITE_DEFINE_IDENTITY(ProgramValueId, "program value");
FERRITE_DEFINE_IDENTITY(ProviderId, "provider");
FERRITE_DEFINE_IDENTITY(QuantizationFormatId, "quantization format");
FERRITE_DEFINE_IDENTITY(ResourceId, "resource");
FERRITE_DEFINE_IDENTITY(StateId, "state");
FERRITE_DEFINE_IDENTITY(TensorId, "tensor");
FERRITE_DEFINE_IDENTITY(WeightId, "weight");
FERRITE_DEFINE_IDENTITY(WeightFormatId, "weight format");
FERRITE_DEFINE_IDENTITY(WeightLayoutId, "weight layout");
FERRITE_DEFINE_IDENTITY(WeightMaterializerId, "weight materializer");
FERRITE_DEFINE_IDENTITY(AttributeId, "operation attribute");
FERRITE_DEFINE_IDENTITY(PolicyId, "runtime policy");

// "{a, b, c}": the identities of an ordered range in its order, for messages.
template <class Range>
std::string identity_list_text(const Range& ids) {
  std::string text = "{";
  for (const auto& id : ids) {
    if (text.size() > 1) text += ", ";
    text += id.str();
  }
  return text + "}";
}

}  // namespace ferrite
