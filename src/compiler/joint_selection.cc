#include "ferrite/compiler/joint_selection.h"

#include <algorithm>
#include <cstdint>
#include <memory>

#include <fmt/format.h>

#include "ferrite/core/disjoint_indices.h"
#include "ferrite/core/identity_hash_map.h"
#include "ferrite/core/parallel_indices.h"

namespace ferrite {
namespace {

using ProfileSet = std::set<DynamicStorageProfile>;
using ConstraintMap = std::map<ResourceId, ProfileSet>;

struct JointCandidate {
  const ProviderResourcePlan* plan;
  bool preferred;
  ConstraintMap allowed;  // resource → profiles this provider can use for it
  // Per workspace (node_workspaces order): the policy rank of its profile.
  // A workspace's resource is the candidate's own — its id names the node
  // and digests the estimate, which names the provider — so it constrains
  // no other node and no other candidate: its profile (the first available
  // in policy order) and its penalty are final here, and its id, a digest,
  // is derived only for the candidate chosen (add_workspace_profiles).
  std::vector<size_t> workspace_ranks;
};

// The rank in policy order of the first profile `allowed` holds; order.size() if none.
size_t first_rank(const std::vector<DynamicStorageProfile>& order, const ProfileSet& allowed) {
  for (size_t rank = 0; rank < order.size(); ++rank) {
    if (allowed.contains(order[rank])) return rank;
  }
  return order.size();
}

// A chosen candidate's workspace penalties, added to a partial selection's.
void add_workspace_penalty(const JointCandidate& candidate, size_t profiles,
                           std::vector<uint64_t>& penalty) {
  for (size_t rank : candidate.workspace_ranks) {
    if (rank > 0) ++penalty[profiles - 1 - rank];
  }
}

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
      return make_error(ErrorCode::kInvalidExecutionPlan, "provider `{}` is not in the catalog",
                        plan.provider_id().str());
    }
    JointCandidate candidate{&plan, resolution.preferred_provider() == plan.provider_id(), {}, {}};
    std::set<ResourceId> empty;
    for (const auto& binding : values) {
      if (binding.usage() == BufferUsage::kWeights) continue;
      const auto* requirement = descriptor->dynamic_storage_for(binding.role(), binding.ordinal());
      ProfileSet allowed =
          requirement ? available_storage_profiles(policy, device, *requirement) : ProfileSet{};
      // Per component, not per distinct id (resource_ids() builds a set):
      // constraining one id twice by the same set changes nothing.
      for (const auto& component : binding.storage().components()) {
        constrain(candidate.allowed, component.resource_id, allowed);
      }
    }
    bool workspace_unavailable = false;
    for (const auto* workspace : {&plan.scratch(), &plan.binding(), &plan.persistent()}) {
      if (!workspace->has_value()) continue;
      const size_t rank = first_rank(
          policy.storage_profile_order,
          available_storage_profiles(policy, device, (*workspace)->storage));
      workspace_unavailable = workspace_unavailable || rank == policy.storage_profile_order.size();
      candidate.workspace_ranks.push_back(rank);
    }
    if (workspace_unavailable) {  // the evidence names the workspaces' ids
      FERRITE_ASSIGN_OR_RETURN(auto workspaces, node_workspaces(resolution.node_id(), plan));
      for (const auto& workspace : workspaces) {
        if (available_storage_profiles(policy, device, workspace.requirement->storage).empty()) {
          empty.insert(workspace.base_id);
        }
      }
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
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "node `{}` has no provider candidate with an available storage profile",
                      resolution.node_id().str())
        .with_field("node_id", resolution.node_id().str());
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
  DisjointIndices classes(nodes.size());
  // Looked up only, never iterated: hashed by the ids' addresses.
  IdentityHashMap<ResourceId, size_t> owner;
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const auto& candidate : nodes[i].candidates) {
      for (const auto& [id, _] : candidate.allowed) {
        auto [it, inserted] = owner.emplace(id, i);
        if (!inserted) classes.join(it->second, i);
      }
    }
  }
  std::map<size_t, std::vector<size_t>> groups;  // keyed by root = smallest index
  for (size_t i = 0; i < nodes.size(); ++i) groups[classes.root(i)].push_back(i);
  std::vector<std::vector<size_t>> out;
  for (auto& [root, members] : groups) out.push_back(std::move(members));
  std::sort(out.begin(), out.end());  // by first node index
  return out;
}

// One step of a partial selection, shared between the DP states that extend
// it (a persistent list: extending a state never copies its history, so a
// chain of n nodes is solved in O(n) steps, not O(n²)).
struct Trail {
  Trail() = default;
  Trail(const Trail&) = delete;
  Trail& operator=(const Trail&) = delete;
  // Unlinks the chain iteratively: a recursive release of a 100,000-node
  // chain would overflow the stack.
  ~Trail() {
    std::shared_ptr<Trail> p = std::move(parent);
    while (p && p.use_count() == 1) p = std::move(p->parent);
  }

