// ferrite/plan/program_resolution.h — what the compiler resolved for a
// program before the plan is built.
//
// Contract: a `ProgramResolution` holds the execution weight plan, every
// value's resolved tensor and storage, one `PlanNodeResolution` per node in
// program order (its surviving providers with their estimates and the typed
// reasons the others were dropped), the value alignment the fixed point
// reached and, with packed activations, the activation arenas. It is produced
// by `ProgramPlanCompiler::resolve`/`compile` (plan/program_plan_compiler.h)
// and consumed by `ExecutionPlan::build` (plan/execution_plan.h); it lives in
// its own header so the plan does not depend on the compiler driver.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(ProgramResolution resolution, ProgramPlanCompiler::resolve(...));
//   resolution.node_resolutions.front().candidates();
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "ferrite/compiler/node_resolution.h"
#include "ferrite/compiler/program_node_bindings.h"
#include "ferrite/compiler/tensor_inference.h"
#include "ferrite/compiler/weight_materializer.h"
#include "ferrite/plan/activation_placement.h"

namespace ferrite {

struct ProgramResolution {
  ExecutionWeightPlan execution_weights;
  ValueTensors value_tensors;
  ValueStorages value_storages;  // by the values' ranks in the family's program
  std::vector<PlanNodeResolution> node_resolutions;  // program order
  uint64_t value_alignment_bytes = 0;
  int fixed_point_rounds = 0;
  // Set by `compile` with packed activation storage (activation_placement.h).
  std::vector<ActivationArenaSummary> activation_arenas;
  int activation_rounds = 0;
  // The weight contracts the node resolutions were made with (derived from
  // execution_weights' schema), for the packing rounds to reuse.
  std::shared_ptr<const ProgramWeightContracts> weight_contracts;
};

}  // namespace ferrite
