// ferrite/compiler/node_resolution.h — every provider that can run one node.
//
// Contract (spec §6.5): `resolve_node` takes one program node with its
// physical bindings (inputs in ordinal order, then outputs) and returns a
// `PlanNodeResolution`: it does NOT choose a provider. It lists every provider
// that survives, each with its trusted resource estimate, and the typed reason
// every other provider was dropped. Steps, in order:
//   1. the policy validates; the node exists; its operation is in the catalog;
//   2. attributes satisfy the operation's schema; the bindings satisfy the
//      per-node binding contract (slot order, access and alias equal the
//      contract, tensors unify with a fresh symbol table, inputs overlap only
//      as the same read-only value, outputs overlap inputs only as their alias
//      policy allows, outputs never overlap each other); weights bind as
//      Weights/Read with their program tensor, states as State, the rest as
//      Activations;
//   3. provider compatibility (version, capabilities, weight and quantization
//      formats of quantized weights only) — errors of spec §4.5 are raised
//      here, BEFORE any estimator is called;
//   4. per compatible provider in catalog order: every non-weight binding's
//      slot must declare a dynamic storage requirement that some policy-ordered,
//      device-offered profile satisfies, else StorageIncompatible{resource ids};
//      exactly one registered estimator whose descriptor equals the catalog's;
//      one estimate, bound to the core-computed input fingerprint; alignment and
//      workspace presence honour the operation; workspace storage must be
//      available, else StorageIncompatible{workspace base ids};
//   5. no candidate at all is an error.
// A preferred provider is recorded only as a preference.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto resolution,
//       resolve_node({family, schema, catalog, policy, estimators}, node, bindings, {}, std::nullopt));
//   for (const auto& plan : resolution.candidates()) plan.value_alignment_bytes();
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferrite/catalog/capability_catalog.h"
#include "ferrite/catalog/provider_compatibility.h"
#include "ferrite/catalog/resource_estimate.h"
#include "ferrite/catalog/resource_estimator.h"
#include "ferrite/catalog/value_binding.h"
#include "ferrite/compiler/estimator_registry.h"
#include "ferrite/compiler/runtime_policy.h"
#include "ferrite/core/identity_hash_map.h"
#include "ferrite/program/prepared_model_family.h"

namespace ferrite {

struct ProviderNotRegistered {
  friend bool operator==(const ProviderNotRegistered&, const ProviderNotRegistered&) = default;
};
struct ProviderIncompatible {
  std::vector<ProviderCompatibilityRejectReason> reasons;
  friend bool operator==(const ProviderIncompatible&, const ProviderIncompatible&) = default;
};
struct ProviderStorageIncompatible {
  std::vector<ResourceId> resource_ids;  // sorted, unique, non-empty
  friend bool operator==(const ProviderStorageIncompatible&,
                         const ProviderStorageIncompatible&) = default;
};
using PlanProviderRejectReason =
    std::variant<ProviderNotRegistered, ProviderIncompatible, ProviderStorageIncompatible>;

std::string describe_plan_reject_reason(const PlanProviderRejectReason& reason);
nlohmann::json plan_reject_reason_to_json(const PlanProviderRejectReason& reason);
// The bytes canonical_json(plan_reject_reason_to_json(reason)) would be,
// streamed (catalog/canonical_encoding.h): what a plan node's encoding writes.
void encode_canonical(const PlanProviderRejectReason& reason, CanonicalEncoder& out);

// "resource/{kind}/sha256/{hex}" for a node's scratch/binding/persistent workspace.
Result<ResourceId> workspace_base_id(const NodeId& node, std::string_view kind,
                                     const std::string& estimate_fingerprint);

// One workspace a provider plan requests, with its content-addressed base id.
struct NodeWorkspace {
  enum Slot : size_t { kScratch = 0, kBinding = 1, kPersistent = 2 };
  Slot slot;
  std::string_view kind;  // "scratch", "binding" or "persistent"
  const ProviderWorkspaceRequirement* requirement;  // borrowed from the plan
  ResourceId base_id;
};
// The workspaces `plan` requests, in scratch, binding, persistent order.
Result<std::vector<NodeWorkspace>> node_workspaces(const NodeId& node,
                                                   const ProviderResourcePlan& plan);

class PlanNodeResolution {
 public:
  // Shape rules (spec §6.5 step 9): at least one candidate; candidates sorted
  // by provider id and unique; no provider both candidate and rejected; every
  // stored rejection is StorageIncompatible with sorted, unique, non-empty ids.
  static Result<PlanNodeResolution> create(NodeId node_id, OperationId operation_id,
                                           std::vector<ResolvedValueBinding> values,
                                           std::set<CapabilityId> required_capabilities,
                                           std::optional<ProviderId> preferred_provider,
                                           std::vector<ProviderResourcePlan> candidates,
                                           std::map<ProviderId, PlanProviderRejectReason> rejections,
                                           std::shared_ptr<const NodeEstimatorInput>
                                               estimator_input = nullptr);
  // The same, with the bindings already shared (resolve_node shares them
  // with the estimator input, which encodes them only if a digest is read).
  // Errors: `values` is null, or as above.
  static Result<PlanNodeResolution> create(
      NodeId node_id, OperationId operation_id,
      std::shared_ptr<const std::vector<ResolvedValueBinding>> values,
      std::set<CapabilityId> required_capabilities, std::optional<ProviderId> preferred_provider,
      std::vector<ProviderResourcePlan> candidates,
      std::map<ProviderId, PlanProviderRejectReason> rejections,
      std::shared_ptr<const NodeEstimatorInput> estimator_input);

