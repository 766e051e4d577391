#include "ferrite/compiler/node_resolution.h"

#include "ferrite/core/json_array.h"
#include <algorithm>
#include <cassert>
#include <tuple>

#include <absl/container/inlined_vector.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ferrite/catalog/canonical_encoding.h"
#include "ferrite/compiler/tensor_inference.h"
#include "ferrite/core/fingerprint.h"

namespace ferrite {
namespace {

using nlohmann::json;

// Byte-range overlap of two storages in a shared resource.
bool storages_overlap(const ResolvedValueStorage& a, const ResolvedValueStorage& b) {
  return a.overlaps(b);
}

// One entry per binding of a node (a handful): inline, no allocation per
// resolution.
template <class T>
using PerBinding = absl::InlinedVector<T, 8>;

// `weights[i]` is the program weight binding i names (nullptr for none), as
// validate_semantic_bindings found it.
Result<void> check_weight_requirements(const ProgramNode& node,
                                       const std::vector<ResolvedValueBinding>& bindings,
                                       const PerBinding<const WeightReference*>& weights,
                                       std::set<WeightFormatId>& weight_formats,
                                       std::set<QuantizationFormatId>& quantization_formats) {
  for (size_t i = 0; i < bindings.size(); ++i) {
    const ResolvedValueBinding& binding = bindings[i];
    if (binding.usage() != BufferUsage::kWeights) continue;
    const WeightReference* weight = weights[i];
    if (!weight || !binding.weight() || binding.weight()->weight_id != weight->weight_id) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "node `{}` {} is not bound to its program weight", node.id.str(),
                        binding.describe())
          .with_field("node_id", node.id.str());
    }
    if (binding.weight()->has_quantized_components()) {
      weight_formats.insert(binding.weight()->format_id);
      const auto formats = binding.weight()->quantization_formats();
      quantization_formats.insert(formats.begin(), formats.end());
    }
  }
  return {};
}

// Each binding's usage and tensor must match what the program says it is.
// `weight_canonical[i]` becomes the context's encoding of binding i's weight
// contract once the binding is checked equal to that contract (empty when the
// context has none). `weights[i]` and `states[i]` become the program weight
// and state binding i names (nullptr for none): one look-up per binding for
// every later step of the resolution.
// `infos`, when not empty, is the program's node_value_infos for this very
// node (one per binding, the bindings being in the node's order: checked by
// validate_program_bindings first); otherwise each binding's value is looked up.
Result<void> validate_semantic_bindings(const NodeResolutionContext& context,
                                        const ProgramNode& node,
                                        const std::vector<ResolvedValueBinding>& bindings,
                                        std::span<const ModelProgram::ValueInfo* const> infos,
                                        std::vector<std::string_view>& weight_canonical,
                                        PerBinding<const WeightReference*>& weights,
                                        PerBinding<const StateSpec*>& states) {
  const ModelProgram& program = context.family.program();
  const bool by_position = infos.size() == bindings.size();
  weight_canonical.assign(bindings.size(), std::string_view());
  weights.assign(bindings.size(), nullptr);
  states.assign(bindings.size(), nullptr);
  for (size_t i = 0; i < bindings.size(); ++i) {
    const ResolvedValueBinding& binding = bindings[i];
    const ModelProgram::ValueInfo* info =
        by_position ? infos[i] : program.find_value(binding.value_id());
    if (const WeightReference* weight = info != nullptr ? info->weight : nullptr) {
      weights[i] = weight;
      // The program's tensor built only when it differs (for its error).
      const bool same_tensor = resolves_to(weight->tensor, binding.tensor());
      if (!same_tensor) FERRITE_RETURN_IF_ERROR(weight->tensor.resolve());
      std::optional<ResolvedWeightBinding> derived;
      FERRITE_ASSIGN_OR_RETURN(const ResolvedWeightBinding* contract,
                               weight_contract_for(context, weight->weight_id, derived));
      if (binding.usage() != BufferUsage::kWeights || binding.access() != TensorAccess::kRead ||
          !same_tensor || !binding.weight() ||
          (binding.weight() != contract && *binding.weight() != *contract)) {
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "node `{}` {} differs from weight `{}` semantics", node.id.str(),
                          binding.describe(), weight->weight_id.str())
            .with_field("node_id", node.id.str());
      }
      // The shared bytes only when the binding holds this very contract:
      // the binding keeps them alive for the estimator input that views them.
      if (!derived && binding.weight() == contract) {
        const auto* shared = find_shared_weight_contract(context, weight->weight_id);
        weight_canonical[i] = (*shared)->canonical;
      }
    } else if (const StateSpec* state = info != nullptr ? info->state : nullptr) {
      states[i] = state;
      const bool same_tensor = resolves_to(state->tensor, binding.tensor());
      if (!same_tensor) FERRITE_RETURN_IF_ERROR(state->tensor.resolve());
      if (binding.usage() != BufferUsage::kState || !same_tensor) {
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "node `{}` {} differs from state `{}` semantics", node.id.str(),
                          binding.describe(), state->id.str())
            .with_field("node_id", node.id.str());
      }
    } else if (binding.usage() != BufferUsage::kActivations) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "node `{}` {} must be bound as an activation", node.id.str(),
                        binding.describe())
          .with_field("node_id", node.id.str());
    }
  }
  return {};
}

