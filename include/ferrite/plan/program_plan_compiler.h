// ferrite/plan/program_plan_compiler.h — the whole compiler: program → plan.
//
// It lives in plan/ because it assembles the compiler passes (compiler/) into
// an ExecutionPlan (plan/); compiler/ never includes plan/, so includes point
// one way.
//
// Contract (spec §11.3 steps 1–7): `ProgramPlanCompiler::resolve` selects the
// execution weights (materializer registry; the device must offer every
// capability the selected materializer requires), validates the options,
// infers every tensor, then
//   * probe pass: weights in dedicated resources; every node resolved; A = the
//     largest value alignment any candidate of any node asks for (a non-zero
//     power of two, else an error);
//   * fixed point: weights placed in per-dtype arenas aligned to A; every node
//     resolved again; if no candidate asks for more than A the resolutions are
//     final, else A grows and the loop repeats — at most 65 rounds, since
//     alignments are powers of two that only grow ("provider value alignment
//     did not reach a bounded monotonic fixed point" otherwise).
// Estimators see placements through their input fingerprint, so moving
// weights into a shared arena re-asks every estimator.
// `compile` (spec §11.3) = resolve + select_providers_jointly (§8.3), then —
// with packed activation storage (the default) — activation packing: place
// activations into arenas by liveness (activation_placement.h), resolve and
// select again with that placement, and repeat with raised alignments while
// a chosen provider asks for more alignment than a buffer was packed with (at
// most 65 rounds: alignments are powers of two that only grow); finally
// ExecutionPlan::build (§8.2) with the options' completion retention and run
// settings, bound to the catalog it was compiled for (ExecutablePlan, §8.8:
// what Executor::load takes). The same trusted inputs always give the
// byte-identical plan.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto resolved, ProgramPlanCompiler::resolve(
//       family, catalog, policy, estimators, WeightMaterializerRegistry::identity_only(), options));
//   resolved.value_alignment_bytes;  // e.g. 64
//   FERRITE_ASSIGN_OR_RETURN(auto compiled, ProgramPlanCompiler::compile(
//       family, catalog, policy, estimators, WeightMaterializerRegistry::identity_only(), options));
//   compiled.plan().plan_id();  // "plan/sha256/…"
#pragma once

#include <map>
#include <vector>

#include "ferrite/catalog/capability_catalog.h"
#include "ferrite/compiler/compile_options.h"
#include "ferrite/compiler/node_resolution.h"
#include "ferrite/compiler/runtime_policy.h"
#include "ferrite/compiler/tensor_inference.h"
#include "ferrite/compiler/value_placement.h"
#include "ferrite/compiler/weight_materializer.h"
#include "ferrite/plan/activation_placement.h"
#include "ferrite/plan/executable_plan.h"
#include "ferrite/plan/execution_plan.h"
#include "ferrite/plan/program_resolution.h"

namespace ferrite {

inline constexpr int kMaxAlignmentFixedPointRounds = 65;

struct ProgramPlanCompilation {
  ExecutablePlan executable;     // the plan and the catalog it was compiled for
  ProgramResolution resolution;  // what the plan was built from (execution weights, tensors)
  const ExecutionPlan& plan() const { return executable.execution_plan(); }
};

class ProgramPlanCompiler {
 public:
  static Result<ProgramResolution> resolve(const PreparedModelFamily& family,
                                           const CapabilityCatalog& catalog,
                                           const RuntimePolicy& policy,
                                           const EstimatorRegistry& estimators,
                                           const WeightMaterializerRegistry& materializers,
                                           const ProgramPlanCompileOptions& options);
  static Result<ProgramPlanCompilation> compile(const PreparedModelFamily& family,
                                                const CapabilityCatalog& catalog,
                                                const RuntimePolicy& policy,
                                                const EstimatorRegistry& estimators,
                                                const WeightMaterializerRegistry& materializers,
                                                const ProgramPlanCompileOptions& options);

 private:
  // Replaces the dedicated activation placement in `resolution` (and the
  // selection made with it) by packed arenas; see the contract above.
  static Result<void> pack_activations(const PreparedModelFamily& family,
                                       const CapabilityCatalog& catalog,
                                       const RuntimePolicy& policy,
                                       const EstimatorRegistry& estimators,
                                       const ProgramPlanCompileOptions& options,
                                       ProgramResolution& resolution,
                                       JointProviderSelection& selection);
};

}  // namespace ferrite