  std::shared_ptr<Trail> parent;
  size_t position = 0;  // index into the component's members
  size_t choice = 0;    // candidate index at that node
  // Resources whose last reference was this node, with their final profile.
  std::vector<std::pair<ResourceId, DynamicStorageProfile>> closed;
  std::vector<uint64_t> penalty;  // cumulative, counts at worst rank first
};
using TrailPtr = std::shared_ptr<Trail>;

// The objective on partial selections of equal length (spec §8.3 step 4):
// preferred flags position by position (true first), then the penalty
// vector, then provider ids position by position — smaller is better. The
// positions before the two trails' common ancestor are equal, so only the
// diverging suffixes are compared.
bool precedes(const std::vector<NodeCandidates>& nodes, const std::vector<size_t>& members,
              const TrailPtr& a, const TrailPtr& b) {
  if (a == b) return false;
  std::vector<const Trail*> sa, sb;
  const Trail* x = a.get();
  const Trail* y = b.get();
  while (x != y) {
    sa.push_back(x);
    sb.push_back(y);
    x = x->parent.get();
    y = y->parent.get();
  }
  const auto candidate = [&](const Trail* t) -> const JointCandidate& {
    return nodes[members[t->position]].candidates[t->choice];
  };
  for (size_t i = sa.size(); i-- > 0;) {
    const bool pa = candidate(sa[i]).preferred;
    const bool pb = candidate(sb[i]).preferred;
    if (pa != pb) return pa;
  }
  if (a->penalty != b->penalty) return a->penalty < b->penalty;
  for (size_t i = sa.size(); i-- > 0;) {
    const auto& ia = candidate(sa[i]).plan->provider_id();
    const auto& ib = candidate(sb[i]).plan->provider_id();
    if (ia != ib) return ia < ib;
  }
  return false;
}

struct Solution {
  std::vector<size_t> partial;  // candidate index per member
  std::map<ResourceId, DynamicStorageProfile> profiles;
};

// A component's node that no candidate could extend any partial selection to.
Result<Solution> no_joint_assignment(const NodeCandidates& node) {
  return make_error(ErrorCode::kInvalidExecutionPlan,
                    "no joint provider/storage assignment satisfies shared "
                    "resource constraints (at node `{}`)",
                    node.resolution->node_id().str())
      .with_field("node_id", node.resolution->node_id().str());
}

// The selection the last frontier spells out: every resource is closed by the
// last member, so one state, empty, remains.
template <class State>
Result<Solution> solution_of(const std::map<State, TrailPtr>& frontier, size_t members) {
  if (frontier.size() != 1 || !frontier.begin()->first.empty()) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "joint selection left resources without a final storage profile");
  }
  Solution solution;
  solution.partial.assign(members, 0);
  for (const Trail* t = frontier.begin()->second.get(); t != nullptr; t = t->parent.get()) {
    solution.partial[t->position] = t->choice;
    for (const auto& [id, profile] : t->closed) solution.profiles.emplace(id, profile);
  }
  return solution;
}

// Dynamic programming in node order. A state is the constraint map of the
// resources still referenced by a later node of the component; a resource
// whose last reference has been processed is closed: its profile (the first
// still-allowed one in policy order) and penalty are final and move into the
// trail. Two partial selections reaching the same state have identical
// futures, and the objective is translation-invariant in the suffix, so only
// the better one is kept — the result equals the exhaustive search.
Result<Solution> solve_component(const std::vector<NodeCandidates>& nodes,
                                 const std::vector<size_t>& members, const RuntimePolicy& policy) {
  const auto& order = policy.storage_profile_order;
  const size_t penalty_size = order.size() > 1 ? order.size() - 1 : 0;
  // Looked up only, never iterated: hashed by the ids' addresses.
  IdentityHashMap<ResourceId, size_t> last_reference;
  for (size_t k = 0; k < members.size(); ++k) {
    for (const auto& candidate : nodes[members[k]].candidates) {
      for (const auto& [id, _] : candidate.allowed) last_reference[id] = k;
    }
  }
  std::map<ConstraintMap, TrailPtr> frontier{{ConstraintMap{}, nullptr}};
  for (size_t k = 0; k < members.size(); ++k) {
    const size_t member = members[k];
    std::map<ConstraintMap, TrailPtr> next;
    for (const auto& [state, trail] : frontier) {
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
        auto step = std::make_shared<Trail>();
        step->parent = trail;
        step->position = k;
        step->choice = c;
        step->penalty = trail ? trail->penalty : std::vector<uint64_t>(penalty_size, 0);
        add_workspace_penalty(nodes[member].candidates[c], order.size(), step->penalty);
        for (auto it = merged.begin(); it != merged.end();) {
          if (last_reference.at(it->first) != k) {
            ++it;
            continue;
          }
          const size_t rank = first_rank(order, it->second);
          if (rank < order.size()) {
            step->closed.emplace_back(it->first, order[rank]);
            if (rank > 0) ++step->penalty[order.size() - 1 - rank];
          }
          it = merged.erase(it);
        }
        TrailPtr extended = std::move(step);
        auto [slot, inserted] = next.emplace(std::move(merged), extended);
        if (!inserted && precedes(nodes, members, extended, slot->second)) slot->second = extended;
      }
    }
    if (next.empty()) return no_joint_assignment(nodes[member]);
    frontier = std::move(next);
  }
  return solution_of(frontier, members.size());
}