Result<void> validate_program_bindings(const ProgramNode& node,
                                       const std::vector<ResolvedValueBinding>& bindings) {
  if (bindings.size() != node.inputs.size() + node.outputs.size()) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "node `{}` has {} bindings for {} inputs and {} outputs", node.id.str(),
                      bindings.size(), node.inputs.size(), node.outputs.size())
        .with_field("node_id", node.id.str());
  }
  for (size_t i = 0; i < bindings.size(); ++i) {
    const bool input = i < node.inputs.size();
    const auto& expected = input ? node.inputs[i] : node.outputs[i - node.inputs.size()];
    if (bindings[i].value_id() != expected) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "node `{}` binding {} names `{}`, expected `{}`", node.id.str(), i,
                        bindings[i].value_id().str(), expected.str())
          .with_field("node_id", node.id.str());
    }
  }
  return {};
}

std::vector<ResourceId> sorted_ids(std::set<ResourceId> ids) { return {ids.begin(), ids.end()}; }

Result<void> check_workspace_presence(const NodeId& node, const OperationDescriptor& op,
                                      const ProviderResourcePlan& plan) {
  auto check = [&](std::string_view kind, ResourcePresence presence, bool present) -> Result<void> {
    if (!presence_accepts(presence, present)) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "node `{}` provider `{}` {} the {} workspace that operation `{}` marks {}",
                        node.str(), plan.provider_id().str(), present ? "requests" : "omits", kind,
                        op.id.str(), resource_presence_name(presence))
          .with_field("node_id", node.str());
    }
    return {};
  };
  FERRITE_RETURN_IF_ERROR(check("scratch", op.resources.scratch, plan.scratch().has_value()));
  FERRITE_RETURN_IF_ERROR(check("binding", op.resources.binding, plan.binding().has_value()));
  FERRITE_RETURN_IF_ERROR(check("persistent", op.resources.persistent, plan.persistent().has_value()));
  return {};
}

}  // namespace

const std::shared_ptr<const SharedWeightContract>* find_shared_weight_contract(
    const NodeResolutionContext& context, const WeightId& weight_id) {
  if (context.weight_contracts == nullptr) return nullptr;
  auto it = context.weight_contracts->find(weight_id);
  return it == context.weight_contracts->end() ? nullptr : &it->second;
}

Result<const ResolvedWeightBinding*> weight_contract_for(
    const NodeResolutionContext& context, const WeightId& weight_id,
    std::optional<ResolvedWeightBinding>& scratch) {
  if (const auto* shared = find_shared_weight_contract(context, weight_id)) {
    return &(*shared)->contract;
  }
  FERRITE_ASSIGN_OR_RETURN(scratch, ResolvedWeightBinding::from_schema(
                                        context.execution_weight_schema, weight_id));
  return &*scratch;
}

std::string describe_plan_reject_reason(const PlanProviderRejectReason& reason) {
  if (std::holds_alternative<ProviderNotRegistered>(reason)) {
    return "not registered for this operation";
  }
  if (const auto* incompatible = std::get_if<ProviderIncompatible>(&reason)) {
    std::vector<std::string> parts;
    for (const auto& r : incompatible->reasons) parts.push_back(describe_reject_reason(r));
    return fmt::format("incompatible: {}", fmt::join(parts, "; "));
  }
  std::vector<std::string> ids;
  for (const auto& id : std::get<ProviderStorageIncompatible>(reason).resource_ids) {
    ids.emplace_back(id.str());
  }
  return fmt::format("no available storage profile for {}", fmt::join(ids, ", "));
}

json plan_reject_reason_to_json(const PlanProviderRejectReason& reason) {
  if (std::holds_alternative<ProviderNotRegistered>(reason)) return "not_registered";
  if (const auto* incompatible = std::get_if<ProviderIncompatible>(&reason)) {
    json reasons = json_array_of(incompatible->reasons, [&](const auto& r) {
      return reject_reason_to_json(r);
    });
    return json{{"incompatible", reasons}};
  }
  json ids = json::array();
  for (const auto& id : std::get<ProviderStorageIncompatible>(reason).resource_ids) {
    ids.push_back(id.str());
  }
  return json{{"storage_incompatible", ids}};
}

void encode_canonical(const PlanProviderRejectReason& reason, CanonicalEncoder& out) {
  if (std::holds_alternative<ProviderNotRegistered>(reason)) {
    out.string("not_registered");
    return;
  }
  out.begin_object();
  if (const auto* incompatible = std::get_if<ProviderIncompatible>(&reason)) {
    out.key("incompatible");
    out.begin_array();
    for (const auto& r : incompatible->reasons) encode_canonical(r, out);
    out.end_array();
  } else {
    out.key("storage_incompatible");
    out.id_array(std::get<ProviderStorageIncompatible>(reason).resource_ids);
  }
  out.end_object();
}

