#include "ferrite/plan/plan_node_builder.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace ferrite {
namespace {

// The compatibility request resolution used (spec §6.5 step 3).
ProviderCompatibilityRequest compatibility_request(const ProgramNode& node,
                                                   const OperationDescriptor& op,
                                                   const PlanNodeResolution& resolution) {
  std::set<CapabilityId> capabilities = op.provider.required_capabilities;
  capabilities.insert(resolution.required_capabilities().begin(),
                      resolution.required_capabilities().end());
  std::set<WeightFormatId> weight_formats;
  std::set<QuantizationFormatId> quantization_formats;
  for (const auto& binding : resolution.values()) {
    if (binding.usage() != BufferUsage::kWeights || !binding.weight()) continue;
    if (binding.weight()->has_quantized_components()) {
      weight_formats.insert(binding.weight()->format_id);
      const auto formats = binding.weight()->quantization_formats();
      quantization_formats.insert(formats.begin(), formats.end());
    }
  }
  return ProviderCompatibilityRequest{.operation_id = node.operation_id,
                                      .required_version = node.required_version,
                                      .required_capabilities = std::move(capabilities),
                                      .required_weight_formats = std::move(weight_formats),
                                      .required_quantization_formats =
                                          std::move(quantization_formats)};
}

struct Selection {
  ProviderId provider;
  PlanSelectionReason reason = PlanSelectionReason::kDeterministicCompatible;
  std::map<ProviderId, PlanProviderRejectReason> rejected;
};

Result<Selection> select_provider(const PlanNodeBuildContext& context, size_t node_index,
                                  const ProgramNode& node, const OperationDescriptor& op,
                                  const PlanNodeResolution& resolution) {
  const ProviderId* chosen_provider = context.selection.chosen_for(node_index, node.id);
  if (chosen_provider == nullptr) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "node `{}` has no jointly selected provider", node.id.str())
        .with_field("node_id", node.id.str());
  }
  const ProviderCompatibilityReport report =
      context.catalog.provider_compatibility(compatibility_request(node, op, resolution));
  if (std::find(report.compatible.begin(), report.compatible.end(), *chosen_provider) ==
          report.compatible.end() ||
      resolution.candidate(*chosen_provider) == nullptr) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "node `{}` selected provider `{}` is not a compatible resolution candidate",
                      node.id.str(), chosen_provider->str())
        .with_field("node_id", node.id.str());
  }
  Selection out{*chosen_provider, PlanSelectionReason::kDeterministicCompatible, {}};
  auto add = [&](const ProviderId& id, PlanProviderRejectReason reason) -> Result<void> {
    if (!out.rejected.emplace(id, std::move(reason)).second) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "node `{}` has duplicate rejection evidence for provider `{}`",
                        node.id.str(), id.str())
          .with_field("node_id", node.id.str());
    }
    return {};
  };
  for (const auto& [id, reasons] : report.rejected) {
    FERRITE_RETURN_IF_ERROR(add(id, ProviderIncompatible{reasons}));
  }
  const auto& preferred = resolution.preferred_provider();
  if (preferred) {
    if (context.catalog.find_provider(node.operation_id, *preferred) == nullptr) {
      FERRITE_RETURN_IF_ERROR(add(*preferred, ProviderNotRegistered{}));
    }
    if (auto it = context.selection.preferred_rejections.find(node.id);
        it != context.selection.preferred_rejections.end()) {
      FERRITE_RETURN_IF_ERROR(add(it->second.first, it->second.second));
    }
    out.reason = *preferred == out.provider ? PlanSelectionReason::kPreferredCompatible
                                            : PlanSelectionReason::kFallbackFromPreferred;
    if (*preferred != out.provider && !out.rejected.contains(*preferred)) {
      return make_error(
                 ErrorCode::kInvalidExecutionPlan,
                 "node `{}` fallback from preferred provider `{}` lacks typed rejection evidence",
                 node.id.str(), preferred->str())
          .with_field("node_id", node.id.str());
    }
  }
  // Every provider resolution dropped for storage stays visible in the plan,
  // preferred or not (explain shows why it could not run the node).
  for (const auto& [id, reason] : resolution.rejections()) out.rejected.emplace(id, reason);
  return out;
}

