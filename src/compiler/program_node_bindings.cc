#include "ferrite/compiler/program_node_bindings.h"

#include <fmt/format.h>

#include "ferrite/catalog/canonical_encoding.h"
#include "ferrite/core/canonical_encoder.h"
#include "ferrite/core/parallel_indices.h"

namespace ferrite {
namespace {

// Nodes one thread takes at a time: enough work (tens of microseconds) to
// hide the hand-out, few enough to spread a small program.
constexpr size_t kNodesPerChunk = 16;

BufferUsage usage_of(std::optional<ProgramValueKind> kind) {
  switch (kind.value_or(ProgramValueKind::kNodeOutput)) {
    case ProgramValueKind::kWeight: return BufferUsage::kWeights;
    case ProgramValueKind::kState: return BufferUsage::kState;
    default: return BufferUsage::kActivations;
  }
}

// A pass's tensor and storage of each value, read by its rank
// (ModelProgram::node_value_infos has its info for every binding: no
// look-up per binding). An id the program does not define has neither.
struct ValueSources {
  const ResolvedTensorSpec* tensor = nullptr;
  const ResolvedValueStorage* storage = nullptr;
};

class ValueSourceIndex {
 public:
  // Both tables index the program (checked by the caller).
  ValueSourceIndex(const ValueTensors& tensors, const ValueStorages& storages)
      : tensors_(&tensors), storages_(&storages) {}

  ValueSources find(const ModelProgram::ValueInfo* info) const {
    if (info == nullptr) return {};
    return {tensors_->at_rank(info->rank), storages_->at_rank(info->rank)};
  }

