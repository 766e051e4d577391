// ferrite/compiler/joint_selection.h — choose one provider per node, jointly
// with a storage profile per dynamic resource.
//
// Contract (spec §8.3): resources shared between nodes (an activation written
// by one node and read by another) must get ONE storage profile that every
// binding provider accepts, so provider choice is a small constraint problem:
//   1. per node, per candidate: the allowed profiles of each non-weight binding
//      resource and each workspace = policy order ∩ device offers ∩ the
//      provider's slot requirement (an empty set drops the candidate);
//      candidates ordered preferred first, then provider id;
//   2. nodes are split into independent components (union-find over shared
//      resource ids), ordered by their first node;
//   3. per component, dynamic programming in node order over constraint maps
//      (resource → still-allowed profiles); among identical states the earlier
//      partial selection (preferred flags, then provider ids) is kept;
//   4. each final state gives every resource its first still-allowed profile in
//      policy order (a workspace, its candidate's own resource, is settled in
//      step 1 and named only for the chosen candidate: SelectionWorkspaces); objective, lexicographic: preferred flags position by
//      position (true first), then the profile-penalty vector (counts of
//      resources at the worst policy rank first), then provider ids;
//   5. a preferred provider that was not chosen gets StorageIncompatible
//      evidence: the resources whose chosen profile it does not accept (must be
//      non-empty), or its resolution-time storage rejection.
// Step 1 runs on up to `threads` threads (each node on its own, in its own
// slot); the result, and the error when several nodes fail (the first node's),
// are those of one thread.
// Errors: "node has no provider candidate with an available storage profile",
// "no joint provider/storage assignment satisfies shared resource constraints",
// "preferred provider was not selected without a storage conflict".
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto selection, select_providers_jointly(resolutions, catalog, policy));
//   selection.chosen_for(i, resolutions[i].node_id());  // the ProviderId that runs node i
#pragma once

#include <map>
#include <utility>
#include <vector>

#include <absl/container/btree_map.h>

#include "ferrite/compiler/node_resolution.h"

namespace ferrite {

struct JointProviderSelection {
  // The chosen provider of each node, by the index of its resolution in the
  // vector that was selected from (aligned with it, so later phases walking
  // that vector find a node's provider without a search by id).
  std::vector<std::pair<NodeId, ProviderId>> chosen;
  // Every dynamic resource (workspaces only when kNamed), in id order. A
  // B-tree (a few entries per node) rather than a node per resource: before
  // packing there is one resource per activation, and at 100,000 nodes the
  // red-black tree's build and teardown were 4% of a compile.
  absl::btree_map<ResourceId, DynamicStorageProfile> profiles;
  // Preferred providers that lost, with the typed storage evidence.
  std::map<NodeId, std::pair<ProviderId, ProviderStorageIncompatible>> preferred_rejections;

  // The provider chosen for `node`, whose resolution was at `index`; null
  // when that entry is not the node's (a resolution vector other than the
  // one selected from).
  const ProviderId* chosen_for(size_t index, const NodeId& node) const {
    if (index < chosen.size() && chosen[index].first == node) return &chosen[index].second;
    return nullptr;
  }
  // The provider chosen for `node` wherever it is, or null: a linear search,
  // for tools and tests that have no resolution index.
  const ProviderId* find_chosen(const NodeId& node) const {
    for (const auto& [id, provider] : chosen) {
      if (id == node) return &provider;
    }
    return nullptr;
  }
};

// Whether `profiles` names the chosen providers' workspaces. Each workspace
// is its candidate's own resource (its id names the node and digests the
// estimate), so it never constrains another node: its profile is settled
// per candidate, and its id — a digest of the estimate and so of the
// estimator input — is derived only for the chosen candidate, and only when
// named. A selection made only to place activations (the compiler's before
// packing, which re-selects over the packed resolutions) need not name them.
enum class SelectionWorkspaces { kNamed, kOmitted };

Result<JointProviderSelection> select_providers_jointly(
    const std::vector<PlanNodeResolution>& resolutions, const CapabilityCatalog& catalog,
    const RuntimePolicy& policy, unsigned threads = 1,
    SelectionWorkspaces workspaces = SelectionWorkspaces::kNamed);

}  // namespace ferrite