// solve_component over a compact form, for policies of at most 64 profiles
// (every one so far): a component's resources numbered by first use, a
// profile set as a bit mask over policy order (every allowed set is a subset
// of it: available_storage_profiles), a state as a vector sorted by resource
// number. The states, transitions and objective are solve_component's, so
// is the result: `precedes` orders distinct partial selections totally, so
// which state is expanded first does not matter.
Result<Solution> solve_component_compact(const std::vector<NodeCandidates>& nodes,
                                         const std::vector<size_t>& members,
                                         const RuntimePolicy& policy) {
  using Mask = uint64_t;
  using Entry = std::pair<uint32_t, Mask>;  // resource number, allowed profiles
  using State = std::vector<Entry>;         // sorted by resource number
  const auto& order = policy.storage_profile_order;
  const size_t penalty_size = order.size() > 1 ? order.size() - 1 : 0;
  IdentityHashMap<ResourceId, uint32_t> number;  // looked up only
  std::vector<const ResourceId*> resources;
  std::vector<size_t> last_reference;
  // Per member, per candidate: its constraints in compact form.
  std::vector<std::vector<State>> constraints(members.size());
  for (size_t k = 0; k < members.size(); ++k) {
    for (const auto& candidate : nodes[members[k]].candidates) {
      State entries;
      entries.reserve(candidate.allowed.size());
      for (const auto& [id, allowed] : candidate.allowed) {
        auto [it, inserted] = number.emplace(id, static_cast<uint32_t>(resources.size()));
        if (inserted) {
          resources.push_back(&id);
          last_reference.push_back(k);
        }
        last_reference[it->second] = k;
        Mask mask = 0;
        for (size_t rank = 0; rank < order.size(); ++rank) {
          if (allowed.contains(order[rank])) mask |= Mask{1} << rank;
        }
        entries.emplace_back(it->second, mask);
      }
      std::sort(entries.begin(), entries.end());
      constraints[k].push_back(std::move(entries));
    }
  }
  std::map<State, TrailPtr> frontier{{State{}, nullptr}};
  State merged;
  for (size_t k = 0; k < members.size(); ++k) {
    const size_t member = members[k];
    std::map<State, TrailPtr> next;
    for (const auto& [state, trail] : frontier) {
      for (size_t c = 0; c < constraints[k].size(); ++c) {
        // The state's constraints intersected with the candidate's.
        const State& adding = constraints[k][c];
        merged.clear();
        bool feasible = true;
        size_t i = 0, j = 0;
        while (feasible && (i < state.size() || j < adding.size())) {
          if (j == adding.size() || (i < state.size() && state[i].first < adding[j].first)) {
            merged.push_back(state[i++]);
          } else if (i == state.size() || adding[j].first < state[i].first) {
            feasible = adding[j].second != 0;
            merged.push_back(adding[j++]);
          } else {
            const Mask both = state[i].second & adding[j].second;
            feasible = both != 0;
            merged.emplace_back(state[i].first, both);
            ++i;
            ++j;
          }
        }
        if (!feasible) continue;
        auto step = std::make_shared<Trail>();
        step->parent = trail;
        step->position = k;
        step->choice = c;
        step->penalty = trail ? trail->penalty : std::vector<uint64_t>(penalty_size, 0);
        add_workspace_penalty(nodes[member].candidates[c], order.size(), step->penalty);
        State open;
        open.reserve(merged.size());
        for (const auto& [resource, mask] : merged) {
          if (last_reference[resource] != k) {
            open.emplace_back(resource, mask);
            continue;
          }
          for (size_t rank = 0; rank < order.size(); ++rank) {
            if ((mask >> rank) & 1) {
              step->closed.emplace_back(*resources[resource], order[rank]);
              if (rank > 0) ++step->penalty[order.size() - 1 - rank];
              break;
            }
          }
        }
        TrailPtr extended = std::move(step);
        auto [slot, inserted] = next.emplace(std::move(open), extended);
        if (!inserted && precedes(nodes, members, extended, slot->second)) slot->second = extended;
      }
    }
    if (next.empty()) return no_joint_assignment(nodes[member]);
    frontier = std::move(next);
  }
  return solution_of(frontier, members.size());
}

