// ferrite/program/value_rank_table.h — per-value data by rank in id order.
//
// Contract: a `ValueRankTable<T>` holds at most one T per value a program
// defines, at the value's ModelProgram::ValueInfo::rank (its position in
// values_in_id_order()). A look-up is one hash of the id's address and an
// index; walking the table walks the values in id order. It converts to and
// from the id-ordered maps the compiler's interfaces carry in O(n): a map
// is indexed by walking it once, and built by appending in id order (each
// entry goes in at the end, with no search). Ids the program does not define
// have no slot: `find` answers null, `insert_or_assign` refuses them,
// `index_by_rank` leaves them out.
//
// Hazards: the table refers to the program, which must outlive it, and its
// slots are valid only for that program (or a copy, which shares the ranks).
//
// Example:
//   ValueRankTable<ResolvedValueStorage> storages(program);
//   storages.insert_or_assign(value, std::move(storage));  // false if not a program value
//   if (const auto* s = storages.find(value)) use(*s);
//   auto tensors_by_rank = index_by_rank(program, tensors);  // ValueRankTable<const ResolvedTensorSpec*>
//   const ResolvedTensorSpec* tensor = tensors_by_rank.value_or(value, nullptr);
//   const ResolvedTensorSpec* same = tensors_by_rank.value_at_rank(info->rank, nullptr);
//   storages.for_each([](const ProgramValueId& id, const ResolvedValueStorage& s) { ... });
//   std::map<ProgramValueId, ResolvedValueStorage> map = std::move(storages).to_map();
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "ferrite/program/model_program.h"

namespace ferrite {

template <class T>
class ValueRankTable {
 public:
  explicit ValueRankTable(const ModelProgram& program)
      : program_(&program), slots_(program.values_in_id_order().size()) {}

  const T* find(const ProgramValueId& id) const {
    const ModelProgram::ValueInfo* info = program_->find_value(id);
    return info != nullptr && slots_[info->rank] ? &*slots_[info->rank] : nullptr;
  }
  // The value's entry, or `fallback` when it has none (for tables of
  // pointers: `value_or(id, nullptr)`).
  T value_or(const ProgramValueId& id, T fallback) const {
    const T* found = find(id);
    return found != nullptr ? *found : std::move(fallback);
  }
  // The entry at `rank` (a ValueInfo::rank of this program), or null when
  // that slot is empty or past the program's values.
  const T* at_rank(size_t rank) const {
    return rank < slots_.size() && slots_[rank] ? &*slots_[rank] : nullptr;
  }
  T value_at_rank(size_t rank, T fallback) const {
    const T* found = at_rank(rank);
    return found != nullptr ? *found : std::move(fallback);
  }
  // Sets the value's slot; false (and nothing stored) when the program does
  // not define `id`.
  bool insert_or_assign(const ProgramValueId& id, T value) {
    const ModelProgram::ValueInfo* info = program_->find_value(id);
    if (info == nullptr) return false;
    slots_[info->rank] = std::move(value);
    return true;
  }

  // fn(id, entry) for every filled slot, in id order (a walk of one vector:
  // no look-up, no tree to chase).
  template <class Fn>
  void for_each(Fn&& fn) const {
    const auto& ids = program_->values_in_id_order();
    for (size_t rank = 0; rank < slots_.size(); ++rank) {
      if (slots_[rank]) fn(ids[rank], *slots_[rank]);
    }
  }

  // Every filled slot, as the id-ordered map.
  std::map<ProgramValueId, T> to_map() && {
    std::map<ProgramValueId, T> out;
    const auto& ids = program_->values_in_id_order();
    for (size_t rank = 0; rank < slots_.size(); ++rank) {
      if (slots_[rank]) out.emplace_hint(out.end(), ids[rank], std::move(*slots_[rank]));
    }
    return out;
  }

 private:
  template <class U>
  friend ValueRankTable<const U*> index_by_rank(const ModelProgram& program,
                                                const std::map<ProgramValueId, U>& map);

  const ModelProgram* program_;
  std::vector<std::optional<T>> slots_;
};

// Pointers to a map's entries by rank (the map must outlive the table):
// one walk of the map beside values_in_id_order() (the same order, so while
// the two agree an entry costs one id compare and no look-up), no copies.
// An entry the program does not define is skipped; after it, or after a
// value the map lacks, the walk finds its place again with one look-up.
template <class T>
ValueRankTable<const T*> index_by_rank(const ModelProgram& program,
                                       const std::map<ProgramValueId, T>& map) {
  ValueRankTable<const T*> table(program);
  const auto& ids = program.values_in_id_order();
  size_t next = 0;  // the rank the next entry has while the two agree
  for (const auto& [id, value] : map) {
    if (next < ids.size() && ids[next] == id) {
      table.slots_[next++] = &value;
      continue;
    }
    const ModelProgram::ValueInfo* info = program.find_value(id);
    if (info == nullptr) continue;
    table.slots_[info->rank] = &value;
    next = size_t{info->rank} + 1;
  }
  return table;
}

}  // namespace ferrite
