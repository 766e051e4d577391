#include "ferrite/compiler/joint_selection.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <memory>
#include <memory_resource>

#include <absl/container/inlined_vector.h>
#include <fmt/format.h>

#include "ferrite/core/disjoint_indices.h"
#include "ferrite/core/identity_hash_map.h"
#include "ferrite/core/identity_sort.h"
#include "ferrite/core/parallel_indices.h"

namespace ferrite {
namespace {

// A set of storage profiles as their ranks in policy order (bit r stands for
// storage_profile_order[r]). Every set the selection builds is a subset of
// the policy order (available_storage_profiles), so this is exact. Ranks
// 0..63 live in `low_`; a policy of more profiles spills into `high_`, which
// is sized alike for every set of one selection.
class RankSet {
 public:
  RankSet() = default;
  explicit RankSet(size_t ranks) : high_(ranks > 64 ? (ranks - 1) / 64 : 0, 0) {}

  void insert(size_t rank) {
    if (rank < 64) {
      low_ |= uint64_t{1} << rank;
    } else {
      high_[rank / 64 - 1] |= uint64_t{1} << (rank % 64);
    }
  }
  bool contains(size_t rank) const {
    if (rank < 64) return (low_ >> rank) & 1;
    const size_t word = rank / 64 - 1;
    return word < high_.size() && ((high_[word] >> (rank % 64)) & 1);
  }
  bool empty() const {
    return low_ == 0 && std::all_of(high_.begin(), high_.end(), [](uint64_t w) { return w == 0; });
  }
  // The smallest rank held; `none` when empty.
  size_t first(size_t none) const {
    if (low_ != 0) return static_cast<size_t>(std::countr_zero(low_));
    for (size_t w = 0; w < high_.size(); ++w) {
      if (high_[w] != 0) return 64 * (w + 1) + static_cast<size_t>(std::countr_zero(high_[w]));
    }
    return none;
  }
  RankSet& operator&=(const RankSet& other) {
    low_ &= other.low_;
    for (size_t w = 0; w < high_.size(); ++w) high_[w] &= other.high_[w];
    return *this;
  }
  friend auto operator<=>(const RankSet&, const RankSet&) = default;

 private:
  uint64_t low_ = 0;
  std::vector<uint64_t> high_;  // empty for policies of up to 64 profiles
};

// What a selection asks of the policy and the device, once per call.
class ProfileRanks {
 public:
  ProfileRanks(const RuntimePolicy& policy, const DeviceDescriptor& device)
      : order_(policy.storage_profile_order), offered_(order_.size()) {
    for (size_t rank = 0; rank < order_.size(); ++rank) {
      if (device.dynamic_storage_profiles.contains(order_[rank])) offered_.insert(rank);
    }
  }
  size_t size() const { return order_.size(); }
  const DynamicStorageProfile& profile(size_t rank) const { return order_[rank]; }
  RankSet none() const { return RankSet(order_.size()); }
  // available_storage_profiles(policy, device, requirement) as ranks —
  // the same test, without building a set of profiles per binding.
  RankSet available(const DynamicStorageRequirement& requirement) const {
    RankSet out = none();
    for (size_t rank = 0; rank < order_.size(); ++rank) {
      if (offered_.contains(rank) && requirement.accepts(order_[rank])) out.insert(rank);
    }
    return out;
  }
  // The rank of `profile`, or size() when the policy does not list it.
  size_t rank_of(const DynamicStorageProfile& profile) const {
    return static_cast<size_t>(std::find(order_.begin(), order_.end(), profile) - order_.begin());
  }

