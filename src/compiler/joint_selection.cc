#include "ferrite/compiler/joint_selection.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

namespace ferrite {
namespace {

using ProfileSet = std::set<DynamicStorageProfile>;
using ConstraintMap = std::map<ResourceId, ProfileSet>;

struct JointCandidate {
  const ProviderResourcePlan* plan;
  bool preferred;
  ConstraintMap allowed;  // resource → profiles this provider can use for it
};

struct NodeCandidates {
  const PlanNodeResolution* resolution;
  std::vector<JointCandidate> candidates;  // preferred first, then provider id
  // Candidates dropped for an empty profile set: provider → resources.
  std::map<ProviderId, std::set<ResourceId>> dropped;
};

void constrain(ConstraintMap& map, const ResourceId& id, const ProfileSet& allowed) {
  auto [it, inserted] = map.emplace(id, allowed);
  if (inserted) return;
  ProfileSet both;
  std::set_intersection(it->second.begin(), it->second.end(), allowed.begin(), allowed.end(),
                        std::inserter(both, both.end()));
  it->second = std::move(both);
}

Result<NodeCandidates> node_candidates(const PlanNodeResolution& resolution,
                                       const CapabilityCatalog& catalog,
                                       const RuntimePolicy& policy) {
  NodeCandidates out{&resolution, {}, {}};
  const DeviceDescriptor& device = catalog.device();
  const auto& values = resolution.values();
  for (const auto& plan : resolution.candidates()) {
    const OperationProviderDescriptor* descriptor =
        catalog.find_provider(resolution.operation_id(), plan.provider_id());
    if (!descriptor) {
      return invalid_plan(fmt::format("provider `{}` is not in the catalog",
                                      plan.provider_id().str()));
    }
    JointCandidate candidate{&plan, resolution.preferred_provider() == plan.provider_id(), {}};
    std::set<ResourceId> empty;
    for (const auto& binding : values) {
      if (binding.usage() == BufferUsage::kWeights) continue;
      const auto* requirement = descriptor->dynamic_storage_for(binding.role(), binding.ordinal());
      ProfileSet allowed =
          requirement ? available_storage_profiles(policy, device, *requirement) : ProfileSet{};
      for (const auto& id : binding.storage().resource_ids()) constrain(candidate.allowed, id, allowed);
    }
    FERRITE_ASSIGN_OR_RETURN(auto workspaces, node_workspaces(resolution.node_id(), plan));
    for (const auto& workspace : workspaces) {
      constrain(candidate.allowed, workspace.base_id,
                available_storage_profiles(policy, device, workspace.requirement->storage));
    }
    for (const auto& [id, allowed] : candidate.allowed) {
      if (allowed.empty()) empty.insert(id);
    }
    if (!empty.empty()) {
      out.dropped.emplace(plan.provider_id(), std::move(empty));
      continue;
    }
    out.candidates.push_back(std::move(candidate));
  }
  if (out.candidates.empty()) {
    return make_error(Status(ErrorCode::kInvalidExecutionPlan,
                             fmt::format("node `{}` has no provider candidate with an available "
                                         "storage profile",
                                         resolution.node_id().str()))
                          .with_field("node_id", resolution.node_id().str()));
  }
  std::stable_sort(out.candidates.begin(), out.candidates.end(),
                   [](const JointCandidate& a, const JointCandidate& b) {
                     if (a.preferred != b.preferred) return a.preferred;
                     return a.plan->provider_id() < b.plan->provider_id();
                   });
  return out;
}

// Union-find over node indices joined by shared resource ids.
std::vector<std::vector<size_t>> independent_components(const std::vector<NodeCandidates>& nodes) {
  std::vector<size_t> parent(nodes.size());
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  std::map<ResourceId, size_t> owner;
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const auto& candidate : nodes[i].candidates) {
      for (const auto& [id, _] : candidate.allowed) {
        auto [it, inserted] = owner.emplace(id, i);
        if (!inserted) {
          size_t a = find(it->second), b = find(i);
          if (a != b) parent[std::max(a, b)] = std::min(a, b);
        }
      }
    }
  }
  std::map<size_t, std::vector<size_t>> groups;  // keyed by root = smallest index
  for (size_t i = 0; i < nodes.size(); ++i) groups[find(i)].push_back(i);
  std::vector<std::vector<size_t>> out;
  for (auto& [root, members] : groups) out.push_back(std::move(members));
  std::sort(out.begin(), out.end());  // by first node index
  return out;
}

// A partial selection: candidate index per node of the component so far.
using Partial = std::vector<size_t>;

// (preferred flags: true first, then provider ids) — smaller is better.
bool precedes(const std::vector<NodeCandidates>& nodes, const std::vector<size_t>& members,
              const Partial& a, const Partial& b) {
  for (size_t k = 0; k < a.size(); ++k) {
    const bool pa = nodes[members[k]].candidates[a[k]].preferred;
    const bool pb = nodes[members[k]].candidates[b[k]].preferred;
    if (pa != pb) return pa;
  }
  for (size_t k = 0; k < a.size(); ++k) {
    const auto& ia = nodes[members[k]].candidates[a[k]].plan->provider_id();
    const auto& ib = nodes[members[k]].candidates[b[k]].plan->provider_id();
    if (ia != ib) return ia < ib;
  }
  return false;
}

struct Solution {
  Partial partial;
  std::map<ResourceId, DynamicStorageProfile> profiles;
  std::vector<uint64_t> penalty;  // counts at worst rank first
};