Result<ResourceId> workspace_base_id(const NodeId& node, std::string_view kind,
                                     const std::string& estimate_fingerprint) {
  if (!is_canonical_sha256(estimate_fingerprint)) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "workspace estimate fingerprint is not a canonical sha256");
  }
  std::string material = std::string(kind);
  material.push_back('\0');
  material += node.str();
  material.push_back('\0');
  material += estimate_fingerprint;
  return ResourceId::create(fmt::format("resource/{}/sha256/{}", kind, sha256_hex(material)));
}

namespace {
// The one test both functions below apply to each policy profile.
bool profile_usable(const DeviceDescriptor& device, const DynamicStorageRequirement& requirement,
                    const DynamicStorageProfile& profile) {
  return device.dynamic_storage_profiles.contains(profile) && requirement.accepts(profile);
}
}  // namespace

std::set<DynamicStorageProfile> available_storage_profiles(
    const RuntimePolicy& policy, const DeviceDescriptor& device,
    const DynamicStorageRequirement& requirement) {
  std::set<DynamicStorageProfile> out;
  for (const auto& p : policy.storage_profile_order) {
    if (profile_usable(device, requirement, p)) out.insert(p);
  }
  return out;
}

// available_storage_profiles(...) is not empty: the same test, stopping at
// the first profile and building no set (it runs for every binding of every
// candidate in every round).
bool profile_available(const RuntimePolicy& policy, const DeviceDescriptor& device,
                       const DynamicStorageRequirement& requirement) {
  return std::any_of(
      policy.storage_profile_order.begin(), policy.storage_profile_order.end(),
      [&](const DynamicStorageProfile& p) { return profile_usable(device, requirement, p); });
}

Result<std::vector<NodeWorkspace>> node_workspaces(const NodeId& node,
                                                   const ProviderResourcePlan& plan) {
  const std::tuple<NodeWorkspace::Slot, std::string_view,
                   const std::optional<ProviderWorkspaceRequirement>*>
      kinds[] = {{NodeWorkspace::kScratch, "scratch", &plan.scratch()},
                 {NodeWorkspace::kBinding, "binding", &plan.binding()},
                 {NodeWorkspace::kPersistent, "persistent", &plan.persistent()}};
  std::vector<NodeWorkspace> out;
  for (const auto& [slot, kind, workspace] : kinds) {
    if (!workspace->has_value()) continue;
    // Derived only for a plan with workspaces, and kept by the plan.
    FERRITE_ASSIGN_OR_RETURN(auto id, workspace_base_id(node, kind, plan.estimate_fingerprint()));
    out.push_back(NodeWorkspace{slot, kind, &**workspace, std::move(id)});
  }
  return out;
}

Result<PlanNodeResolution> PlanNodeResolution::create(
    NodeId node_id, OperationId operation_id, std::vector<ResolvedValueBinding> values,
    std::set<CapabilityId> required_capabilities, std::optional<ProviderId> preferred_provider,
    std::vector<ProviderResourcePlan> candidates,
    std::map<ProviderId, PlanProviderRejectReason> rejections,
    std::shared_ptr<const NodeEstimatorInput> estimator_input) {
  return create(std::move(node_id), std::move(operation_id),
                std::make_shared<const std::vector<ResolvedValueBinding>>(std::move(values)),
                std::move(required_capabilities), std::move(preferred_provider),
                std::move(candidates), std::move(rejections), std::move(estimator_input));
}

Result<PlanNodeResolution> PlanNodeResolution::create(
    NodeId node_id, OperationId operation_id,
    std::shared_ptr<const std::vector<ResolvedValueBinding>> values,
    std::set<CapabilityId> required_capabilities, std::optional<ProviderId> preferred_provider,
    std::vector<ProviderResourcePlan> candidates,
    std::map<ProviderId, PlanProviderRejectReason> rejections,
    std::shared_ptr<const NodeEstimatorInput> estimator_input) {
  if (values == nullptr) {
    return make_error(ErrorCode::kInvalidExecutionPlan, "node `{}` resolution has no bindings",
                      node_id.str())
        .with_field("node_id", node_id.str());
  }
  if (candidates.empty()) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "node `{}` has no provider whose binding and workspace storage requirements "
                      "intersect runtime offers and policy",
                      node_id.str())
        .with_field("node_id", node_id.str());
  }
  // Sorted only when out of order: sorting moves every plan out and back in
  // even when they are in order already (most nodes list one provider, or
  // the catalog's are in id order).
  const auto by_provider = [](const ProviderResourcePlan& a, const ProviderResourcePlan& b) {
    return a.provider_id() < b.provider_id();
  };
  if (!std::is_sorted(candidates.begin(), candidates.end(), by_provider)) {
    std::sort(candidates.begin(), candidates.end(), by_provider);
  }
  for (size_t i = 0; i < candidates.size(); ++i) {
    // Fields only: the estimate fingerprint is computed by the one constructor
    // (from_provider_output) from members nothing can change afterwards, and
    // build_plan_node re-checks the chosen plan's shape once.
    FERRITE_RETURN_IF_ERROR(candidates[i].validate_fields());
    if (i > 0 && candidates[i - 1].provider_id() == candidates[i].provider_id()) {
      return make_error(ErrorCode::kInvalidExecutionPlan, "node `{}` lists provider `{}` twice",
                        node_id.str(), candidates[i].provider_id().str())
          .with_field("node_id", node_id.str());
    }
    if (rejections.contains(candidates[i].provider_id())) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "node `{}` provider `{}` is both a candidate and rejected", node_id.str(),
                        candidates[i].provider_id().str())
          .with_field("node_id", node_id.str());
    }
  }
  for (const auto& [provider, reason] : rejections) {
    const auto* storage = std::get_if<ProviderStorageIncompatible>(&reason);
    if (!storage || storage->resource_ids.empty() ||
        !std::is_sorted(storage->resource_ids.begin(), storage->resource_ids.end()) ||
        std::adjacent_find(storage->resource_ids.begin(), storage->resource_ids.end()) !=
            storage->resource_ids.end()) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "node `{}` resolution rejection of `{}` must be a sorted, non-empty "
                        "storage incompatibility",
                        node_id.str(), provider.str())
          .with_field("node_id", node_id.str());
    }
  }
  std::unique_ptr<const Rare> rare;
  if (!required_capabilities.empty() || !rejections.empty()) {
    rare = std::make_unique<const Rare>(
        Rare{std::move(required_capabilities), std::move(rejections)});
  }
  return PlanNodeResolution(std::make_shared<const State>(
      State{std::move(node_id), std::move(operation_id), std::move(values),
            std::move(preferred_provider), std::move(candidates), std::move(rare),
            std::move(estimator_input)}));
}