const ResolvedValueBinding* find_binding(const std::vector<ResolvedValueBinding>& values,
                                         ValueBindingRole role, uint32_t ordinal) {
  for (const auto& b : values) {
    if (b.role() == role && b.ordinal() == ordinal) return &b;
  }
  return nullptr;
}

Result<std::vector<PlanExactAlias>> exact_aliases(const PlanNodeBuildContext& context,
                                                  size_t node_index, const ProgramNode& node,
                                                  const std::vector<ResolvedValueBinding>& values) {
  const ModelProgram& program = context.family.program();
  std::vector<PlanExactAlias> out;
  for (const auto& output : values) {
    if (output.role() != ValueBindingRole::kOutput) continue;
    std::optional<uint32_t> target;
    PlanAliasKind kind = PlanAliasKind::kMay;
    if (const auto* may = std::get_if<MayAlias>(&output.alias())) target = may->tensor_index;
    if (const auto* must = std::get_if<MustAlias>(&output.alias())) {
      target = must->tensor_index;
      kind = PlanAliasKind::kMust;
    }
    if (!target) continue;
    const ResolvedValueBinding* input = find_binding(values, ValueBindingRole::kInput, *target);
    const bool equal = input != nullptr && input->storage() == output.storage();
    if (!equal) {
      if (kind == PlanAliasKind::kMust) {
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "node `{}` {} must alias input[{}] but its storage differs",
                          node.id.str(), output.describe(), *target)
            .with_field("node_id", node.id.str());
      }
      continue;
    }
    // Alias liveness (spec §8.4 step 4). The input's info by its position
    // among the node's bindings.
    const ProgramValueId& in = input->value_id();
    const ModelProgram::ValueInfo* info =
        program.find_value_at(node_index, static_cast<size_t>(input - values.data()), in);
    const bool last_read_here =
        info != nullptr && context.value_nodes.last_consumer[info->rank] == node_index;
    const bool is_output = std::find(program.outputs().begin(), program.outputs().end(), in) !=
                           program.outputs().end();
    if (!last_read_here || info->state != nullptr ||
        input->usage() != BufferUsage::kActivations || is_output) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "node `{}` {} aliases {} which is still live, a state or a program output",
                        node.id.str(), output.describe(), input->describe())
          .with_field("node_id", node.id.str());
    }
    out.push_back(PlanExactAlias{output.value_id(), output.ordinal(), in, input->ordinal(), kind});
  }
  return out;
}

TensorAccess merge_access(TensorAccess a, TensorAccess b) {
  const bool reads = access_reads(a) || access_reads(b);
  const bool writes = access_writes(a) || access_writes(b);
  if (reads && writes) return TensorAccess::kReadWrite;
  return writes ? TensorAccess::kWrite : TensorAccess::kRead;
}

// `values` are the bindings of the program's node at `node_index` (their
// infos are read by position; any that are not are looked up).
std::vector<StateEffect> state_effects(const ModelProgram& program, size_t node_index,
                                       const std::vector<ResolvedValueBinding>& values) {
  std::map<StateId, StateEffect> effects;
  for (size_t slot = 0; slot < values.size(); ++slot) {
    const ResolvedValueBinding& b = values[slot];
    const ModelProgram::ValueInfo* info = program.find_value_at(node_index, slot, b.value_id());
    const StateSpec* state = info != nullptr ? info->state : nullptr;
    if (state == nullptr) continue;
    auto it = effects.find(state->id);
    if (it == effects.end()) {
      it = effects.emplace(state->id, StateEffect{state->id, b.access(), state->lifetime, {}}).first;
    } else {
      it->second.access = merge_access(it->second.access, b.access());
    }
    StateEffect& effect = it->second;
    for (const auto& id : b.storage().resource_ids()) effect.resource_ids.push_back(id);
  }
  std::vector<StateEffect> out;
  for (auto& [id, effect] : effects) {
    std::sort(effect.resource_ids.begin(), effect.resource_ids.end());
    effect.resource_ids.erase(std::unique(effect.resource_ids.begin(), effect.resource_ids.end()),
                              effect.resource_ids.end());
    out.push_back(std::move(effect));
  }
  return out;
}

