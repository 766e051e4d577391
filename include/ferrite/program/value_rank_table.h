// ferrite/program/value_rank_table.h — a pass's per-value data by rank.
//
// Contract: a `ValueRankTable<T>` holds at most one T per value a program
// defines, at the value's ModelProgram::ValueInfo::rank (its position in
// values_in_id_order()). A look-up is one hash of the id's address and an
// index; walking the table walks the values in id order. Ids the program
// does not define have no slot: `find` answers null, `insert_or_assign`
// refuses them.
//
// Hazards: the table refers to the program, which must outlive it, and its
// slots are valid only for that program (or a copy, which shares the ranks).
// A table kept past the pass that made it is a `ValueTable`
// (program/value_table.h), which shares only the program's id order.
//
// Example:
//   ValueRankTable<const PlanNode*> sites(program);
//   sites.insert_or_assign(value, &node);  // false if not a program value
//   if (const auto* s = sites.find(value)) use(**s);
//   const PlanNode* same = sites.value_at_rank(info->rank, nullptr);
//   sites.set_at_rank(info->rank, &node);  // no look-up
//   sites.for_each([](const ProgramValueId& id, const PlanNode* node) { ... });
#pragma once

#include <cstddef>
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
  // Sets the slot at `rank` (a ValueInfo::rank of this program); false (and
  // nothing stored) past the program's values.
  bool set_at_rank(size_t rank, T value) {
    if (rank >= slots_.size()) return false;
    slots_[rank] = std::move(value);
    return true;
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

 private:
  const ModelProgram* program_;
  std::vector<std::optional<T>> slots_;
};

}  // namespace ferrite
