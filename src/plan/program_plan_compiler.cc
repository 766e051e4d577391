#include "ferrite/plan/program_plan_compiler.h"

#include <map>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ferrite/compiler/joint_selection.h"
#include "ferrite/compiler/program_node_bindings.h"
#include "ferrite/core/checked_math.h"
#include "ferrite/core/parallel_indices.h"

namespace ferrite {
namespace {

Result<uint64_t> maximum_value_alignment(const std::vector<PlanNodeResolution>& resolutions) {
  uint64_t alignment = 0;
  for (const auto& r : resolutions) alignment = std::max(alignment, r.maximum_value_alignment());
  if (alignment == 0) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "program has no provider value-alignment evidence");
  }
  if (!is_power_of_two(alignment)) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "provider value-alignment evidence is not a power of two");
  }
  return alignment;
}

// Resolutions one thread drops at a time: each is a few frees and reference
// counts, so chunks larger than resolution's.
constexpr size_t kDiscardedPerChunk = 64;

// Drops a round's resolutions on the compile threads instead of in the
// caller's vector destructor: the nodes a later round resolved again own their
// state alone, and freeing it (bindings, candidates, estimator inputs) one
// node after another was serial work between parallel phases.
void discard(std::vector<PlanNodeResolution>&& resolutions, unsigned threads) {
  std::vector<PlanNodeResolution> dying = std::move(resolutions);
  for_each_index(dying.size(), threads, kDiscardedPerChunk, [&](size_t i) {
    const PlanNodeResolution gone = std::move(dying[i]);
    return true;
  });
}

}  // namespace

Result<ProgramResolution> ProgramPlanCompiler::resolve(const PreparedModelFamily& family,
                                                       const CapabilityCatalog& catalog,
                                                       const RuntimePolicy& policy,
                                                       const EstimatorRegistry& estimators,
                                                       const WeightMaterializerRegistry& materializers,
                                                       const ProgramPlanCompileOptions& options) {
  FERRITE_ASSIGN_OR_RETURN(auto weights,
                           materializers.select(family, options.weight_materializer_selection()));
  // The materializer's required capabilities must be offered by the device (spec §10).
  std::vector<std::string> missing;
  for (const auto& capability : weights.materializer().required_capabilities) {
    if (!catalog.device().capabilities.contains(capability)) missing.emplace_back(capability.str());
  }
  if (!missing.empty()) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "weight materializer `{}` requires capabilities device `{}` lacks: {}",
                      weights.materializer().id.str(), catalog.device().id.str(),
                      fmt::join(missing, ", "))
        .with_field("materializer_id", weights.materializer().id.str());
  }
  // The weights' contracts (a function of the program and the schema) are
  // derived beside the checks, tensors and probe storages when there is a
  // second thread; nothing else touches them until both are done.
  std::shared_ptr<const ProgramWeightContracts> contracts;
  ValueTensors tensors;
  ValueStorages probe_storages;
  Result<void> prepared = {};
  run_beside(
      threads_beside(family.program().nodes().size(), options.compile_threads()),
      [&] { contracts = ProgramWeightContracts::derive(family.program(), weights.schema()); },
      [&] {
        prepared = [&]() -> Result<void> {
          FERRITE_RETURN_IF_ERROR(validate_compile_options(family, options));
          FERRITE_ASSIGN_OR_RETURN(tensors,
                                   infer_value_tensors(family, catalog.operations(), options));
          // Probe pass: dedicated weight resources, to learn the alignment
          // providers need.
          FERRITE_ASSIGN_OR_RETURN(auto probe_locations, probe_weight_locations(family, weights));
          FERRITE_ASSIGN_OR_RETURN(probe_storages,
                                   build_value_storages(family, weights, catalog.operations(),
                                                        tensors, probe_locations, nullptr,
                                                        options.compile_threads()));
          return {};
        }();
      });
  FERRITE_RETURN_IF_ERROR(prepared);
  const VerifiedEstimatorDescriptors verified = verified_estimator_descriptors(catalog, estimators);
  const NodeResolutionContext context{family,     weights.schema(), catalog,
                                      policy,     estimators,       &contracts->contracts,
                                      &verified};
  FERRITE_ASSIGN_OR_RETURN(auto probe, resolve_program_nodes(context, options, tensors, probe_storages));
  FERRITE_ASSIGN_OR_RETURN(uint64_t alignment, maximum_value_alignment(probe));

  // Fixed point: arenas aligned to A until no estimator asks for more. The
  // rounds move only weights: a node whose bindings equal its probe bindings
  // (one without weights) keeps its probe resolution; every other node is
  // resolved again in every round, so each round's stability is observed
  // from fresh estimates.
  for (int round = 1; round <= kMaxAlignmentFixedPointRounds; ++round) {
    FERRITE_ASSIGN_OR_RETURN(auto locations, arena_weight_locations(family, weights, alignment));
    FERRITE_ASSIGN_OR_RETURN(auto storages, build_value_storages(family, weights,
                                                                 catalog.operations(), tensors,
                                                                 locations, &probe_storages));
    FERRITE_ASSIGN_OR_RETURN(auto resolutions,
                             resolve_program_nodes(context, options, tensors, storages, &probe));
    FERRITE_ASSIGN_OR_RETURN(uint64_t observed, maximum_value_alignment(resolutions));
    if (observed <= alignment) {
      ProgramResolution resolved{std::move(weights),     std::move(tensors), std::move(storages),
                                 std::move(resolutions), alignment,          round,
                                 {},                     0,                  std::move(contracts)};
      discard(std::move(probe), options.compile_threads());
      return resolved;
    }
    alignment = observed;
  }
  return make_error(ErrorCode::kInvalidExecutionPlan,
                    "provider value alignment did not reach a bounded monotonic fixed point");
}

