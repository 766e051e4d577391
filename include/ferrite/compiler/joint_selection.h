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
//      policy order; objective, lexicographic: preferred flags position by
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
//   selection.chosen.at(node_id);  // the ProviderId that runs the node
#pragma once

#include <map>
#include <vector>

#include "ferrite/compiler/node_resolution.h"

namespace ferrite {

struct JointProviderSelection {
  std::map<NodeId, ProviderId> chosen;
  std::map<ResourceId, DynamicStorageProfile> profiles;  // every dynamic resource
  // Preferred providers that lost, with the typed storage evidence.
  std::map<NodeId, std::pair<ProviderId, ProviderStorageIncompatible>> preferred_rejections;
};

Result<JointProviderSelection> select_providers_jointly(
    const std::vector<PlanNodeResolution>& resolutions, const CapabilityCatalog& catalog,
    const RuntimePolicy& policy, unsigned threads = 1);

}  // namespace ferrite
