// ferrite/plan/plan_node.h — one scheduled node of an execution plan.
//
// Contract (spec §8.4 step 10): a `PlanNode` records, for one program node,
// everything the runtime needs and everything a verifier re-derives: its
// dependencies (earlier nodes only, sorted), the operation and chosen provider
// with the typed selection evidence (`selection_reason`, and every rejected
// provider with its reason, sorted by provider id), the trusted resource plan
// of the chosen provider, the physical value bindings, exact-alias edges,
// state effects (one per state, sorted by state id), the workspace resource
// ids and the sorted unique union of every resource it touches. Plain data:
// `ExecutionPlan::build` is the only producer. `encode_canonical` writes the
// node's compact wire form (ferrite.plan/3, docs/plan-format.md): what every
// node of a plan shares — the operation's fingerprint and version, the
// provider's implementation and estimator identity, each value's tensor,
// usage, storage and weight — is left to the payload's `operations`,
// `providers` and `values` tables, what a reader derives (the resource union,
// the estimate fingerprint) and the defaults (a lone compatible provider, the
// `deterministic_compatible` reason) are left out; the plan payload embeds
// the node and the plan hash covers it. `to_json()` is that encoding as a
// document. In memory as on the wire, the operation's fingerprint and the
// provider's implementation fingerprint are the plan's, once per operation
// and provider (`ExecutionPlan::operation_fingerprint`,
// `provider_implementation_fingerprint`), not copies in every node.
//
// Example:
//   const PlanNode& node = plan.nodes()[0];
//   node.selection_reason == PlanSelectionReason::kPreferredCompatible;
//   node.to_json()["provider_id"];  // "provider.operation.reference"
//   *plan.provider_implementation_fingerprint(node.provider_id);  // 64 hex digits
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferrite/catalog/resource_estimate.h"
#include "ferrite/catalog/shared_value_bindings.h"
#include "ferrite/catalog/value_binding.h"
#include "ferrite/compiler/node_resolution.h"
#include "ferrite/core/canonical_encoder.h"
#include "ferrite/core/contract_version.h"
#include "ferrite/core/identity.h"
#include "ferrite/program/model_program.h"
#include "ferrite/program/state_spec.h"

namespace ferrite {

enum class PlanSelectionReason : uint8_t {
  kPreferredCompatible,      // the preferred provider was chosen
  kFallbackFromPreferred,    // a preference existed, another provider was chosen
  kDeterministicCompatible,  // no preference: the joint selection decided
};
// "preferred_compatible", "fallback_from_preferred", "deterministic_compatible".
std::string_view plan_selection_reason_name(PlanSelectionReason reason);

enum class PlanAliasKind : uint8_t { kMay, kMust };
std::string_view plan_alias_kind_name(PlanAliasKind kind);  // "may", "must"

// An output that shares exactly the storage of one of the node's inputs.
struct PlanExactAlias {
  ProgramValueId output_value_id;
  uint32_t output_ordinal = 0;
  ProgramValueId input_value_id;
  uint32_t input_ordinal = 0;
  PlanAliasKind kind = PlanAliasKind::kMay;

  nlohmann::json to_json() const;
  friend bool operator==(const PlanExactAlias&, const PlanExactAlias&) = default;
};

// What one node does to one program state (union of its bindings' accesses).
struct StateEffect {
  StateId state_id;
  TensorAccess access = TensorAccess::kRead;
  StateLifetime lifetime = StateLifetime::kSequence;
  std::vector<ResourceId> resource_ids;  // sorted, unique

  nlohmann::json to_json() const;
  friend bool operator==(const StateEffect&, const StateEffect&) = default;
};

struct PlanNode {
  NodeId id;
  std::vector<NodeId> dependencies;  // sorted, earlier nodes only
  OperationId operation_id;
  ContractVersion operation_version;  // the node's required version
  std::set<CapabilityId> required_capabilities;  // node-requested only
  std::map<AttributeId, SemanticValue> attributes;
  ProgramNodeWorkSpec work = WorkFixed{};
  ProviderId provider_id;
  PlanSelectionReason selection_reason = PlanSelectionReason::kDeterministicCompatible;
  std::map<ProviderId, PlanProviderRejectReason> rejected_providers;
  // Every provider that could run the node (the resolution's candidates,
  // sorted; includes `provider_id`): what joint selection chose among.
  std::vector<ProviderId> compatible_providers;
  ProviderResourcePlan provider_resources;
  // Inputs in ordinal order, then outputs; the resolution's own, shared.
  SharedValueBindings values;
  std::vector<PlanExactAlias> exact_aliases;
  std::vector<StateEffect> state_effects;  // sorted by state id
  std::optional<ResourceId> scratch_resource;
  std::optional<ResourceId> binding_resource;
  std::optional<ResourceId> persistent_resource;
  std::vector<ResourceId> resources;  // sorted, unique

  void encode_canonical(CanonicalEncoder& out) const;
  nlohmann::json to_json() const;
  friend bool operator==(const PlanNode&, const PlanNode&) = default;
};

}  // namespace ferrite
