// ferrite/plan/memory_summary.h — per-resource sizes and the capacity check.
//
// Contract (spec §8.6, summarized): every binding component's offset is a
// multiple of its node's chosen provider value alignment; bindings of one
// resource must agree on usage and element type ("resource has conflicting
// usage, dtype, lifetime, or demand"); size = max end offset rounded up to the
// alignment (max provider alignment of its bindings). Workspaces are resources
// too (usage scratch/binding/persistent, u8). Kinds: static (weight arenas,
// Plan-scope persistent workspaces), state, activation, workspace. A
// workspace's formula is bound to the policy (spec §6.1): its size is the
// formula at the policy's maximum active sequences and the node's scheduled
// tokens (`node_tokens[i]`: the policy's maximum scheduled tokens, bounded by
// the extent of the node's token axis — see `workspace_tokens`); a resource
// several nodes share is sized for the largest. Feasibility:
// static bytes + minimum runnable bytes (states + activations + non-static
// workspaces at 1 sequence / 1 token) ≤ capacity − reserve, else
// "minimum runnable plan requires N bytes, exceeding usable capacity M".
// Dynamic resources carry the storage profile joint selection gave them. An
// activation arena may hold several element types; its dtype is then u8.
// `activation_arenas` (peak, LOAD, dedicated bytes per arena) is filled in by
// the plan builder from the activation placement.
//
// Token-scaled states (a state tensor of one token's row, demand
// TokenScaled{bytes_per_token, maximum_tokens}): every binding must end
// within `bytes_per_token` ("token-scaled state demand is smaller than its
// resolved resource range"); the resource is sized for `maximum_tokens` rows
// (its theoretical capacity) and records the demand, so a runtime can address
// row t at t × bytes_per_token. Minimum runnable bytes count one row, as the
// spec does; `allocated_bytes` counts what a runtime that allocates every
// resource up front needs, and it must fit the usable capacity too ("plan
// allocates N bytes ... exceeding usable capacity M").
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto tokens, workspace_tokens(program, value_tensors, policy));
//   FERRITE_ASSIGN_OR_RETURN(auto memory,
//                            build_memory_summary(nodes, selection, policy, {}, tokens));
//   memory.static_bytes;
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferrite/compiler/joint_selection.h"
#include "ferrite/compiler/runtime_policy.h"
#include "ferrite/compiler/tensor_inference.h"
#include "ferrite/core/canonical_encoder.h"
#include "ferrite/plan/activation_placement.h"
#include "ferrite/plan/plan_node.h"
#include "ferrite/program/model_program.h"
#include "ferrite/program/state_spec.h"

namespace ferrite {

enum class PlanResourceKind : uint8_t { kStatic, kState, kActivation, kWorkspace };
std::string_view plan_resource_kind_name(PlanResourceKind kind);

struct PlanResourceSummary {
  ResourceId resource_id;
  BufferUsage usage = BufferUsage::kActivations;
  ElementType element_type = ElementType::kU8;
  uint64_t size_bytes = 0;
  uint64_t alignment_bytes = 1;
  PlanResourceKind kind = PlanResourceKind::kActivation;
  std::optional<std::string> storage_profile;  // dynamic resources only
  // States with token-scaled demand: size_bytes covers maximum_tokens rows.
  std::optional<StateCapacityTokenScaled> token_scaled;

  nlohmann::json to_json() const;
  friend bool operator==(const PlanResourceSummary&, const PlanResourceSummary&) = default;
};

struct PlanMemorySummary {
  std::vector<PlanResourceSummary> resources;  // sorted by resource id
  uint64_t static_bytes = 0;
  uint64_t minimum_runnable_bytes = 0;
  uint64_t allocated_bytes = 0;  // every resource at its size (static included)
  uint64_t usable_capacity_bytes = 0;
  // Packed activation arenas (empty with dedicated activation storage).
  std::vector<ActivationArenaSummary> activation_arenas;

  nlohmann::json to_json() const;
  friend bool operator==(const PlanMemorySummary&, const PlanMemorySummary&) = default;
};

// The canonical bytes of `summary.to_json()` written straight into `out`,
// with no document in between (the plan build writes its payload's `memory`
// member this way: the document cost about 9 allocations per node).
void encode_canonical(const PlanMemorySummary& summary, CanonicalEncoder& out);

// The tokens each node (program order) schedules at most in one step: the
// policy's maximum scheduled tokens, bounded by the extent of the node's
// token axis (WorkTokens) or, for a node of fixed work, by the largest token
// extent of the program (the input capacities). At least 1.
Result<std::vector<uint64_t>> workspace_tokens(const ModelProgram& program,
                                               const ValueTensors& value_tensors,
                                               const RuntimePolicy& policy);

// `token_scaled_states`: the demand of each token-scaled state resource;
// `node_tokens`: workspace_tokens(), one entry per node.
Result<PlanMemorySummary> build_memory_summary(
    std::span<const PlanNode> nodes, const JointProviderSelection& selection,
    const RuntimePolicy& policy,
    const std::map<ResourceId, StateCapacityTokenScaled>& token_scaled_states,
    const std::vector<uint64_t>& node_tokens);

}  // namespace ferrite
