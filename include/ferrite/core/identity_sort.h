// ferrite/core/identity_sort.h — sorting many items by an identity.
//
// Contract: `sort_by_identity(items, id_of)` leaves `items` in the order of
// `id_of(item)` (an Identity: byte-wise order of the texts), as
// std::sort(items, by id) would; items with equal identities end up
// adjacent in an unspecified order among themselves (as std::sort's).
// Why not std::sort: an identity compare reads both interned texts, one
// cache miss each once the texts outgrow the cache, at every one of the
// sort's n·log n comparisons. Here each text is read once: its first 32
// bytes become four big-endian words (zero-padded; identities hold no NUL
// byte, so a text that is a prefix of another still sorts first), records
// of words and positions are sorted, and only records whose 32 bytes tie
// compare the whole texts. Then the items are moved into that order.
// Costs: 40 bytes of scratch per item and one move of each item.
//
// Example:
//   std::vector<std::pair<ResourceId, Profile>> profiles = ...;
//   sort_by_identity(profiles, [](const auto& p) -> const ResourceId& { return p.first; });
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

#include "ferrite/core/identity.h"

namespace ferrite {

namespace identity_sort_internal {
// The first 32 bytes of `text` as four words whose unsigned order is the
// bytes' order.
inline std::array<uint64_t, 4> leading_words(std::string_view text) {
  unsigned char bytes[32] = {};
  std::memcpy(bytes, text.data(), std::min<size_t>(text.size(), sizeof(bytes)));
  std::array<uint64_t, 4> words{};
  for (size_t w = 0; w < words.size(); ++w) {
    uint64_t word = 0;
    for (size_t b = 0; b < 8; ++b) word = (word << 8) | bytes[8 * w + b];
    words[w] = word;
  }
  return words;
}
}  // namespace identity_sort_internal

template <class T, class IdOf>
void sort_by_identity(std::vector<T>& items, IdOf id_of) {
  struct Keyed {
    std::array<uint64_t, 4> words;
    size_t position;
  };
  std::vector<Keyed> keyed;
  keyed.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    keyed.push_back(Keyed{identity_sort_internal::leading_words(id_of(items[i]).view()), i});
  }
  std::sort(keyed.begin(), keyed.end(), [&](const Keyed& a, const Keyed& b) {
    if (a.words != b.words) return a.words < b.words;
    return id_of(items[a.position]) < id_of(items[b.position]);
  });
  std::vector<T> sorted;
  sorted.reserve(items.size());
  for (const Keyed& k : keyed) sorted.push_back(std::move(items[k.position]));
  items = std::move(sorted);
}

}  // namespace ferrite