  const NodeId& node_id() const { return state_->node_id; }
  const OperationId& operation_id() const { return state_->operation_id; }
  const std::vector<ResolvedValueBinding>& values() const { return *state_->values; }
  // The same bindings, shared: what a plan node holds instead of a copy.
  const std::shared_ptr<const std::vector<ResolvedValueBinding>>& shared_values() const {
    return state_->values;
  }
  const std::set<CapabilityId>& required_capabilities() const;
  const std::optional<ProviderId>& preferred_provider() const {
    return state_->preferred_provider;
  }
  // Sorted by provider id; never empty.
  const std::vector<ProviderResourcePlan>& candidates() const { return state_->candidates; }
  const std::map<ProviderId, PlanProviderRejectReason>& rejections() const;
  const ProviderResourcePlan* candidate(const ProviderId& provider) const;
  // The largest value alignment any candidate asks for.
  uint64_t maximum_value_alignment() const;
  // The estimator input the candidates were estimated from (resolve_node's;
  // null for a resolution put together elsewhere): a later round of the same
  // node reuses its encoded head.
  const std::shared_ptr<const NodeEstimatorInput>& estimator_input() const {
    return state_->estimator_input;
  }

  // Field by field, less the estimator input (the candidates name it).
  friend bool operator==(const PlanNodeResolution& a, const PlanNodeResolution& b);

