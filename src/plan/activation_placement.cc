#include "ferrite/plan/activation_placement.h"

#include <algorithm>

#include <fmt/format.h>

#include "ferrite/compiler/value_placement.h"
#include "ferrite/core/checked_math.h"
#include "ferrite/core/identity_hash_map.h"
#include "ferrite/memory/activation_liveness.h"
#include "ferrite/memory/interval_packing.h"

namespace ferrite {
namespace {

Result<std::vector<std::pair<ProgramValueId, ProgramValueId>>> must_alias_edges(
    const ModelProgram& program, const OperationCatalog& operations) {
  std::vector<std::pair<ProgramValueId, ProgramValueId>> edges;
  for (const ProgramNode* node : program.nodes()) {
    FERRITE_ASSIGN_OR_RETURN(const OperationDescriptor* op,
                             operations.operation_for_node(node->id, node->operation_id));
    for (size_t i = 0; i < node->outputs.size() && i < op->outputs.size(); ++i) {
      if (const auto* must = std::get_if<MustAlias>(&op->outputs[i].alias())) {
        if (must->tensor_index < node->inputs.size()) {
          edges.emplace_back(node->outputs[i], node->inputs[must->tensor_index]);
        }
      }
    }
  }
  return edges;
}

struct ClassMember {
  const ActivationLiveBuffer* buffer;
  uint64_t bytes;      // the buffer's logical bytes
  uint64_t padded;     // rounded up to its alignment
  uint64_t alignment;
  ElementType element_type;
};

}  // namespace

nlohmann::json ActivationArenaSummary::to_json() const {
  return nlohmann::json{{"resource_id", resource_id.str()},
                        {"storage_profile", storage_profile},
                        {"buffers", buffers},
                        {"peak_bytes", peak_bytes},
                        {"load_bytes", load_bytes},
                        {"dedicated_bytes", dedicated_bytes}};
}

ValueAlignments chosen_activation_alignments(const ModelProgram& program,
                                             const std::vector<PlanNodeResolution>& resolutions,
                                             const JointProviderSelection& selection) {
  ValueAlignments out(program);
  for (size_t i = 0; i < resolutions.size(); ++i) {
    const PlanNodeResolution& resolution = resolutions[i];
    const ProviderId* chosen = selection.chosen_for(i, resolution.node_id());
    if (chosen == nullptr) continue;
    const ProviderResourcePlan* plan = resolution.candidate(*chosen);
    if (plan == nullptr) continue;
    const auto& values = resolution.values();
    for (size_t slot = 0; slot < values.size(); ++slot) {
      const ResolvedValueBinding& binding = values[slot];
      if (binding.usage() != BufferUsage::kActivations) continue;
      // Resolutions mirror the program's nodes: the info by position.
      const ModelProgram::ValueInfo* info = program.find_value_at(i, slot, binding.value_id());
      if (info == nullptr) continue;  // not a program value: no buffer to align
      const uint64_t* earlier = out.at_rank(info->rank);
      out.set_at_rank(info->rank, std::max(earlier != nullptr ? *earlier : 0,
                                           plan->value_alignment_bytes()));
    }
  }
  return out;
}

Result<ActivationPlacement> place_activations(const ActivationPlacementInput& input,
                                              const ValueAlignments& alignments) {
  const ModelProgram& program = input.family.program();
  FERRITE_ASSIGN_OR_RETURN(auto edges, must_alias_edges(program, input.operations));
  FERRITE_ASSIGN_OR_RETURN(auto buffers, activation_live_buffers(program, edges, input.retained));

  if (!input.dedicated_storages.indexes(program)) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "the dedicated value storages were built for another program");
  }
  if (alignments.ranks() != 0 && !alignments.indexes(program)) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "the value alignments were built for another program");
  }
  // Every value's storage: the dedicated one, replaced by its packed one
  // (by rank, below) where it has one.
  ActivationPlacement out{input.dedicated_storages, {}, ValueAlignments(program)};
  // The selected profile of each dynamic resource, found by one hash of its
  // id's address (the selection's map is ordered: a string compare a level).
  IdentityHashMap<ResourceId, const DynamicStorageProfile*> profile_of;
  profile_of.reserve(input.dedicated_selection.profiles.size());
  for (const auto& [id, profile] : input.dedicated_selection.profiles) {
    profile_of.emplace(id, &profile);
  }
  // One arena class per selected profile (a handful), in first-seen order
  // here; ordered by the profiles' text below.
  struct ArenaClass {
    const DynamicStorageProfile* profile;
    std::vector<ClassMember> members;
  };
  std::vector<ArenaClass> found;
  // The buffers carry their members' ranks in `program` (made from it
  // above): storages and alignments are read and written by them.
  for (const auto& buffer : buffers) {
    const ProgramValueId& representative = buffer.values.front();
    const ResolvedValueStorage* storage =
        input.dedicated_storages.at_rank(buffer.ranks.front());
    if (storage == nullptr || storage->components().size() != 1) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "activation `{}` has no single dedicated storage component",
                        representative.str());
    }
    const ResolvedStorageComponent& component = storage->components().front();
    auto profile = profile_of.find(component.resource_id);
    if (profile == profile_of.end()) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "activation `{}` resource has no selected storage profile",
                        representative.str());
    }
    uint64_t alignment = std::max<uint64_t>(1, element_type_size_bytes(component.element_type));
    for (const uint32_t rank : buffer.ranks) {
      if (const uint64_t* floor = alignments.at_rank(rank)) alignment = std::max(alignment, *floor);
    }
    if (!is_power_of_two(alignment)) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "activation `{}` alignment {} is not a power of two", representative.str(),
                        alignment);
    }
    const auto padded = checked_align_up(std::max<uint64_t>(component.length_bytes, 1), alignment);
    if (!padded) {
      return make_error(ErrorCode::kInvalidExecutionPlan, "activation `{}` size overflows",
                        representative.str());
    }
    const DynamicStorageProfile& selected = *profile->second;
    auto cls = std::find_if(found.begin(), found.end(),
                            [&](const ArenaClass& c) { return *c.profile == selected; });
    if (cls == found.end()) cls = found.insert(found.end(), ArenaClass{&selected, {}});
    cls->members.push_back(
        ClassMember{&buffer, component.length_bytes, *padded, alignment, component.element_type});
    for (const uint32_t rank : buffer.ranks) out.alignments.set_at_rank(rank, alignment);
  }

  // Profile text → members (the text is one-to-one with the profile).
  std::map<std::string, const std::vector<ClassMember>*> classes;
  for (const ArenaClass& c : found) classes.emplace(c.profile->to_string(), &c.members);
  for (const auto& [profile, class_members] : classes) {
    const std::vector<ClassMember>& members = *class_members;
    std::vector<PackingBuffer> requests;
    requests.reserve(members.size());
    uint64_t dedicated = 0;
    for (size_t i = 0; i < members.size(); ++i) {
      requests.push_back(PackingBuffer{.id = i,
                                       .lower = members[i].buffer->lower,
                                       .upper = members[i].buffer->upper,
                                       .size = members[i].padded,
                                       .alignment = members[i].alignment});
      const auto total = checked_add(dedicated, members[i].padded);
      if (!total) {
        return make_error(ErrorCode::kInvalidExecutionPlan, "activation bytes overflow u64");
      }
      dedicated = *total;
    }
    FERRITE_ASSIGN_OR_RETURN(PackingSolution solution, pack_intervals(requests));
    FERRITE_ASSIGN_OR_RETURN(uint64_t checked_peak, verify_packing(requests, solution.offsets));
    FERRITE_ASSIGN_OR_RETURN(
        ResourceId arena,
        hashed_resource_id("activation-arena", input.family.fingerprint(), profile));
    for (size_t i = 0; i < members.size(); ++i) {
      for (const uint32_t rank : members[i].buffer->ranks) {
        FERRITE_ASSIGN_OR_RETURN(
            auto storage, ResolvedValueStorage::single(arena, solution.offsets[i], members[i].bytes,
                                                       members[i].element_type));
        out.value_storages.set_at_rank(rank, std::move(storage));
      }
    }
    out.arenas.push_back(ActivationArenaSummary{.resource_id = arena,
                                                .storage_profile = profile,
                                                .buffers = members.size(),
                                                .peak_bytes = checked_peak,
                                                .load_bytes = solution.load,
                                                .dedicated_bytes = dedicated});
  }
  std::sort(out.arenas.begin(), out.arenas.end(),
            [](const auto& a, const auto& b) { return a.resource_id < b.resource_id; });
  return out;
}

}  // namespace ferrite