 private:
  const std::vector<DynamicStorageProfile>& order_;
  RankSet offered_;
};

// A resource this candidate binds (pointing into the resolution's bindings,
// which outlive the selection), with the profiles it allows for it.
struct Allowed {
  const ResourceId* id;
  RankSet ranks;
};

struct JointCandidate {
  const ProviderResourcePlan* plan;
  bool preferred;
  // One entry per distinct resource, in binding order: a resource bound
  // twice allows what both of its bindings allow.
  absl::InlinedVector<Allowed, 4> allowed;
  // Per workspace (node_workspaces order): the policy rank of its profile.
  // A workspace's resource is the candidate's own — its id names the node
  // and digests the estimate, which names the provider — so it constrains
  // no other node and no other candidate: its profile (the first available
  // in policy order) and its penalty are final here, and its id, a digest,
  // is derived only for the candidate chosen (add_workspace_profiles).
  absl::InlinedVector<size_t, 3> workspace_ranks;  // at most scratch, binding, persistent
};

// A chosen candidate's workspace penalties, added to a partial selection's.
void add_workspace_penalty(const JointCandidate& candidate, size_t profiles, uint64_t* penalty) {
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

void constrain(absl::InlinedVector<Allowed, 4>& allowed, const ResourceId& id,
               const RankSet& ranks) {
  for (auto& entry : allowed) {  // a few bindings per node: a linear search
    if (*entry.id == id) {
      entry.ranks &= ranks;
      return;
    }
  }
  allowed.push_back({&id, ranks});
}

Result<NodeCandidates> node_candidates(const PlanNodeResolution& resolution,
                                       const CapabilityCatalog& catalog,
                                       const ProfileRanks& ranks) {
  NodeCandidates out{&resolution, {}, {}};
  const auto& values = resolution.values();
  out.candidates.reserve(resolution.candidates().size());
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
      const RankSet allowed = requirement ? ranks.available(*requirement) : ranks.none();
      for (const auto& component : binding.storage().components()) {
        constrain(candidate.allowed, component.resource_id, allowed);
      }
    }
    bool workspace_unavailable = false;
    for (const auto* workspace : {&plan.scratch(), &plan.binding(), &plan.persistent()}) {
      if (!workspace->has_value()) continue;
      const size_t rank = ranks.available((*workspace)->storage).first(ranks.size());
      workspace_unavailable = workspace_unavailable || rank == ranks.size();
      candidate.workspace_ranks.push_back(rank);
    }
    if (workspace_unavailable) {  // the evidence names the workspaces' ids
      FERRITE_ASSIGN_OR_RETURN(auto workspaces, node_workspaces(resolution.node_id(), plan));
      for (const auto& workspace : workspaces) {
        if (ranks.available(workspace.requirement->storage).empty()) {
          empty.insert(workspace.base_id);
        }
      }
    }
    for (const auto& entry : candidate.allowed) {
      if (entry.ranks.empty()) empty.insert(*entry.id);
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

// Union-find over node indices joined by shared resource ids; components in
// order of their first node, members in node order.
std::vector<std::vector<size_t>> independent_components(const std::vector<NodeCandidates>& nodes) {
  DisjointIndices classes(nodes.size());
  // Looked up only, never iterated: hashed by the ids' addresses.
  IdentityHashMap<ResourceId, size_t> owner;
  owner.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const auto& candidate : nodes[i].candidates) {
      for (const auto& entry : candidate.allowed) {
        auto [it, inserted] = owner.emplace(*entry.id, i);
        if (!inserted) classes.join(it->second, i);
      }
    }
  }
  // A class's root is its smallest index, so walking roots in index order
  // gives the components by first node.
  std::vector<std::vector<size_t>> by_root(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) by_root[classes.root(i)].push_back(i);
  std::vector<std::vector<size_t>> out;
  for (auto& members : by_root) {
    if (!members.empty()) out.push_back(std::move(members));
  }
  return out;
}

// A resource's final profile, closed by the trail step of its last reference.
struct Closed {
  uint32_t resource;  // the component's resource number
  uint32_t rank;      // policy rank of its profile
};

// One step of a partial selection, shared between the DP states that extend
// it (a persistent list: extending a state never copies its history, so a
// chain of n nodes is solved in O(n) steps, not O(n²)). Steps, and the
// arrays they point to, live in the component's arena and are released
// together when the component is solved.
struct Trail {
  const Trail* parent = nullptr;
  size_t position = 0;  // index into the component's members
  size_t choice = 0;    // candidate index at that node
  // Resources whose last reference was this node, with their final profile.
  const Closed* closed = nullptr;
  size_t closed_count = 0;
  const uint64_t* penalty = nullptr;  // cumulative, counts at worst rank first
};

// The objective on partial selections of equal length (spec §8.3 step 4):
// preferred flags position by position (true first), then the penalty
// vector, then provider ids position by position — smaller is better. The
// positions before the two trails' common ancestor are equal, so only the
// diverging suffixes are compared.
bool precedes(const std::vector<NodeCandidates>& nodes, const std::vector<size_t>& members,
              size_t penalty_size, const Trail* a, const Trail* b) {
  if (a == b) return false;
  // The diverging suffixes are a few positions long (two states merge soon
  // after they part): inline, no allocation per comparison.
  absl::InlinedVector<const Trail*, 8> sa, sb;
  const Trail* x = a;
  const Trail* y = b;
  while (x != y) {
    sa.push_back(x);
    sb.push_back(y);
    x = x->parent;
    y = y->parent;
  }
  const auto candidate = [&](const Trail* t) -> const JointCandidate& {
    return nodes[members[t->position]].candidates[t->choice];
  };
  for (size_t i = sa.size(); i-- > 0;) {
    const bool pa = candidate(sa[i]).preferred;
    const bool pb = candidate(sb[i]).preferred;
    if (pa != pb) return pa;
  }
  if (!std::equal(a->penalty, a->penalty + penalty_size, b->penalty)) {
    return std::lexicographical_compare(a->penalty, a->penalty + penalty_size, b->penalty,
                                        b->penalty + penalty_size);
  }
  for (size_t i = sa.size(); i-- > 0;) {
    const auto& ia = candidate(sa[i]).plan->provider_id();
    const auto& ib = candidate(sb[i]).plan->provider_id();
    if (ia != ib) return ia < ib;
  }
  return false;
}

struct Solution {
  std::vector<size_t> partial;  // candidate index per member
  // Every resource with its profile, unordered (sorted by the caller).
  std::vector<std::pair<ResourceId, DynamicStorageProfile>> profiles;
};

// A component's node that no candidate could extend any partial selection to.
Result<Solution> no_joint_assignment(const NodeCandidates& node) {
  return make_error(ErrorCode::kInvalidExecutionPlan,
                    "no joint provider/storage assignment satisfies shared "
                    "resource constraints (at node `{}`)",
                    node.resolution->node_id().str())
      .with_field("node_id", node.resolution->node_id().str());
}

// Dynamic programming in node order (spec §8.3 step 3). A state is the
// constraint map of the resources still referenced by a later node of the
// component — resources numbered by first use, each with its still-allowed
// profiles, sorted by number; a resource whose last reference has been
// processed is closed: its profile (the first still-allowed one in policy
// order) and penalty are final and move into the trail. Two partial
// selections reaching the same state have identical futures, and the
// objective is translation-invariant in the suffix, so only the better one
// is kept — the result equals the exhaustive search; `precedes` orders
// distinct partial selections totally, so which state is expanded first
// does not matter.
Result<Solution> solve_component(const std::vector<NodeCandidates>& nodes,
                                 const std::vector<size_t>& members, const ProfileRanks& ranks) {
  using Entry = std::pair<uint32_t, RankSet>;  // resource number, allowed profiles
  using State = std::vector<Entry>;            // sorted by resource number
  const size_t profiles = ranks.size();
  const size_t penalty_size = profiles > 1 ? profiles - 1 : 0;
  IdentityHashMap<ResourceId, uint32_t> number;  // looked up only
  std::vector<const ResourceId*> resources;
  std::vector<size_t> last_reference;
  // Resources numbered by first use, and each one's last referencing member.
  for (size_t k = 0; k < members.size(); ++k) {
    for (const auto& candidate : nodes[members[k]].candidates) {
      for (const auto& entry : candidate.allowed) {
        auto [it, inserted] = number.emplace(*entry.id, static_cast<uint32_t>(resources.size()));
        if (inserted) {
          resources.push_back(entry.id);
          last_reference.push_back(k);
        }
        last_reference[it->second] = k;
      }
    }
  }
  // The member's candidates' constraints in compact form, made when the
  // member is reached (the candidates are read there anyway) into buffers
  // reused from member to member: kept for the whole component they were
  // written once and read once a whole program later, from memory rather
  // than cache on a large program (docs/performance.md, step 29).
  std::vector<State> constraints;
  const auto constrain_member = [&](size_t k) {
    const auto& candidates = nodes[members[k]].candidates;
    if (constraints.size() < candidates.size()) constraints.resize(candidates.size());
    for (size_t c = 0; c < candidates.size(); ++c) {
      State& entries = constraints[c];
      entries.clear();
      for (const auto& entry : candidates[c].allowed) {
        entries.emplace_back(number.find(*entry.id)->second, entry.ranks);  // numbered above
      }
      std::sort(entries.begin(), entries.end());
    }
    return candidates.size();
  };
  std::pmr::monotonic_buffer_resource arena;
  const auto make_array = [&]<class T>(size_t n, T*) {
    return static_cast<T*>(arena.allocate(std::max<size_t>(n, 1) * sizeof(T), alignof(T)));
  };
  uint64_t* const zero = make_array(penalty_size, static_cast<uint64_t*>(nullptr));
  std::fill_n(zero, penalty_size, 0);
  std::map<State, const Trail*> frontier{{State{}, nullptr}};
  State merged;
  std::vector<Closed> closing;
  for (size_t k = 0; k < members.size(); ++k) {
    const size_t member = members[k];
    const size_t candidate_count = constrain_member(k);
    std::map<State, const Trail*> next;
    for (const auto& [state, trail] : frontier) {
      for (size_t c = 0; c < candidate_count; ++c) {
        // The state's constraints intersected with the candidate's.
        const State& adding = constraints[c];
        merged.clear();
        bool feasible = true;
        size_t i = 0, j = 0;
        while (feasible && (i < state.size() || j < adding.size())) {
          if (j == adding.size() || (i < state.size() && state[i].first < adding[j].first)) {
            merged.push_back(state[i++]);
          } else if (i == state.size() || adding[j].first < state[i].first) {
            feasible = !adding[j].second.empty();
            merged.push_back(adding[j++]);
          } else {
            merged.emplace_back(state[i].first, state[i].second);
            merged.back().second &= adding[j].second;
            feasible = !merged.back().second.empty();
            ++i;
            ++j;
          }
        }
        if (!feasible) continue;
        uint64_t* penalty = make_array(penalty_size, static_cast<uint64_t*>(nullptr));
        const uint64_t* before = trail ? trail->penalty : zero;
        std::copy_n(before, penalty_size, penalty);
        add_workspace_penalty(nodes[member].candidates[c], profiles, penalty);
        State open;
        open.reserve(merged.size());
        closing.clear();
        for (auto& [resource, allowed] : merged) {
          if (last_reference[resource] != k) {
            open.emplace_back(resource, std::move(allowed));
            continue;
          }
          const size_t rank = allowed.first(profiles);
          closing.push_back({resource, static_cast<uint32_t>(rank)});
          if (rank > 0) ++penalty[profiles - 1 - rank];
        }
        Closed* closed = make_array(closing.size(), static_cast<Closed*>(nullptr));
        std::copy(closing.begin(), closing.end(), closed);
        Trail* step = new (make_array(1, static_cast<Trail*>(nullptr)))
            Trail{trail, k, c, closed, closing.size(), penalty};
        auto [slot, inserted] = next.emplace(std::move(open), step);
        if (!inserted && precedes(nodes, members, penalty_size, step, slot->second)) {
          slot->second = step;
        }
      }
    }
    if (next.empty()) return no_joint_assignment(nodes[member]);
    frontier = std::move(next);
  }
  // Every resource is closed by its last reference, so one state, empty,
  // remains; the selection is its trail.
  if (frontier.size() != 1 || !frontier.begin()->first.empty()) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "joint selection left resources without a final storage profile");
  }
  Solution solution;
  solution.partial.assign(members.size(), 0);
  solution.profiles.reserve(resources.size());
  for (const Trail* t = frontier.begin()->second; t != nullptr; t = t->parent) {
    solution.partial[t->position] = t->choice;
    for (size_t i = 0; i < t->closed_count; ++i) {
      solution.profiles.emplace_back(*resources[t->closed[i].resource],
                                     ranks.profile(t->closed[i].rank));
    }
  }
  return solution;
}