 private:
  const ValueTensors* tensors_;
  const ValueStorages* storages_;
};

// The binding of `value` to a slot. `earlier`, when given, is the same
// slot's binding in an earlier round of this compilation: when every input of
// ResolvedValueBinding::create equals what it was created from (value, role,
// ordinal, tensor, storage, access, alias, usage, the same shared weight
// contract), it is returned as it is and `reused` is set — create is a
// function of exactly those, so the binding is the one it would build, and
// its checks (a weight contract's among them) passed when it was built.
Result<ResolvedValueBinding> make_binding(
    const NodeResolutionContext& context, const ProgramValueId& value,
    ValueBindingRole role, uint32_t ordinal, const TensorContract& contract,
    const ModelProgram::ValueInfo* info, const ValueSourceIndex& sources,
    const ResolvedValueBinding* earlier, bool& reused) {
  reused = false;
  const ValueSources found = sources.find(info);
  if (found.tensor == nullptr) {
    return make_error(ErrorCode::kInvalidExecutionPlan, "value `{}` has no resolved tensor",
                      value.str());
  }
  if (found.storage == nullptr) {
    return make_error(ErrorCode::kInvalidExecutionPlan, "value `{}` has no resolved storage",
                      value.str());
  }
  const std::optional<ProgramValueKind> kind =
      info != nullptr ? std::optional(info->kind) : std::nullopt;
  const WeightReference* ref = kind == ProgramValueKind::kWeight ? info->weight : nullptr;
  // The context's own contract for this weight, when it has one.
  const std::shared_ptr<const SharedWeightContract>* shared =
      ref != nullptr ? find_shared_weight_contract(context, ref->weight_id) : nullptr;
  const AliasPolicy alias = role == ValueBindingRole::kInput ? AliasPolicy(NoAlias{}) : contract.alias();
  const BufferUsage usage = usage_of(kind);
  if (earlier != nullptr && (ref == nullptr || shared != nullptr)) {
    const ResolvedWeightBinding* weight = shared != nullptr ? &(*shared)->contract : nullptr;
    if (earlier->value_id() == value && earlier->role() == role && earlier->ordinal() == ordinal &&
        earlier->weight() == weight && earlier->usage() == usage &&
        earlier->access() == contract.access() && earlier->alias() == alias &&
        earlier->tensor() == *found.tensor && earlier->storage() == *found.storage) {
      reused = true;
      return *earlier;
    }
  }
  ResolvedValueBinding::SharedWeight weight;
  if (ref != nullptr) {
    if (shared != nullptr) {
      // The context's own contract: a reference to this weight's object alone.
      weight = ResolvedValueBinding::SharedWeight(*shared, &(*shared)->contract);
    } else {
      FERRITE_ASSIGN_OR_RETURN(auto derived, ResolvedWeightBinding::from_schema(
                                                 context.execution_weight_schema, ref->weight_id));
      weight = std::make_shared<const ResolvedWeightBinding>(std::move(derived));
    }
  }
  if (shared != nullptr && (*shared)->checked) {
    return ResolvedValueBinding::create(value, role, ordinal, *found.tensor, contract.access(),
                                        alias, usage, std::move(weight), *found.storage,
                                        *(*shared)->checked);
  }
  return ResolvedValueBinding::create(value, role, ordinal, *found.tensor, contract.access(),
                                      alias, usage, std::move(weight), *found.storage);
}

}  // namespace

std::shared_ptr<const ProgramWeightContracts> ProgramWeightContracts::derive(
    const ModelProgram& program, const WeightSchema& schema) {
  auto out = std::make_shared<ProgramWeightContracts>();
  out->contracts.reserve(program.weights().size());
  for (const WeightReference& weight : program.weights()) {
    // from_schema in two steps: assembled, then checked once, where it
    // lives, keeping the evidence (a weight that fails is left out, so
    // resolution reports it at its node).
    if (out->contracts.contains(weight.weight_id)) continue;  // referenced twice: one contract
    auto contract = ResolvedWeightBinding::assemble_from_schema(schema, weight.weight_id);
    const WeightTensorSpec* tensor = schema.find_tensor(weight.weight_id);
    if (!contract || tensor == nullptr) continue;
    auto shared = std::make_shared<SharedWeightContract>(
        SharedWeightContract{std::move(*contract), {}, std::nullopt});
    auto checked = CheckedWeightBinding::check(shared->contract, tensor->dimensions,
                                               tensor->logical_element_type);
    if (!checked) continue;
    shared->checked = std::move(*checked);
    CanonicalText text;
    encode_canonical(shared->contract, text);
    shared->canonical = text.text();
    out->contracts.emplace(weight.weight_id,
                           std::shared_ptr<const SharedWeightContract>(std::move(shared)));
  }
  return out;
}

Result<std::vector<PlanNodeResolution>> resolve_program_nodes(
    const NodeResolutionContext& context, const ProgramPlanCompileOptions& options,
    const ValueTensors& tensors, const ValueStorages& storages,
    const std::vector<PlanNodeResolution>* previous, InputDigests digests) {
  if (!tensors.indexes(context.family.program()) || !storages.indexes(context.family.program())) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "the value tensors or storages were made for another program");
  }
  // Every node's operation and version first: a backend that cannot run the
  // program fails before any estimator is called (spec §12 case 15).
  for (const ProgramNode* node : context.family.program().nodes()) {
    FERRITE_ASSIGN_OR_RETURN(const OperationDescriptor* op,
                             context.catalog.operation_for_node(node->id, node->operation_id));
    if (!op->version.satisfies(node->required_version)) {
      return make_error(ErrorCode::kIncompatibleOperationVersion,
                        "node `{}` requires operation `{}` version {}, available {}",
                        node->id.str(), node->operation_id.str(),
                        node->required_version.to_string(), op->version.to_string())
          .with_field("node_id", node->id.str())
          .with_field("operation_id", node->operation_id.str())
          .with_field("required_version", node->required_version.to_string())
          .with_field("available_version", op->version.to_string());
    }
  }
  const auto& nodes = context.family.program().nodes();
  const ModelProgram& program = context.family.program();
  const ValueSourceIndex sources(tensors, storages);
  if (previous != nullptr && previous->size() != nodes.size()) previous = nullptr;
  // Each node is resolved on its own (a function of the context and its
  // bindings), into its own slot; several threads take nodes in chunks in
  // order, and the lowest failing node's error is returned, as serially.
  auto resolve_one = [&](size_t index) -> Result<PlanNodeResolution> {
    const ProgramNode* node = nodes[index];
    // The program's info of each value bound, inputs then outputs.
    const std::span<const ModelProgram::ValueInfo* const> infos = program.node_value_infos(index);
    FERRITE_ASSIGN_OR_RETURN(const OperationDescriptor* op,
                             context.catalog.operation_for_node(node->id, node->operation_id));
    // The same node's resolution in the earlier call, if there is one.
    const PlanNodeResolution* earlier = nullptr;
    if (previous != nullptr && (*previous)[index].node_id() == node->id) {
      earlier = &(*previous)[index];
    }
    const std::vector<ResolvedValueBinding>* earlier_bindings =
        earlier != nullptr ? &earlier->values() : nullptr;
    const auto earlier_binding = [&](size_t slot) -> const ResolvedValueBinding* {
      return earlier_bindings != nullptr && slot < earlier_bindings->size()
                 ? &(*earlier_bindings)[slot]
                 : nullptr;
    };
    std::vector<ResolvedValueBinding> bindings;
    bindings.reserve(node->inputs.size() + node->outputs.size());
    bool all_reused = earlier != nullptr;
    bool reused = false;
    for (size_t i = 0; i < node->inputs.size() && i < op->inputs.size(); ++i) {
      FERRITE_ASSIGN_OR_RETURN(
          auto binding,
          make_binding(context, node->inputs[i], ValueBindingRole::kInput, static_cast<uint32_t>(i),
                       op->inputs[i], infos[i], sources, earlier_binding(bindings.size()), reused));
      all_reused = all_reused && reused;
      bindings.push_back(std::move(binding));
    }
    for (size_t i = 0; i < node->outputs.size() && i < op->outputs.size(); ++i) {
      FERRITE_ASSIGN_OR_RETURN(
          auto binding,
          make_binding(context, node->outputs[i], ValueBindingRole::kOutput,
                       static_cast<uint32_t>(i), op->outputs[i], infos[node->inputs.size() + i],
                       sources, earlier_binding(bindings.size()), reused));
      all_reused = all_reused && reused;
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
    if (earlier != nullptr) {
      // Every binding the earlier one (checked slot by slot above), or equal
      // to it field by field (a weight contract derived again, not shared).
      const bool same_bindings = all_reused ? bindings.size() == earlier_bindings->size()
                                            : earlier->values() == bindings;
      if (same_bindings && earlier->required_capabilities() == requested &&
          earlier->preferred_provider() == preferred) {
        return *earlier;
      }
    }
    // Resolved again; its estimator input's head is the earlier round's when
    // unchanged (resolve_node).
    auto resolved = resolve_node(context, *node, std::move(bindings), std::move(requested),
                                 std::move(preferred), earlier, index);
    if (resolved && digests == InputDigests::kSoleCandidateNow &&
        resolved->candidates().size() == 1) {
      // Computed once, shared by every copy of the candidate (DeferredSha256).
      (void)resolved->candidates().front().estimator_input_digest().hex();
    }
    return resolved;
  };
  return results_in_order<PlanNodeResolution>(nodes.size(), options.compile_threads(),
                                              kNodesPerChunk, resolve_one);
}

}  // namespace ferrite