std::vector<ProviderId> compatible_provider_ids(const PlanNodeResolution& resolution) {
  std::vector<ProviderId> ids;
  for (const auto& candidate : resolution.candidates()) ids.push_back(candidate.provider_id());
  return ids;  // candidates are sorted by provider id
}

}  // namespace

Result<ValueNodes> value_nodes(const ModelProgram& program) {
  const size_t count = program.nodes().size();
  if (count >= ValueNodes::kNone) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "a program of {} nodes is past the {} a plan can index", count,
                      ValueNodes::kNone - 1);
  }
  const size_t ranks = program.values_in_id_order().size();
  ValueNodes out{std::vector<uint32_t>(ranks, ValueNodes::kNone),
                 std::vector<uint32_t>(ranks, ValueNodes::kNone)};
  for (size_t i = 0; i < count; ++i) {
    const ProgramNode& node = *program.nodes()[i];
    const auto index = static_cast<uint32_t>(i);
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      if (const ModelProgram::ValueInfo* info = program.node_input_info(i, k)) {
        out.last_consumer[info->rank] = index;  // the last reader wins
      }
    }
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const ModelProgram::ValueInfo* info = program.node_output_info(i, k);
      if (info != nullptr && out.producer[info->rank] == ValueNodes::kNone) {
        out.producer[info->rank] = index;  // the first writer wins
      }
    }
  }
  return out;
}

std::set<size_t> StateHazards::record(const StateId& state, size_t node_index,
                                      TensorAccess access) {
  History& history = states_[state];
  std::set<size_t> waits;
  if (history.last_writer) waits.insert(*history.last_writer);  // RAW and WAW
  if (access_writes(access)) {
    waits.insert(history.readers_since_write.begin(), history.readers_since_write.end());  // WAR
    history.last_writer = node_index;
    history.readers_since_write.clear();
  } else {
    history.readers_since_write.insert(node_index);
  }
  waits.erase(node_index);
  return waits;
}

Result<PlanNode> build_plan_node(const PlanNodeBuildContext& context, size_t node_index,
                                 const PlanNodeResolution& resolution, StateHazards& hazards) {
  FERRITE_ASSIGN_OR_RETURN(PlanNode node, build_plan_node_alone(context, node_index, resolution));
  add_state_dependencies(context, node_index, node, hazards);
  return node;
}

void add_state_dependencies(const PlanNodeBuildContext& context, size_t node_index,
                            PlanNode& node, StateHazards& hazards) {
  std::set<size_t> waits;
  for (const auto& effect : node.state_effects) {
    const auto hazard = hazards.record(effect.state_id, node_index, effect.access);
    waits.insert(hazard.begin(), hazard.end());
  }
  if (waits.empty()) return;
  for (size_t w : waits) node.dependencies.push_back(context.program_nodes[w]->id);
  std::sort(node.dependencies.begin(), node.dependencies.end());
  node.dependencies.erase(std::unique(node.dependencies.begin(), node.dependencies.end()),
                          node.dependencies.end());
}