// The chosen candidate's workspaces, by id, with their profiles (ranked in
// node_candidates, in node_workspaces order).
Result<void> add_workspace_profiles(const PlanNodeResolution& resolution,
                                    const JointCandidate& chosen, const ProfileRanks& ranks,
                                    std::vector<std::pair<ResourceId, DynamicStorageProfile>>& profiles) {
  FERRITE_ASSIGN_OR_RETURN(auto workspaces, node_workspaces(resolution.node_id(), *chosen.plan));
  if (workspaces.size() != chosen.workspace_ranks.size()) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "node `{}` has {} workspaces but {} were ranked",
                      resolution.node_id().str(), workspaces.size(),
                      chosen.workspace_ranks.size());
  }
  for (size_t i = 0; i < workspaces.size(); ++i) {  // a repeat is refused by the caller
    profiles.emplace_back(std::move(workspaces[i].base_id),
                          ranks.profile(chosen.workspace_ranks[i]));
  }
  return {};
}

}  // namespace

Result<JointProviderSelection> select_providers_jointly(
    const std::vector<PlanNodeResolution>& resolutions, const CapabilityCatalog& catalog,
    const RuntimePolicy& policy, unsigned threads, SelectionWorkspaces workspaces) {
  // Nodes one thread takes at a time (a few microseconds each).
  constexpr size_t kNodesPerChunk = 32;
  const ProfileRanks ranks(policy, catalog.device());
  FERRITE_ASSIGN_OR_RETURN(
      std::vector<NodeCandidates> nodes,
      results_in_order<NodeCandidates>(resolutions.size(), threads, kNodesPerChunk,
                                       [&](size_t i) {
                                         return node_candidates(resolutions[i], catalog, ranks);
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
    FERRITE_ASSIGN_OR_RETURN(auto solution, solve_component(nodes, members, ranks));
    for (size_t k = 0; k < members.size(); ++k) {
      const auto& node = nodes[members[k]];
      const auto& chosen = node.candidates[solution.partial[k]];
      picked[members[k]] = &chosen.plan->provider_id();
      if (workspaces == SelectionWorkspaces::kNamed && !chosen.workspace_ranks.empty()) {
        FERRITE_RETURN_IF_ERROR(add_workspace_profiles(*node.resolution, chosen, ranks,
                                                       solution.profiles));
      }
    }
    // In id order: one component's resources go in at the end without a
    // search, the next component's wherever they fall; a resource named
    // twice (in this component or an earlier one) is refused.
    sort_by_identity(solution.profiles, [](const auto& p) -> const ResourceId& { return p.first; });
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
      for (const auto& entry : candidate.allowed) {
        auto chosen = selection.profiles.find(*entry.id);
        if (chosen != selection.profiles.end() &&
            !entry.ranks.contains(ranks.rank_of(chosen->second))) {
          conflicts.insert(*entry.id);
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