// The chosen candidate's workspaces, by id, with their profiles (ranked in
// node_candidates, in node_workspaces order).
Result<void> add_workspace_profiles(const PlanNodeResolution& resolution,
                                    const JointCandidate& chosen, const RuntimePolicy& policy,
                                    std::map<ResourceId, DynamicStorageProfile>& profiles) {
  FERRITE_ASSIGN_OR_RETURN(auto workspaces, node_workspaces(resolution.node_id(), *chosen.plan));
  if (workspaces.size() != chosen.workspace_ranks.size()) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "node `{}` has {} workspaces but {} were ranked",
                      resolution.node_id().str(), workspaces.size(),
                      chosen.workspace_ranks.size());
  }
  for (size_t i = 0; i < workspaces.size(); ++i) {
    if (!profiles.emplace(workspaces[i].base_id, policy.storage_profile_order[
                                                     chosen.workspace_ranks[i]])
             .second) {
      return make_error(ErrorCode::kInvalidExecutionPlan, "resource `{}` was assigned twice",
                        workspaces[i].base_id.str());
    }
  }
  return {};
}

}  // namespace

Result<JointProviderSelection> select_providers_jointly(
    const std::vector<PlanNodeResolution>& resolutions, const CapabilityCatalog& catalog,
    const RuntimePolicy& policy, unsigned threads, SelectionWorkspaces workspaces) {
  // Nodes one thread takes at a time (a few microseconds each).
  constexpr size_t kNodesPerChunk = 32;
  FERRITE_ASSIGN_OR_RETURN(
      std::vector<NodeCandidates> nodes,
      results_in_order<NodeCandidates>(resolutions.size(), threads, kNodesPerChunk,
                                       [&](size_t i) {
                                         return node_candidates(resolutions[i], catalog, policy);
                                       }));
  // A node resolved twice is refused before anything is solved (its private
  // workspaces would otherwise be named twice).
  IdentityHashSet<NodeId> selected;  // looked up only
  selected.reserve(nodes.size());
  for (const auto& node : nodes) {
    const NodeId& node_id = node.resolution->node_id();
    if (!selected.insert(node_id).second) {
      return make_error(ErrorCode::kInvalidExecutionPlan, "node `{}` was selected twice",
                        node_id.str());
    }
  }
  JointProviderSelection selection;
  std::vector<const ProviderId*> picked(nodes.size(), nullptr);  // by resolution index
  for (const auto& members : independent_components(nodes)) {
    FERRITE_ASSIGN_OR_RETURN(auto solution,
                             policy.storage_profile_order.size() <= 64
                                 ? solve_component_compact(nodes, members, policy)
                                 : solve_component(nodes, members, policy));
    for (size_t k = 0; k < members.size(); ++k) {
      const auto& node = nodes[members[k]];
      const auto& chosen = node.candidates[solution.partial[k]];
      picked[members[k]] = &chosen.plan->provider_id();
      if (workspaces == SelectionWorkspaces::kNamed && !chosen.workspace_ranks.empty()) {
        FERRITE_RETURN_IF_ERROR(add_workspace_profiles(*node.resolution, chosen, policy,
                                                       solution.profiles));
      }
    }
    // In id order: one component's resources go in at the end without a
    // search, the next component's wherever they fall.
    auto hint = selection.profiles.end();
    for (auto& [id, profile] : solution.profiles) {
      const size_t before = selection.profiles.size();
      hint = selection.profiles.emplace_hint(hint, id, profile);
      if (selection.profiles.size() == before) {
        return make_error(ErrorCode::kInvalidExecutionPlan, "resource `{}` was assigned twice",
                          id.str());
      }
      ++hint;
    }
  }
  selection.chosen.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const NodeId& node_id = nodes[i].resolution->node_id();
    if (picked[i] == nullptr) {  // every node is in exactly one component
      return make_error(ErrorCode::kInvalidExecutionPlan, "node `{}` was not selected",
                        node_id.str());
    }
    selection.chosen.emplace_back(node_id, *picked[i]);
  }
  // Typed evidence for every preferred provider that lost.
  for (size_t i = 0; i < nodes.size(); ++i) {
    const auto& node = nodes[i];
    const auto& preferred = node.resolution->preferred_provider();
    const NodeId& node_id = node.resolution->node_id();
    if (!preferred || selection.chosen[i].second == *preferred) continue;
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
        return make_error(
            ErrorCode::kInvalidExecutionPlan,
            "node `{}` preferred provider `{}` was not selected without a storage conflict",
            node_id.str(), preferred->str());
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