const std::set<CapabilityId>& PlanNodeResolution::required_capabilities() const {
  static const std::set<CapabilityId> kNone;
  return state_->rare != nullptr ? state_->rare->required_capabilities : kNone;
}

const std::map<ProviderId, PlanProviderRejectReason>& PlanNodeResolution::rejections() const {
  static const std::map<ProviderId, PlanProviderRejectReason> kNone;
  return state_->rare != nullptr ? state_->rare->rejections : kNone;
}

bool operator==(const PlanNodeResolution& a, const PlanNodeResolution& b) {
  if (a.state_ == b.state_) return true;
  const auto& x = *a.state_;
  const auto& y = *b.state_;
  return x.node_id == y.node_id && x.operation_id == y.operation_id && *x.values == *y.values &&
         a.required_capabilities() == b.required_capabilities() &&
         x.preferred_provider == y.preferred_provider && x.candidates == y.candidates &&
         a.rejections() == b.rejections();
}

const ProviderResourcePlan* PlanNodeResolution::candidate(const ProviderId& provider) const {
  for (const auto& plan : state_->candidates) {
    if (plan.provider_id() == provider) return &plan;
  }
  return nullptr;
}

uint64_t PlanNodeResolution::maximum_value_alignment() const {
  uint64_t out = 0;
  for (const auto& plan : state_->candidates) out = std::max(out, plan.value_alignment_bytes());
  return out;
}

Result<void> validate_resolved_bindings(const NodeId& node_id, const OperationDescriptor& op,
                                        const std::vector<ResolvedValueBinding>& bindings,
                                        const std::vector<ResolvedValueBinding>* unified_before) {
  const size_t inputs = op.inputs.size();
  if (bindings.size() != inputs + op.outputs.size()) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "node `{}` binds {} values; operation `{}` has {} slots", node_id.str(),
                      bindings.size(), op.id.str(), inputs + op.outputs.size())
        .with_field("node_id", node_id.str());
  }
  // Unification is a function of the contracts and the tensors alone.
  const bool unified = unified_before != nullptr &&
                       std::equal(bindings.begin(), bindings.end(), unified_before->begin(),
                                  unified_before->end(), [](const auto& now, const auto& then) {
                                    return now.tensor() == then.tensor();
                                  });
  TensorSymbols symbols;
  for (size_t i = 0; i < bindings.size(); ++i) {
    const auto& b = bindings[i];
    const bool is_input = i < inputs;
    const uint32_t ordinal = static_cast<uint32_t>(is_input ? i : i - inputs);
    const TensorContract& contract = is_input ? op.inputs[ordinal] : op.outputs[ordinal];
    if (b.role() != (is_input ? ValueBindingRole::kInput : ValueBindingRole::kOutput) ||
        b.ordinal() != ordinal) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "node `{}` binding {} is {}, out of slot order", node_id.str(), i,
                        b.describe())
          .with_field("node_id", node_id.str());
    }
    const AliasPolicy expected_alias = is_input ? AliasPolicy(NoAlias{}) : contract.alias();
    if (b.access() != contract.access() || b.alias() != expected_alias) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "node `{}` {} access or alias differs from operation `{}`", node_id.str(),
                        b.describe(), op.id.str())
          .with_field("node_id", node_id.str());
    }
    if (unified) continue;
    FERRITE_RETURN_IF_ERROR(unify_tensor(contract, b.tensor(), symbols, node_id,
                                         is_input ? "input" : "output", ordinal, b.value_id()));
  }
  // Inputs may share storage only as the same read-only value.
  for (size_t i = 0; i < inputs; ++i) {
    for (size_t j = i + 1; j < inputs; ++j) {
      const auto& a = bindings[i];
      const auto& b = bindings[j];
      if (!storages_overlap(a.storage(), b.storage())) continue;
      const bool same_read_value = a.value_id() == b.value_id() &&
                                   a.access() == TensorAccess::kRead &&
                                   b.access() == TensorAccess::kRead && a.tensor() == b.tensor() &&
                                   a.storage() == b.storage() && a.usage() == b.usage();
      if (!same_read_value) {
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "node `{}` {} and {} overlap in storage", node_id.str(), a.describe(),
                          b.describe())
            .with_field("node_id", node_id.str());
      }
    }
  }
  // Outputs overlap inputs only as their alias policy allows, never each other.
  for (size_t o = inputs; o < bindings.size(); ++o) {
    const auto& out = bindings[o];
    std::set<uint32_t> overlapping;
    for (size_t i = 0; i < inputs; ++i) {
      if (storages_overlap(out.storage(), bindings[i].storage())) {
        overlapping.insert(static_cast<uint32_t>(i));
      }
    }
    std::optional<uint32_t> target;
    bool must = false;
    if (const auto* may = std::get_if<MayAlias>(&out.alias())) target = may->tensor_index;
    if (const auto* m = std::get_if<MustAlias>(&out.alias())) {
      target = m->tensor_index;
      must = true;
    }
    bool ok = overlapping.empty() && !must;
    if (target && !overlapping.empty()) {
      ok = overlapping == std::set<uint32_t>{*target} &&
           out.storage() == bindings[*target].storage();
    }
    if (must && overlapping.empty()) ok = false;
    if (!ok) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "node `{}` {} storage overlap violates its alias policy {}", node_id.str(),
                        out.describe(), describe_alias_policy(out.alias()))
          .with_field("node_id", node_id.str());
    }
    for (size_t p = o + 1; p < bindings.size(); ++p) {
      if (storages_overlap(out.storage(), bindings[p].storage())) {
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "node `{}` outputs {} and {} overlap in storage", node_id.str(),
                          out.describe(), bindings[p].describe())
            .with_field("node_id", node_id.str());
      }
    }
  }
  return {};
}

