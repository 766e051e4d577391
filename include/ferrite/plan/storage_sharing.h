// ferrite/plan/storage_sharing.h — may two values use the same bytes?
//
// Contract (spec §8.2 step 6, extended by activation packing): two distinct
// values may occupy overlapping bytes of one resource only if
//   (a) they are in one exact-alias class (the plan nodes' MustAlias/MayAlias
//       edges, joined transitively) and their storages are identical; or
//   (b) every value in the resource is an activation and the two values'
//       live buffers (activation_liveness.h, using the plan's alias edges and
//       the retained values) never overlap in time.
// A resource holding program states must hold states that agree on
// lifetime, capacity demand and initialization ("resource `r` merges states
// of different lifetime, demand or initialization: ..." naming both), and a
// zero-initialized state must have Sequence lifetime ("zero initialization
// requires semantic Sequence state backing"; spec §3.3).
// Anything else is kInvalidExecutionPlan naming both values ("values `a` and
// `b` overlap in storage without an exact alias" for (a), "... while both are
// live" for (b)). Cost O(B log B) in the number of storage components: a
// byte sweep per resource, and for activation resources the time/byte sweep
// of verify_packing (interval_packing.h) over one buffer per alias class.
//
// Example:
//   FERRITE_RETURN_IF_ERROR(check_storage_sharing(program, plan_nodes, bound, retained));
#pragma once

#include <map>
#include <set>
#include <span>
#include <vector>

#include "ferrite/catalog/value_binding.h"
#include "ferrite/plan/plan_node.h"
#include "ferrite/program/model_program.h"

namespace ferrite {

// One bound value: its rank in the program (ModelProgram::ValueInfo::rank,
// its position in values_in_id_order()) and its first binding.
struct BoundValue {
  uint32_t rank = 0;
  const ResolvedValueBinding* binding = nullptr;
};

// `bound` is each bound value once, by increasing rank (value id order);
// the values' bindings must outlive the call.
Result<void> check_storage_sharing(const ModelProgram& program, std::span<const PlanNode> nodes,
                                   std::span<const BoundValue> bound,
                                   const std::set<ProgramValueId>& retained);

}  // namespace ferrite