Result<ProgramPlanCompilation> ProgramPlanCompiler::compile(
    const PreparedModelFamily& family, const CapabilityCatalog& catalog, const RuntimePolicy& policy,
    const EstimatorRegistry& estimators, const WeightMaterializerRegistry& materializers,
    const ProgramPlanCompileOptions& options) {
  FERRITE_ASSIGN_OR_RETURN(auto resolution,
                           resolve(family, catalog, policy, estimators, materializers, options));
  // Before packing, the selection only places activations; packing selects
  // again and names the workspaces of what it chose.
  const bool packed = options.activation_storage() == ActivationStorage::kPacked;
  FERRITE_ASSIGN_OR_RETURN(
      auto selection,
      select_providers_jointly(resolution.node_resolutions, catalog, policy,
                               options.compile_threads(),
                               packed ? SelectionWorkspaces::kOmitted : SelectionWorkspaces::kNamed));
  if (packed) {
    FERRITE_RETURN_IF_ERROR(pack_activations(family, catalog, policy, estimators, options,
                                             resolution, selection));
  }
  FERRITE_ASSIGN_OR_RETURN(auto plan, ExecutionPlan::build(family, catalog, policy, resolution,
                                                           selection,
                                                           options.completion_retention(),
                                                           options.run_settings(),
                                                           options.compile_threads()));
  FERRITE_ASSIGN_OR_RETURN(ExecutablePlan executable,
                           ExecutablePlan::create(std::move(plan), catalog));
  return ProgramPlanCompilation{std::move(executable), std::move(resolution)};
}

Result<void> ProgramPlanCompiler::pack_activations(const PreparedModelFamily& family,
                                                   const CapabilityCatalog& catalog,
                                                   const RuntimePolicy& policy,
                                                   const EstimatorRegistry& estimators,
                                                   const ProgramPlanCompileOptions& options,
                                                   ProgramResolution& resolution,
                                                   JointProviderSelection& selection) {
  // Those of `resolve`, unless the resolution was put together elsewhere.
  std::shared_ptr<const ProgramWeightContracts> contracts = resolution.weight_contracts;
  if (contracts == nullptr) {
    contracts = ProgramWeightContracts::derive(family.program(),
                                               resolution.execution_weights.schema());
  }
  const VerifiedEstimatorDescriptors verified = verified_estimator_descriptors(catalog, estimators);
  const NodeResolutionContext context{family,     resolution.execution_weights.schema(),
                                      catalog,    policy,
                                      estimators, &contracts->contracts,
                                      &verified};
  const ActivationPlacementInput input{family,
                                       catalog.operations(),
                                       resolution.value_tensors,
                                       resolution.value_storages,
                                       selection,
                                       options.completion_retention().values()};
  const ModelProgram& program = family.program();
  auto alignments = chosen_activation_alignments(program, resolution.node_resolutions, selection);
  // As in the alignment rounds: a node whose bindings the packing did not
  // move keeps its unpacked resolution; every other node is resolved again
  // in every round. A packing round is usually the last (an alignment it
  // raises is rare), so a node with one candidate has the digest the plan
  // will read computed while its bindings are in cache.
  for (int round = 1; round <= kMaxAlignmentFixedPointRounds; ++round) {
    FERRITE_ASSIGN_OR_RETURN(ActivationPlacement placement, place_activations(input, alignments));
    FERRITE_ASSIGN_OR_RETURN(auto resolutions, resolve_program_nodes(context, options,
                                                                    resolution.value_tensors,
                                                                    placement.value_storages,
                                                                    &resolution.node_resolutions,
                                                                    InputDigests::kSoleCandidateNow));
    FERRITE_ASSIGN_OR_RETURN(auto packed_selection,
                             select_providers_jointly(resolutions, catalog, policy,
                                                      options.compile_threads()));
    bool raised = false;
    const ValueAlignments chosen =
        chosen_activation_alignments(program, resolutions, packed_selection);
    for (size_t rank = 0; rank < chosen.ranks(); ++rank) {
      const uint64_t* needed = chosen.at_rank(rank);
      if (needed == nullptr) continue;
      const uint64_t* used = placement.alignments.at_rank(rank);
      if (used == nullptr || *needed > *used) {
        const uint64_t* floor = alignments.at_rank(rank);
        alignments.set_at_rank(rank, std::max(floor != nullptr ? *floor : 0, *needed));
        raised = true;
      }
    }
    if (!raised) {
      resolution.value_storages = std::move(placement.value_storages);
      discard(std::move(resolution.node_resolutions), options.compile_threads());
      resolution.node_resolutions = std::move(resolutions);
      resolution.activation_arenas = std::move(placement.arenas);
      resolution.activation_rounds = round;
      selection = std::move(packed_selection);
      return {};
    }
  }
  return make_error(ErrorCode::kInvalidExecutionPlan,
                    "activation alignment did not reach a bounded monotonic fixed point");
}

}  // namespace ferrite