namespace {

// The node's estimator input for all of its providers. The bindings are
// shared, not encoded: a resolution's input is hashed only if its plan is
// read (the chosen provider's, or a workspace id), and most resolutions are
// superseded by a later round first. The weight bytes are views into the
// context's contract encodings, kept alive with their owner; without an
// owner the values are encoded now.
Result<std::shared_ptr<const NodeEstimatorInput>> estimator_input_of(
    const NodeResolutionContext& context, const ProgramNode& node,
    const std::string& operation_fingerprint,
    const std::shared_ptr<const std::vector<ResolvedValueBinding>>& bindings,
    const std::vector<std::string_view>& weight_canonical,
    const std::set<CapabilityId>& capabilities, const std::set<WeightFormatId>& weight_formats,
    const std::set<QuantizationFormatId>& quantization_formats,
    const NodeEstimatorInput* earlier) {
  const bool views = std::any_of(weight_canonical.begin(), weight_canonical.end(),
                                 [](std::string_view bytes) { return !bytes.empty(); });
  // The views are kept alive by the bindings the input holds (each views
  // bytes of the shared contract its binding points at).
  return NodeEstimatorInput::encode_sharing_values(
      context.family.fingerprint(), operation_fingerprint, node.id, node.operation_id,
      node.required_version, node.attributes, bindings,
      views ? weight_canonical : std::vector<std::string_view>{}, capabilities, weight_formats,
      quantization_formats, earlier);
}

// Whether `now` are `then` with at most their storage moved: the same
// values in the same slots, with the same tensors, access, alias and usage,
// and the very same weight contracts. Everything resolve_node checks or
// derives before its storage checks and estimates is a function of these,
// the node and the context.
bool only_storage_moved(const std::vector<ResolvedValueBinding>& now,
                        const std::vector<ResolvedValueBinding>& then) {
  return std::equal(now.begin(), now.end(), then.begin(), then.end(),
                    [](const ResolvedValueBinding& a, const ResolvedValueBinding& b) {
                      return a.weight() == b.weight() && a.value_id() == b.value_id() &&
                             a.role() == b.role() && a.ordinal() == b.ordinal() &&
                             a.usage() == b.usage() && a.access() == b.access() &&
                             a.alias() == b.alias() && a.tensor() == b.tensor();
                    });
}

// The providers `earlier` found compatible with `node`, in the catalog's
// order (that of require_compatible_for_node): a resolution names each of
// them once, as a candidate or as a storage rejection. Empty when the
// catalog's providers do not account for all of them (then the caller asks
// the catalog).
std::vector<ProviderId> earlier_compatible(const CapabilityCatalog& catalog,
                                           const ProgramNode& node,
                                           const PlanNodeResolution& earlier) {
  auto row = catalog.providers().find(node.operation_id);
  if (row == catalog.providers().end()) return {};
  std::vector<ProviderId> out;
  out.reserve(earlier.candidates().size() + earlier.rejections().size());
  for (const OperationProviderDescriptor& descriptor : row->second) {
    if (earlier.candidate(descriptor.provider_id) != nullptr ||
        earlier.rejections().contains(descriptor.provider_id)) {
      out.push_back(descriptor.provider_id);
    }
  }
  if (out.size() != earlier.candidates().size() + earlier.rejections().size()) return {};
  return out;
}

// What validate_semantic_bindings and check_weight_requirements derive, for
// bindings an earlier round checked with only their storage moved since: the
// state each binding names, and the quantized formats of its weights.
void moved_binding_facts(const ModelProgram& program,
                         const std::vector<ResolvedValueBinding>& values,
                         std::span<const ModelProgram::ValueInfo* const> infos,
                         PerBinding<const StateSpec*>& states,
                         std::set<WeightFormatId>& weight_formats,
                         std::set<QuantizationFormatId>& quantization_formats) {
  const bool by_position = infos.size() == values.size();
  states.assign(values.size(), nullptr);
  for (size_t i = 0; i < values.size(); ++i) {
    const ResolvedValueBinding& binding = values[i];
    const ModelProgram::ValueInfo* info =
        by_position ? infos[i] : program.find_value(binding.value_id());
    if (info != nullptr && info->weight == nullptr) states[i] = info->state;
    if (binding.usage() == BufferUsage::kWeights && binding.weight() != nullptr &&
        binding.weight()->has_quantized_components()) {
      weight_formats.insert(binding.weight()->format_id);
      const auto formats = binding.weight()->quantization_formats();
      quantization_formats.insert(formats.begin(), formats.end());
    }
  }
}

// The resources of the bindings whose storage `descriptor` cannot take (no
// dynamic storage requirement for the slot, or none the policy and device
// offer); weights are placed by the materializer and never blocked here.
std::set<ResourceId> storage_blocked_resources(const NodeResolutionContext& context,
                                               const OperationProviderDescriptor& descriptor,
                                               const std::vector<ResolvedValueBinding>& values) {
  std::set<ResourceId> blocked;
  for (const auto& binding : values) {
    if (binding.usage() == BufferUsage::kWeights) continue;
    const auto* requirement = descriptor.dynamic_storage_for(binding.role(), binding.ordinal());
    if (requirement == nullptr ||
        !profile_available(context.policy, context.catalog.device(), *requirement)) {
      const auto ids = binding.storage().resource_ids();
      blocked.insert(ids.begin(), ids.end());
    }
  }
  return blocked;
}

}  // namespace