Result<Solution> solve_component(const std::vector<NodeCandidates>& nodes,
                                 const std::vector<size_t>& members, const RuntimePolicy& policy) {
  std::map<ConstraintMap, Partial> frontier{{ConstraintMap{}, Partial{}}};
  for (size_t member : members) {
    std::map<ConstraintMap, Partial> next;
    for (const auto& [state, partial] : frontier) {
      for (size_t c = 0; c < nodes[member].candidates.size(); ++c) {
        ConstraintMap merged = state;
        bool feasible = true;
        for (const auto& [id, allowed] : nodes[member].candidates[c].allowed) {
          constrain(merged, id, allowed);
          if (merged.at(id).empty()) {
            feasible = false;
            break;
          }
        }
        if (!feasible) continue;
        Partial extended = partial;
        extended.push_back(c);
        auto [it, inserted] = next.emplace(std::move(merged), extended);
        if (!inserted && precedes(nodes, members, extended, it->second)) it->second = extended;
      }
    }
    if (next.empty()) {
      return make_error(Status(ErrorCode::kInvalidExecutionPlan,
                               fmt::format("no joint provider/storage assignment satisfies shared "
                                           "resource constraints (at node `{}`)",
                                           nodes[member].resolution->node_id().str()))
                            .with_field("node_id", nodes[member].resolution->node_id().str()));
    }
    frontier = std::move(next);
  }
  const auto& order = policy.storage_profile_order;
  std::optional<Solution> best;
  for (const auto& [state, partial] : frontier) {
    Solution s{partial, {}, std::vector<uint64_t>(order.size() > 1 ? order.size() - 1 : 0, 0)};
    for (const auto& [id, allowed] : state) {
      for (size_t rank = 0; rank < order.size(); ++rank) {
        if (allowed.contains(order[rank])) {
          s.profiles.emplace(id, order[rank]);
          if (rank > 0) ++s.penalty[order.size() - 1 - rank];
          break;
        }
      }
    }
    if (!best) {
      best = std::move(s);
      continue;
    }
    // Objective: preferred flags, then penalty vector, then provider ids.
    bool better = false;
    bool decided = false;
    for (size_t k = 0; k < members.size() && !decided; ++k) {
      const bool pa = nodes[members[k]].candidates[s.partial[k]].preferred;
      const bool pb = nodes[members[k]].candidates[best->partial[k]].preferred;
      if (pa != pb) {
        better = pa;
        decided = true;
      }
    }
    if (!decided && s.penalty != best->penalty) {
      better = s.penalty < best->penalty;
      decided = true;
    }
    if (!decided) better = precedes(nodes, members, s.partial, best->partial);
    if (better) best = std::move(s);
  }
  return std::move(*best);
}

}  // namespace

Result<JointProviderSelection> select_providers_jointly(
    const std::vector<PlanNodeResolution>& resolutions, const CapabilityCatalog& catalog,
    const RuntimePolicy& policy) {
  std::vector<NodeCandidates> nodes;
  for (const auto& resolution : resolutions) {
    FERRITE_ASSIGN_OR_RETURN(auto candidates, node_candidates(resolution, catalog, policy));
    nodes.push_back(std::move(candidates));
  }
  JointProviderSelection selection;
  for (const auto& members : independent_components(nodes)) {
    FERRITE_ASSIGN_OR_RETURN(auto solution, solve_component(nodes, members, policy));
    for (size_t k = 0; k < members.size(); ++k) {
      const auto& node = nodes[members[k]];
      const auto& chosen = node.candidates[solution.partial[k]];
      if (!selection.chosen.emplace(node.resolution->node_id(), chosen.plan->provider_id()).second) {
        return invalid_plan(fmt::format("node `{}` was selected twice",
                                        node.resolution->node_id().str()));
      }
    }
    for (auto& [id, profile] : solution.profiles) {
      if (!selection.profiles.emplace(id, profile).second) {
        return invalid_plan(fmt::format("resource `{}` was assigned twice", id.str()));
      }
    }
  }
  // Typed evidence for every preferred provider that lost.
  for (const auto& node : nodes) {
    const auto& preferred = node.resolution->preferred_provider();
    const NodeId& node_id = node.resolution->node_id();
    if (!preferred || selection.chosen.at(node_id) == *preferred) continue;
    std::set<ResourceId> conflicts;
    bool was_candidate = false;
    for (const auto& candidate : node.candidates) {
      if (candidate.plan->provider_id() != *preferred) continue;
      was_candidate = true;
      for (const auto& [id, allowed] : candidate.allowed) {
        auto chosen = selection.profiles.find(id);
        if (chosen != selection.profiles.end() && !allowed.contains(chosen->second)) {
          conflicts.insert(id);
        }
      }
      if (conflicts.empty()) {
        return invalid_plan(fmt::format(
            "node `{}` preferred provider `{}` was not selected without a storage conflict",
            node_id.str(), preferred->str()));
      }
    }
    if (!was_candidate) {
      if (auto it = node.dropped.find(*preferred); it != node.dropped.end()) {
        conflicts = it->second;
      } else if (auto r = node.resolution->rejections().find(*preferred);
                 r != node.resolution->rejections().end()) {
        const auto& ids = std::get<ProviderStorageIncompatible>(r->second).resource_ids;
        conflicts.insert(ids.begin(), ids.end());
      }
    }
    if (!conflicts.empty()) {
      selection.preferred_rejections.emplace(
          node_id, std::make_pair(*preferred, ProviderStorageIncompatible{
                                                 {conflicts.begin(), conflicts.end()}}));
    }
  }
  return selection;
}

}  // namespace ferrite