Result<PlanNode> build_plan_node_alone(const PlanNodeBuildContext& context, size_t node_index,
                                       const PlanNodeResolution& resolution) {
  if (node_index >= context.program_nodes.size()) {
    return make_error(ErrorCode::kInvalidExecutionPlan, "node index {} is outside the program",
                      node_index);
  }
  const ProgramNode& node = *context.program_nodes[node_index];
  const ModelProgram& program = context.family.program();
  if (resolution.node_id() != node.id) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "resolution for node `{}` is out of program order",
                      resolution.node_id().str())
        .with_field("node_id", node.id.str());
  }
  FERRITE_ASSIGN_OR_RETURN(const OperationDescriptor* op,
                           context.catalog.operation_for_node(node.id, node.operation_id));
  if (!op->version.satisfies(node.required_version)) {
    return make_error(ErrorCode::kIncompatibleOperationVersion,
                      "node `{}` requires operation `{}` version {}, available {}", node.id.str(),
                      node.operation_id.str(), node.required_version.to_string(),
                      op->version.to_string())
        .with_field("node_id", node.id.str());
  }
  FERRITE_RETURN_IF_ERROR(op->validate_attributes(node.id, node.attributes));
  FERRITE_RETURN_IF_ERROR(validate_resolved_bindings(node.id, *op, resolution.values()));
  FERRITE_ASSIGN_OR_RETURN(auto aliases,
                           exact_aliases(context, node_index, node, resolution.values()));
  auto effects = state_effects(program, node_index, resolution.values());
  FERRITE_ASSIGN_OR_RETURN(auto selection, select_provider(context, node_index, node, *op, resolution));
  const ProviderResourcePlan* plan = resolution.candidate(selection.provider);
  const OperationProviderDescriptor* descriptor =
      context.catalog.find_provider(node.operation_id, selection.provider);
  if (plan == nullptr || descriptor == nullptr) {
    return make_error(ErrorCode::kInvalidExecutionPlan, "node `{}` provider `{}` vanished",
                      node.id.str(), selection.provider.str())
        .with_field("node_id", node.id.str());
  }
  FERRITE_RETURN_IF_ERROR(plan->validate_shape());
  if (plan->estimator_id() != descriptor->resource_estimator_id ||
      plan->estimator_version() != descriptor->resource_estimator_version ||
      plan->estimator_implementation_fingerprint() !=
          descriptor->resource_estimator_implementation_fingerprint) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "node `{}` provider `{}` estimate does not come from the catalog's estimator",
                      node.id.str(), selection.provider.str())
        .with_field("node_id", node.id.str());
  }

  // Dependencies: producers of inputs (add_state_dependencies adds the
  // state hazards).
  std::set<size_t> waits;
  for (size_t ordinal = 0; ordinal < node.inputs.size(); ++ordinal) {
    const ModelProgram::ValueInfo* info = program.node_input_info(node_index, ordinal);
    const uint32_t producer =
        info != nullptr ? context.value_nodes.producer[info->rank] : ValueNodes::kNone;
    if (producer == ValueNodes::kNone) continue;
    if (producer >= node_index) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "node `{}` reads `{}` before it is produced", node.id.str(),
                        node.inputs[ordinal].str())
          .with_field("node_id", node.id.str());
    }
    waits.insert(producer);
  }
  std::vector<NodeId> dependencies;
  for (size_t w : waits) dependencies.push_back(context.program_nodes[w]->id);
  std::sort(dependencies.begin(), dependencies.end());

  // Workspaces and the resource union.
  std::set<ResourceId> resources;
  for (const auto& b : resolution.values()) {
    for (const auto& component : b.storage().components()) resources.insert(component.resource_id);
  }
  // The chosen estimate's input fingerprint is deferred (resource_estimate.h)
  // and the plan's encoding reads it: hashed here, while nodes are built on
  // every compile thread, not later in the serial encoding.
  (void)plan->estimator_input_fingerprint();
  std::optional<ResourceId> workspace_ids[3];
  FERRITE_ASSIGN_OR_RETURN(auto workspaces, node_workspaces(node.id, *plan));
  for (auto& workspace : workspaces) {
    // Nodes run one at a time, so every invocation-scoped scratch workspace
    // lives in one shared arena, sized by the largest (memory_summary.cc).
    if (workspace.slot == NodeWorkspace::kScratch &&
        workspace.requirement->scope == ProviderWorkspaceScope::kInvocation) {
      workspace.base_id = ResourceId::literal(kSharedScratchResourceId);
    }
    resources.insert(workspace.base_id);
    workspace_ids[workspace.slot] = std::move(workspace.base_id);
  }

  return PlanNode{.id = node.id,
                  .dependencies = std::move(dependencies),
                  .operation_id = node.operation_id,
                  .operation_version = node.required_version,
                  .required_capabilities = resolution.required_capabilities(),
                  .attributes = node.attributes,
                  .work = node.work,
                  .provider_id = selection.provider,
                  .selection_reason = selection.reason,
                  .rejected_providers = std::move(selection.rejected),
                  .compatible_providers = compatible_provider_ids(resolution),
                  .provider_resources = *plan,
                  .values = SharedValueBindings(resolution.shared_values()),
                  .exact_aliases = std::move(aliases),
                  .state_effects = std::move(effects),
                  .scratch_resource = std::move(workspace_ids[0]),
                  .binding_resource = std::move(workspace_ids[1]),
                  .persistent_resource = std::move(workspace_ids[2]),
                  .resources = std::vector<ResourceId>(resources.begin(), resources.end())};
}

}  // namespace ferrite