 private:
  // What few nodes have: capabilities the node requests itself, providers
  // refused for their storage. Apart, and null when both are empty: inline
  // they were 96 bytes of empty containers in nearly every resolution of
  // every round.
  struct Rare {
    std::set<CapabilityId> required_capabilities;
    std::map<ProviderId, PlanProviderRejectReason> rejections;
  };
  // Immutable once made, and shared: a copy of a resolution (a round that
  // keeps an earlier one, a compilation that keeps the last round) is one
  // reference count, not a copy of its candidates, bindings and maps — on a
  // program of 100,000 nodes those copies were fresh memory and a cache miss
  // per identity they retained (docs/performance.md, step 22). Hazard: a
  // moved-from resolution holds no state and may only be destroyed or
  // assigned to.
  struct State {
    NodeId node_id;
    OperationId operation_id;
    // Never null; shared with the estimator input, which encodes the
    // bindings only if a digest is read.
    std::shared_ptr<const std::vector<ResolvedValueBinding>> values;
    std::optional<ProviderId> preferred_provider;
    std::vector<ProviderResourcePlan> candidates;
    std::unique_ptr<const Rare> rare;  // null: no capabilities, no rejections
    std::shared_ptr<const NodeEstimatorInput> estimator_input;
  };
  explicit PlanNodeResolution(std::shared_ptr<const State> state) : state_(std::move(state)) {}
  std::shared_ptr<const State> state_;  // never null but when moved from
};

// One weight's execution-schema contract and its canonical bytes
// (encode_canonical(contract)), in one shared object. Every binding of the
// weight points at `contract` through its own reference to this object: one
// reference count per weight — compile threads binding different weights
// never touch one count (a single owner shared by all contracts was a
// contended atomic on every weight binding, in every round) — and an
// estimator input that views `canonical` is kept alive by the binding it
// holds. `checked` is the evidence that `contract` passed its own rules for
// the schema's logical dimensions and element type (program/weight_binding.h),
// which lets each binding of it skip them; it names `contract` by address, so
// the two live and die together here.
struct SharedWeightContract {
  ResolvedWeightBinding contract;
  std::string canonical;
  std::optional<CheckedWeightBinding> checked;
};
// Looked up by every weight binding of every round, never iterated: a table
// hashed by the weight id's address (a look-up reads no id text).
using WeightContracts = IdentityHashMap<WeightId, std::shared_ptr<const SharedWeightContract>>;

// The catalog's provider descriptors (addresses of catalog.providers()
// entries, which find_provider returns) that equal the descriptor of the
// estimator `estimators` registers for their provider: resolve_node's check
// of each candidate's estimator, made once per provider instead of once per
// node and candidate (a field-by-field compare, 0.9% of a compile).
using VerifiedEstimatorDescriptors = absl::flat_hash_set<const OperationProviderDescriptor*>;
VerifiedEstimatorDescriptors verified_estimator_descriptors(const CapabilityCatalog& catalog,
                                                            const EstimatorRegistry& estimators);

// Everything resolution reads besides the node itself.
struct NodeResolutionContext {
  const PreparedModelFamily& family;
  const WeightSchema& execution_weight_schema;  // from the selected materializer
  const CapabilityCatalog& catalog;
  const RuntimePolicy& policy;
  const EstimatorRegistry& estimators;
  // Optional: ResolvedWeightBinding::from_schema(execution_weight_schema, w)
  // and its canonical bytes for program weights, computed once per
  // compilation (ProgramWeightContracts). A weight it lacks is derived from
  // the schema. Bindings share these contracts instead of each holding a
  // copy, and a node's estimator input takes a binding's bytes from here
  // when the binding holds this very contract, instead of encoding it again
  // for every binding.
  const WeightContracts* weight_contracts = nullptr;
  // Optional: verified_estimator_descriptors(catalog, estimators), for this
  // context's catalog and estimators only (it holds addresses). A
  // descriptor it lacks is compared with its estimator's as before.
  const VerifiedEstimatorDescriptors* verified_descriptors = nullptr;
};

// The context's shared contract for `weight_id`; null when it has none.
const std::shared_ptr<const SharedWeightContract>* find_shared_weight_contract(
    const NodeResolutionContext& context, const WeightId& weight_id);

// The execution schema's contract for `weight_id`: the context's precomputed
// one when it has it (no copy), else derived into `scratch`.
Result<const ResolvedWeightBinding*> weight_contract_for(const NodeResolutionContext& context,
                                                         const WeightId& weight_id,
                                                         std::optional<ResolvedWeightBinding>& scratch);

// `earlier`, when given, is the same node's resolution in an earlier round
// with this context (same catalog, policy and family): its estimator input's
// head is reused when unchanged (NodeEstimatorInput), and its bindings'
// shapes are not unified again when every tensor is unchanged
// (validate_resolved_bindings). When the bindings are earlier's with only
// their storage moved (same values, slots, tensors, access, alias, usage and
// the very same weight contracts) and the requested capabilities are
// earlier's, what earlier checked and derived from all but storage is
// taken from it: the attributes, the program's and the semantic binding
// checks, the compatible providers (its candidates and rejections, in the
// catalog's order) and the estimator input (with the new bindings). The
// storage checks are made again, and so are the estimates and plans, except
// that a provider earlier had as a candidate whose estimator does not read
// storage (OperationResourceEstimator::reads_value_storage) gets its earlier
// plan again, echoing this round's input fingerprint.
// `node_index`, when given, is where a pass over the program's nodes found
// `node` in ModelProgram::nodes(): taken when that entry is `node` itself,
// instead of finding the node by id (any other hint is ignored).
Result<PlanNodeResolution> resolve_node(const NodeResolutionContext& context,
                                        const ProgramNode& node,
                                        std::vector<ResolvedValueBinding> bindings,
                                        std::set<CapabilityId> requested_capabilities,
                                        std::optional<ProviderId> preferred_provider,
                                        const PlanNodeResolution* earlier = nullptr,
                                        std::optional<size_t> node_index = std::nullopt);

// Checks bindings against an operation signature (spec §4.1 binding contract).
// `unified_before`, when given, holds bindings that passed these checks
// against this same operation (the node's earlier round): when each binding's
// tensor equals its slot's there, the shapes unify as they did then and are
// not unified again; every other check (slots, access, alias, storage
// overlap) runs whatever it holds.
Result<void> validate_resolved_bindings(
    const NodeId& node_id, const OperationDescriptor& operation,
    const std::vector<ResolvedValueBinding>& bindings,
    const std::vector<ResolvedValueBinding>* unified_before = nullptr);

// The profiles in the policy order that the device offers and `requirement`
// accepts; `profile_available` is true when there is at least one.
std::set<DynamicStorageProfile> available_storage_profiles(
    const RuntimePolicy& policy, const DeviceDescriptor& device,
    const DynamicStorageRequirement& requirement);
bool profile_available(const RuntimePolicy& policy, const DeviceDescriptor& device,
                       const DynamicStorageRequirement& requirement);

}  // namespace ferrite
