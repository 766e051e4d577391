#include "ferrite/plan/program_plan_compiler.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ferrite/compiler/joint_selection.h"
#include "ferrite/core/checked_math.h"

namespace ferrite {
namespace {

BufferUsage usage_of(const ModelProgram& program, const ProgramValueId& value) {
  switch (program.value_kind(value).value_or(ProgramValueKind::kNodeOutput)) {
    case ProgramValueKind::kWeight: return BufferUsage::kWeights;
    case ProgramValueKind::kState: return BufferUsage::kState;
    default: return BufferUsage::kActivations;
  }
}

Result<ResolvedValueBinding> make_binding(
    const PreparedModelFamily& family, const WeightSchema& schema, const ProgramValueId& value,
    ValueBindingRole role, uint32_t ordinal, const TensorContract& contract,
    const ValueTensors& tensors, const std::map<ProgramValueId, ResolvedValueStorage>& storages) {
  const ModelProgram& program = family.program();
  auto tensor = tensors.find(value);
  if (tensor == tensors.end()) {
    return invalid_plan(fmt::format("value `{}` has no resolved tensor", value.str()));
  }
  auto storage = storages.find(value);
  if (storage == storages.end()) {
    return invalid_plan(fmt::format("value `{}` has no resolved storage", value.str()));
  }
  std::optional<ResolvedWeightBinding> weight;
  if (const WeightReference* ref = program.find_weight_by_value(value)) {
    FERRITE_ASSIGN_OR_RETURN(weight, ResolvedWeightBinding::from_schema(schema, ref->weight_id));
  }
  const AliasPolicy alias = role == ValueBindingRole::kInput ? AliasPolicy(NoAlias{}) : contract.alias();
  return ResolvedValueBinding::create(value, role, ordinal, tensor->second, contract.access(), alias,
                                      usage_of(program, value), std::move(weight), storage->second);
}

Result<std::vector<PlanNodeResolution>> resolve_nodes(
    const NodeResolutionContext& context, const ProgramPlanCompileOptions& options,
    const ValueTensors& tensors, const std::map<ProgramValueId, ResolvedValueStorage>& storages) {
  std::vector<PlanNodeResolution> out;
  for (const ProgramNode* node : context.family.program().nodes()) {
    FERRITE_ASSIGN_OR_RETURN(const OperationDescriptor* op,
                             context.catalog.operation_for_node(node->id, node->operation_id));
    std::vector<ResolvedValueBinding> bindings;
    for (size_t i = 0; i < node->inputs.size() && i < op->inputs.size(); ++i) {
      FERRITE_ASSIGN_OR_RETURN(
          auto binding, make_binding(context.family, context.execution_weight_schema, node->inputs[i],
                                     ValueBindingRole::kInput, static_cast<uint32_t>(i),
                                     op->inputs[i], tensors, storages));
      bindings.push_back(std::move(binding));
    }
    for (size_t i = 0; i < node->outputs.size() && i < op->outputs.size(); ++i) {
      FERRITE_ASSIGN_OR_RETURN(
          auto binding, make_binding(context.family, context.execution_weight_schema,
                                     node->outputs[i], ValueBindingRole::kOutput,
                                     static_cast<uint32_t>(i), op->outputs[i], tensors, storages));
      bindings.push_back(std::move(binding));
    }
    std::set<CapabilityId> requested;
    if (auto it = options.required_capabilities().find(node->id);
        it != options.required_capabilities().end()) {
      requested = it->second;
    }
    std::optional<ProviderId> preferred;
    if (auto it = options.preferred_providers().find(node->id);
        it != options.preferred_providers().end()) {
      preferred = it->second;
    }
    FERRITE_ASSIGN_OR_RETURN(auto resolution, resolve_node(context, *node, std::move(bindings),
                                                           std::move(requested), std::move(preferred)));
    out.push_back(std::move(resolution));
  }
  return out;
}

Result<uint64_t> maximum_value_alignment(const std::vector<PlanNodeResolution>& resolutions) {
  uint64_t alignment = 0;
  for (const auto& r : resolutions) alignment = std::max(alignment, r.maximum_value_alignment());
  if (alignment == 0) return invalid_plan("program has no provider value-alignment evidence");
  if (!is_power_of_two(alignment)) {
    return invalid_plan("provider value-alignment evidence is not a power of two");
  }
  return alignment;
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
    if (!catalog.device().capabilities.contains(capability)) missing.push_back(capability.str());
  }
  if (!missing.empty()) {
    return make_error(Status(ErrorCode::kInvalidExecutionPlan,
                             fmt::format("weight materializer `{}` requires capabilities device "
                                         "`{}` lacks: {}",
                                         weights.materializer().id.str(),
                                         catalog.device().id.str(), fmt::join(missing, ", ")))
                          .with_field("materializer_id", weights.materializer().id.str()));
  }
  FERRITE_RETURN_IF_ERROR(validate_compile_options(family, options));
  FERRITE_ASSIGN_OR_RETURN(auto tensors, infer_value_tensors(family, catalog.operations(), options));
  const NodeResolutionContext context{family, weights.schema(), catalog, policy, estimators};

  // Probe pass: dedicated weight resources, to learn the alignment providers need.
  FERRITE_ASSIGN_OR_RETURN(auto probe_locations, probe_weight_locations(family, weights));
  FERRITE_ASSIGN_OR_RETURN(auto probe_storages, build_value_storages(family, weights,
                                                                     catalog.operations(), tensors,
                                                                     probe_locations));
  FERRITE_ASSIGN_OR_RETURN(auto probe, resolve_nodes(context, options, tensors, probe_storages));
  FERRITE_ASSIGN_OR_RETURN(uint64_t alignment, maximum_value_alignment(probe));

  // Fixed point: arenas aligned to A until no estimator asks for more.
  for (int round = 1; round <= kMaxAlignmentFixedPointRounds; ++round) {
    FERRITE_ASSIGN_OR_RETURN(auto locations, arena_weight_locations(family, weights, alignment));
    FERRITE_ASSIGN_OR_RETURN(auto storages, build_value_storages(family, weights,
                                                                 catalog.operations(), tensors,
                                                                 locations));
    FERRITE_ASSIGN_OR_RETURN(auto resolutions, resolve_nodes(context, options, tensors, storages));
    FERRITE_ASSIGN_OR_RETURN(uint64_t observed, maximum_value_alignment(resolutions));
    if (observed <= alignment) {
      return ProgramResolution{std::move(weights), std::move(tensors), std::move(storages),
                               std::move(resolutions), alignment, round};
    }
    alignment = observed;
  }
  return invalid_plan("provider value alignment did not reach a bounded monotonic fixed point");
}

Result<ProgramPlanCompilation> ProgramPlanCompiler::compile(
    const PreparedModelFamily& family, const CapabilityCatalog& catalog, const RuntimePolicy& policy,
    const EstimatorRegistry& estimators, const WeightMaterializerRegistry& materializers,
    const ProgramPlanCompileOptions& options) {
  FERRITE_ASSIGN_OR_RETURN(auto resolution,
                           resolve(family, catalog, policy, estimators, materializers, options));
  FERRITE_ASSIGN_OR_RETURN(auto selection,
                           select_providers_jointly(resolution.node_resolutions, catalog, policy));
  FERRITE_ASSIGN_OR_RETURN(auto plan, ExecutionPlan::build(family, catalog, policy, resolution,
                                                           selection,
                                                           options.completion_retention()));
  return ProgramPlanCompilation{std::move(plan), std::move(resolution)};
}

}  // namespace ferrite