VerifiedEstimatorDescriptors verified_estimator_descriptors(const CapabilityCatalog& catalog,
                                                            const EstimatorRegistry& estimators) {
  VerifiedEstimatorDescriptors verified;
  for (const auto& [operation, providers] : catalog.providers()) {
    for (const OperationProviderDescriptor& descriptor : providers) {
      const OperationResourceEstimator* estimator = estimators.find(descriptor.provider_id);
      if (estimator != nullptr && estimator->descriptor() == descriptor) {
        verified.insert(&descriptor);
      }
    }
  }
  return verified;
}

Result<PlanNodeResolution> resolve_node(const NodeResolutionContext& context,
                                        const ProgramNode& node,
                                        std::vector<ResolvedValueBinding> bindings,
                                        std::set<CapabilityId> requested_capabilities,
                                        std::optional<ProviderId> preferred_provider,
                                        const PlanNodeResolution* earlier,
                                        std::optional<size_t> node_index_hint) {
  // 1. Policy, node, operation.
  FERRITE_RETURN_IF_ERROR(context.policy.validate());
  if (bindings.empty())
    return make_error(ErrorCode::kInvalidExecutionPlan, "node resolution requires bindings")
        .with_field("node_id", node.id.str());
  const ModelProgram& program = context.family.program();
  const bool hinted = node_index_hint && *node_index_hint < program.nodes().size() &&
                     program.nodes()[*node_index_hint] == &node;
  const std::optional<size_t> node_index =
      hinted ? node_index_hint : program.find_node_index(node.id);
  if (!node_index) {
    return make_error(ErrorCode::kInvalidExecutionPlan, "program has no node `{}`", node.id.str())
        .with_field("node_id", node.id.str());
  }
  // The program's infos of the node's values when `node` is the program's
  // own node object (the usual case), so the checks below need no look-ups.
  const std::span<const ModelProgram::ValueInfo* const> infos =
      program.nodes()[*node_index] == &node ? program.node_value_infos(*node_index)
                                            : std::span<const ModelProgram::ValueInfo* const>{};
  FERRITE_ASSIGN_OR_RETURN(const OperationDescriptor* op,
                           context.catalog.operation_for_node(node.id, node.operation_id));
  // 2. Attributes and bindings.
  // An earlier round of this node unified these same tensors with `op`.
  const std::vector<ResolvedValueBinding>* unified_before =
      earlier != nullptr && earlier->node_id() == node.id &&
              earlier->operation_id() == node.operation_id
          ? &earlier->values()
          : nullptr;
  // Shared from here on: by the resolution and by the estimator input, which
  // encodes them only if a digest is read. (Moving the vector keeps its
  // elements where they are.)
  const auto shared_bindings =
      std::make_shared<const std::vector<ResolvedValueBinding>>(std::move(bindings));
  const std::vector<ResolvedValueBinding>& values = *shared_bindings;
  // The node's estimator input less the provider, encoded once for all
  // providers, and the providers compatible with the node. When only storage
  // moved since the earlier round, both are that round's: its input with the
  // new bindings (the head and weight views unchanged), its providers; and
  // what it checked of everything but storage is not checked again.
  std::shared_ptr<const NodeEstimatorInput> node_input;
  std::vector<ProviderId> compatible;
  if (unified_before != nullptr && earlier->estimator_input() != nullptr &&
      earlier->required_capabilities() == requested_capabilities &&
      only_storage_moved(values, *unified_before)) {
    node_input =
        NodeEstimatorInput::with_moved_values(*earlier->estimator_input(), shared_bindings);
    if (node_input != nullptr) compatible = earlier_compatible(context.catalog, node, *earlier);
    if (compatible.empty()) node_input = nullptr;
  }
  const bool storage_moved_only = node_input != nullptr;
  if (!storage_moved_only) {
    FERRITE_RETURN_IF_ERROR(op->validate_attributes(node.id, node.attributes));
  }
  FERRITE_RETURN_IF_ERROR(validate_resolved_bindings(node.id, *op, values, unified_before));
  // What the estimate request needs of the bindings: gathered by the checks
  // below on the full path; on the storage-moved path only once a provider
  // needs an estimate (a node whose every provider is refused for storage or
  // re-issued needs no request at all).
  std::vector<std::string_view> weight_canonical;
  PerBinding<const StateSpec*> states;
  // Token-scaled states (K/V caches): their rows, which shape-dependent
  // workspaces (attention scores) may scale with; the same for every provider.
  std::vector<uint64_t> token_rows;
  // One estimate request for every provider, which owns the compatibility
  // request's sets from when it is made (what follows reads them there);
  // only the provider and its input fingerprint change from one provider to
  // the next. It is valid by construction
  // (OperationResourceEstimateRequest::validate): the catalog validated
  // `op`, step 2 the attributes and the bindings' slot order, `token_rows`
  // has a row per binding, and the fingerprint is the core's own deferred
  // digest.
  std::optional<OperationResourceEstimateRequest> estimate_request;
  const auto compatibility_request = [&](std::set<WeightFormatId> weight_formats,
                                         std::set<QuantizationFormatId> quantization_formats) {
    std::set<CapabilityId> required_capabilities = op->provider.required_capabilities;
    required_capabilities.insert(requested_capabilities.begin(), requested_capabilities.end());
    return ProviderCompatibilityRequest{
        .operation_id = node.operation_id,
        .required_version = node.required_version,
        .required_capabilities = std::move(required_capabilities),
        .required_weight_formats = std::move(weight_formats),
        .required_quantization_formats = std::move(quantization_formats)};
  };
  const auto make_estimate_request = [&](ProviderCompatibilityRequest&& request) {
    token_rows.reserve(values.size());
    for (const StateSpec* state : states) {
      const auto* scaled = state == nullptr
                               ? nullptr
                               : std::get_if<StateCapacityTokenScaled>(&state->capacity_demand);
      token_rows.push_back(scaled == nullptr ? 0 : scaled->maximum_tokens);
    }
    estimate_request.emplace(OperationResourceEstimateRequest{
        .node_id = node.id,
        .operation = op,
        .attributes = node.attributes,
        .provider_id = compatible.front(),  // set per provider below
        .values = values,
        .required_capabilities = std::move(request.required_capabilities),
        .required_weight_formats = std::move(request.required_weight_formats),
        .required_quantization_formats = std::move(request.required_quantization_formats),
        .input_fingerprint = {},
        .token_rows = token_rows});
  };
  if (!storage_moved_only) {
    PerBinding<const WeightReference*> weights;
    std::set<WeightFormatId> weight_formats;
    std::set<QuantizationFormatId> quantization_formats;
    FERRITE_RETURN_IF_ERROR(validate_program_bindings(node, values));
    FERRITE_RETURN_IF_ERROR(validate_semantic_bindings(context, node, values, infos,
                                                       weight_canonical, weights, states));
    // 3. Compatibility, before any estimator runs.
    FERRITE_RETURN_IF_ERROR(
        check_weight_requirements(node, values, weights, weight_formats, quantization_formats));
    ProviderCompatibilityRequest request =
        compatibility_request(std::move(weight_formats), std::move(quantization_formats));
    FERRITE_ASSIGN_OR_RETURN(compatible,
                             context.catalog.require_compatible_for_node(node.id, request));
    if (compatible.empty()) {  // the catalog reports none as an error; never read front() of none
      return make_error(ErrorCode::kInvalidExecutionPlan, "node `{}` has no compatible provider",
                        node.id.str())
          .with_field("node_id", node.id.str());
    }
    make_estimate_request(std::move(request));
  }
  // 4. Per compatible provider: storage, then the earlier plan re-issued or
  // a new estimate and its trusted plan.
  std::vector<ProviderResourcePlan> candidates;
  candidates.reserve(compatible.size());
  std::map<ProviderId, PlanProviderRejectReason> rejections;
  const DeviceDescriptor& device = context.catalog.device();
  for (const ProviderId& provider_id : compatible) {
    const OperationProviderDescriptor* descriptor =
        context.catalog.find_provider(node.operation_id, provider_id);
    if (!descriptor) {
      return make_error(ErrorCode::kInvalidExecutionPlan, "provider `{}` vanished from the catalog",
                        provider_id.str())
          .with_field("node_id", node.id.str());
    }
    std::set<ResourceId> blocked = storage_blocked_resources(context, *descriptor, values);
    if (!blocked.empty()) {
      rejections.emplace(provider_id, ProviderStorageIncompatible{sorted_ids(std::move(blocked))});
      continue;
    }
    const OperationResourceEstimator* estimator = context.estimators.find(provider_id);
    const bool verified = context.verified_descriptors != nullptr &&
                          context.verified_descriptors->contains(descriptor);
    if (!estimator || (!verified && !(estimator->descriptor() == *descriptor))) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "node `{}` provider `{}` has no registered estimator whose descriptor "
                        "equals the catalog's",
                        node.id.str(), provider_id.str())
          .with_field("node_id", node.id.str());
    }
    if (storage_moved_only && !estimator->reads_value_storage()) {
      // Only storage moved and this estimator does not read it: its answer
      // is the earlier round's, and so is everything checked of that plan
      // below (a function of the operation, the plan's fields, the policy
      // and the device), the input fingerprint apart.
      if (const ProviderResourcePlan* before = earlier->candidate(provider_id)) {
        candidates.push_back(
            before->with_input_fingerprint(node_input->fingerprint_for(provider_id)));
        continue;
      }
    }
    if (!estimate_request) {
      // Storage moved, and this provider needs an estimate: the facts the
      // skipped checks would have gathered.
      std::set<WeightFormatId> weight_formats;
      std::set<QuantizationFormatId> quantization_formats;
      moved_binding_facts(program, values, infos, states, weight_formats, quantization_formats);
      make_estimate_request(
          compatibility_request(std::move(weight_formats), std::move(quantization_formats)));
    }
    if (node_input == nullptr) {
      const std::string* operation_fingerprint = context.catalog.operation_fingerprint(op->id);
      if (operation_fingerprint == nullptr) {
        return make_error(ErrorCode::kInvalidExecutionPlan, "operation fingerprint is not cached");
      }
      FERRITE_ASSIGN_OR_RETURN(
          node_input,
          estimator_input_of(context, node, *operation_fingerprint, shared_bindings,
                             weight_canonical, estimate_request->required_capabilities,
                             estimate_request->required_weight_formats,
                             estimate_request->required_quantization_formats,
                             earlier != nullptr && earlier->node_id() == node.id
                                 ? earlier->estimator_input().get()
                                 : nullptr));
    }
    // Deferred: hashed only if this provider's plan is read (chosen, or a
    // blocked workspace named below).
    estimate_request->provider_id = provider_id;
    estimate_request->input_fingerprint = node_input->fingerprint_for(provider_id);
    assert(estimate_request->validate());
    FERRITE_ASSIGN_OR_RETURN(auto estimate, estimator->estimate_resources(*estimate_request));
    FERRITE_ASSIGN_OR_RETURN(auto plan,
                             ProviderResourcePlan::from_provider_output(
                                 *descriptor, estimate_request->input_fingerprint,
                                 std::move(estimate)));
    const uint64_t minimum = op->resources.minimum_value_alignment_bytes;
    if (plan.value_alignment_bytes() < minimum || plan.value_alignment_bytes() % minimum != 0) {
      return make_error(
                 ErrorCode::kInvalidExecutionPlan,
                 "node `{}` provider `{}` value alignment {} does not honour operation minimum {}",
                 node.id.str(), provider_id.str(), plan.value_alignment_bytes(), minimum)
          .with_field("node_id", node.id.str());
    }
    FERRITE_RETURN_IF_ERROR(check_workspace_presence(node.id, *op, plan));
    // A workspace's resource id (a digest of the estimate) is named only when
    // its storage is unavailable; the chosen plan's ids are derived when its
    // plan node is built (node_workspaces).
    bool any_blocked = false;
    for (const auto* workspace : {&plan.scratch(), &plan.binding(), &plan.persistent()}) {
      if (workspace->has_value() &&
          !profile_available(context.policy, device, (*workspace)->storage)) {
        any_blocked = true;
      }
    }
    std::set<ResourceId> blocked_workspaces;
    if (any_blocked) {
      FERRITE_ASSIGN_OR_RETURN(auto workspaces, node_workspaces(node.id, plan));
      for (auto& workspace : workspaces) {
        if (!profile_available(context.policy, device, workspace.requirement->storage)) {
          blocked_workspaces.insert(std::move(workspace.base_id));
        }
      }
    }
    if (!blocked_workspaces.empty()) {
      rejections.emplace(provider_id,
                         ProviderStorageIncompatible{sorted_ids(std::move(blocked_workspaces))});
      continue;
    }
    candidates.push_back(std::move(plan));
  }
  return PlanNodeResolution::create(node.id, node.operation_id, shared_bindings,
                                    std::move(requested_capabilities),
                                    std::move(preferred_provider), std::move(candidates),
                                    std::move(rejections), std::move(node_input));
}

}  // namespace ferrite
