#include "ferrite/core/identity.h"

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>

#include <absl/container/flat_hash_map.h>
#include <fmt/format.h>

#include "ferrite/core/text.h"

namespace ferrite {
namespace {

// 1 for each portable byte: ASCII letters and digits and `. _ - : /`.
constexpr auto kPortableBytes = [] {
  std::array<uint8_t, 256> table{};
  for (int c = 'a'; c <= 'z'; ++c) table[static_cast<size_t>(c)] = 1;
  for (int c = 'A'; c <= 'Z'; ++c) table[static_cast<size_t>(c)] = 1;
  for (int c = '0'; c <= '9'; ++c) table[static_cast<size_t>(c)] = 1;
  for (char c : {'.', '_', '-', ':', '/'}) table[static_cast<unsigned char>(c)] = 1;
  return table;
}();

// Why `value` is not a portable identity; nullopt when it is one. Every
// identity a compilation derives (resource ids of about a hundred bytes) is
// checked here: one table load per byte and one branch at the end.
std::optional<std::string> identity_problem(std::string_view value) {
  if (value.empty()) return "must not be empty";
  if (value.size() > kMaxIdentityBytes) return fmt::format("exceeds {} bytes", kMaxIdentityBytes);
  unsigned portable = 1;
  for (char c : value) portable &= kPortableBytes[static_cast<unsigned char>(c)];
  if (portable == 0) return "contains a non-portable character";
  return std::nullopt;
}

}  // namespace

Result<void> validate_identity(std::string_view kind, std::string_view value) {
  const std::optional<std::string> problem = identity_problem(value);
  if (!problem) return {};
  return make_error(ErrorCode::kInvalidIdentity, "{} identity `{}` {}", kind, shown_text(value),
                    *problem)
      .with_field("kind", kind)
      .with_field("reason", *problem);
}

namespace identity_internal {
namespace {

// An entry and its bytes in one allocation (InternedText's layout note).
struct InternedTextDelete {
  void operator()(InternedText* text) const noexcept {
    text->~InternedText();
    ::operator delete(static_cast<void*>(text));
  }
};
using InternedTextPtr = std::unique_ptr<InternedText, InternedTextDelete>;

InternedTextPtr make_interned_text(std::string_view text, uint32_t shard, bool immortal) {
  // Identities are at most kMaxIdentityBytes long: no overflow.
  void* memory = ::operator new(sizeof(InternedText) + text.size() + 1);
  auto* entry = new (memory) InternedText();
  entry->shard = shard;
  entry->size = static_cast<uint32_t>(text.size());
  entry->immortal = immortal;
  char* bytes = static_cast<char*>(memory) + sizeof(InternedText);
  if (!text.empty()) std::memcpy(bytes, text.data(), text.size());
  bytes[text.size()] = '\0';  // c_str()
  return InternedTextPtr(entry);
}

// Shards chosen by the text's hash, each an open-addressing map from a view
// of the text (the entry's inline bytes) to the entry that owns it; entries
// are separate allocations, so an entry's address never changes. Leaked:
// identities in statics may outlive every other static.
struct InternShard {
  std::mutex mutex;
  absl::flat_hash_map<std::string_view, InternedTextPtr, std::hash<std::string_view>> texts;
};
constexpr size_t kInternShards = 64;

std::array<InternShard, kInternShards>& intern_shards() {
  static auto* shards = new std::array<InternShard, kInternShards>();
  return *shards;
}

}  // namespace

const InternedText* intern(std::string_view text) {
  const size_t hash = std::hash<std::string_view>{}(text);
  const auto shard_index = static_cast<uint32_t>(hash % kInternShards);
  InternShard& shard = intern_shards()[shard_index];
  std::lock_guard<std::mutex> lock(shard.mutex);
  auto it = shard.texts.find(text);
  if (it != shard.texts.end()) {
    // Alive: an entry reaches zero references only under this lock, and is
    // erased there.
    it->second->references.fetch_add(1, std::memory_order_relaxed);
    return it->second.get();
  }
  InternedTextPtr entry = make_interned_text(text, shard_index, false);
  const InternedText* out = entry.get();
  shard.texts.emplace(out->inline_view(), std::move(entry));
  return out;
}

const InternedText* empty_text() noexcept {
  static const InternedText* empty = make_interned_text({}, 0, true).release();
  return empty;
}

void release_slow(const InternedText* text) noexcept {
  // The caller saw one reference (its own). Another thread can add one only
  // through intern(), under this lock; so the count is decided here.
  InternShard& shard = intern_shards()[text->shard];
  std::lock_guard<std::mutex> lock(shard.mutex);
  if (text->references.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    shard.texts.erase(text->inline_view());  // frees `text`; its key viewed `text`'s bytes
  }
}

}  // namespace identity_internal

void abort_invalid_literal(const Status& status) {
  std::fprintf(stderr, "ferrite: invalid identity literal: %s\n", status.to_string().c_str());
  std::abort();
}

}  // namespace ferrite
