// ferrite/core/identity_hash_map.h — look-up tables keyed by identities.
//
// Contract: `IdentityHashMap<Key, Value>` and `IdentityHashSet<Key>` are
// open-addressing tables (Abseil's flat_hash_map/set) hashed by the address
// of an identity's interned text (Identity::address_hash), so a look-up is
// one hash of a pointer and, usually, one cache line of the table: no string
// is read, no node is chased. Equality is the identities' pointer compare.
// HAZARDS: the iteration order follows addresses, which differ between runs
// (and Abseil varies it per table): never iterate one into anything hashed,
// written or shown — collect and sort instead, or keep an ordered container.
// Elements move when the table grows: pointers and iterators into it are
// valid only until the next insertion (unlike std::unordered_map's).
//
// Example:
//   IdentityHashMap<NodeId, size_t> index;
//   index.reserve(nodes.size());
//   for (size_t i = 0; i < nodes.size(); ++i) index.emplace(nodes[i].id, i);
//   if (auto it = index.find(id); it != index.end()) use(it->second);
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include "ferrite/core/identity.h"

namespace ferrite {

template <class Key, class Value>
using IdentityHashMap = absl::flat_hash_map<Key, Value, IdentityAddressHash>;

template <class Key>
using IdentityHashSet = absl::flat_hash_set<Key, IdentityAddressHash>;

}  // namespace ferrite
