// ferrite/program/value_table.h — per-value data of a program, by rank,
// kept apart from the program.
//
// Contract: a `ValueTable<T>` holds at most one T per value a program
// defines, at the value's ModelProgram::ValueInfo::rank (its position in
// values_in_id_order()). Unlike ValueRankTable (a pass's index, which refers
// to the program), it shares only the program's id order — which copies of
// the program share too — so it may be kept, copied and moved after the
// program is gone: the compiler's results hold their per-value storages in
// one. It is one vector: built, walked and destroyed in order, with no node
// per value to allocate, chase or free.
//   - By rank (the hot path): a pass that has the program's ValueInfo reads
//     and writes slots with no look-up. `indexes(program)` says whether a
//     program's ranks address this table (its id order is this one, shared
//     or equal); a function handed a program and a table checks it once
//     before it reads by rank.
//   - By id with the program: `find(program, id)` takes the rank from the
//     program's hash of the id (one look-up, no search); the program must
//     be one this table indexes.
//   - By id alone: `find`, `insert_or_assign` and `erase` search the sorted
//     ids (log n compares), for cold paths and tests. Ids the program does
//     not define have no slot: `find` answers null, `insert_or_assign`
//     refuses them.
//   - `for_each` walks the filled slots in id order; two tables are equal
//     when they index the same ids and hold equal entries.
//
// Example:
//   ValueTable<ResolvedValueStorage> storages(program);
//   storages.set_at_rank(program.find_value(id)->rank, std::move(storage));
//   if (const ResolvedValueStorage* s = storages.find(id)) use(*s);   // a search
//   if (storages.indexes(program)) use(storages.at_rank(info->rank));  // no search
//   if (const auto* s = storages.find(program, id)) use(*s);   // one hash, no search
//   storages.for_each([](const ProgramValueId& id, const ResolvedValueStorage& s) { ... });
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "ferrite/program/model_program.h"

namespace ferrite {

template <class T>
class ValueTable {
 public:
  // A table of no program: no slots.
  ValueTable() = default;
  explicit ValueTable(const ModelProgram& program)
      : ids_(program.shared_values_in_id_order()), slots_(ids_ != nullptr ? ids_->size() : 0) {}

  // Whether `program`'s ValueInfo::rank addresses this table's slots.
  bool indexes(const ModelProgram& program) const {
    const std::vector<ProgramValueId>& theirs = program.values_in_id_order();
    return &theirs == ids_.get() || theirs == ids();
  }

  // How many slots (the program's values; 0 for a table of no program).
  size_t ranks() const { return slots_.size(); }
  // The entry at `rank`, or null when the slot is empty or past the values.
  const T* at_rank(size_t rank) const {
    return rank < slots_.size() && slots_[rank] ? &*slots_[rank] : nullptr;
  }
  // The entry of the value `info` describes (a ModelProgram answer of the
  // program this table indexes), or null when `info` is null or the slot is
  // empty: a look-up by position, no search.
  const T* at(const ModelProgram::ValueInfo* info) const {
    return info != nullptr ? at_rank(info->rank) : nullptr;
  }
  // Sets the slot at `rank`; false (nothing stored) past the values.
  bool set_at_rank(size_t rank, T value) {
    if (rank >= slots_.size()) return false;
    slots_[rank] = std::move(value);
    return true;
  }

  // The value's entry by the program's hash of `id`; null when the program
  // does not define it or its slot is empty. Precondition: indexes(program)
  // (checked once by the pass, not here).
  const T* find(const ModelProgram& program, const ProgramValueId& id) const {
    return at(program.find_value(id));
  }
  // The value's entry by a search of the sorted ids; null as above.
  const T* find(const ProgramValueId& id) const {
    const size_t rank = rank_of(id);
    return rank < slots_.size() ? at_rank(rank) : nullptr;
  }
  // Sets the value's slot; false (nothing stored) when the program does
  // not define `id`.
  bool insert_or_assign(const ProgramValueId& id, T value) {
    return set_at_rank(rank_of(id), std::move(value));
  }

  // Empties the value's slot; false when it was empty or the program does
  // not define `id`.
  bool erase(const ProgramValueId& id) {
    const size_t rank = rank_of(id);
    if (rank >= slots_.size() || !slots_[rank]) return false;
    slots_[rank].reset();
    return true;
  }

  // fn(id, entry) for every filled slot, in id order.
  template <class Fn>
  void for_each(Fn&& fn) const {
    for (size_t rank = 0; rank < slots_.size(); ++rank) {
      if (slots_[rank]) fn((*ids_)[rank], *slots_[rank]);
    }
  }
  // How many slots are filled.
  size_t size() const {
    const auto filled = [](const std::optional<T>& slot) { return slot.has_value(); };
    return static_cast<size_t>(std::count_if(slots_.begin(), slots_.end(), filled));
  }

  friend bool operator==(const ValueTable& a, const ValueTable& b) {
    return (a.ids_ == b.ids_ || a.ids() == b.ids()) && a.slots_ == b.slots_;
  }

 private:
  const std::vector<ProgramValueId>& ids() const {
    static const std::vector<ProgramValueId> kNone;
    return ids_ != nullptr ? *ids_ : kNone;
  }
  // The id's rank, or the slot count when the program does not define it.
  size_t rank_of(const ProgramValueId& id) const {
    const auto& all = ids();
    const auto it = std::lower_bound(all.begin(), all.end(), id);
    return it != all.end() && *it == id ? static_cast<size_t>(it - all.begin()) : slots_.size();
  }

  std::shared_ptr<const std::vector<ProgramValueId>> ids_;  // null only when default-made
  std::vector<std::optional<T>> slots_;
};

}  // namespace ferrite
