#include "ferrite/plan/storage_sharing.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <variant>

#include <fmt/format.h>

#include "ferrite/core/checked_math.h"
#include "ferrite/core/identity_hash_map.h"
#include "ferrite/memory/activation_liveness.h"
#include "ferrite/memory/value_classes.h"
#include "ferrite/memory/interval_packing.h"
#include "ferrite/program/value_rank_table.h"

namespace ferrite {
namespace {

struct Piece {
  uint64_t start;
  uint64_t end;
  const ProgramValueId* value;
  const ResolvedValueBinding* binding;
};

// Non-activation resources: any byte overlap between different values must be
// an exact alias with identical storage. A sweep by start offset compares each
// piece with the piece reaching furthest so far; a violating pair always meets
// such a comparison.
Result<void> check_exact_sharing(std::vector<Piece>& pieces, ValueClasses& classes) {
  std::sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) {
    return std::tie(a.start, a.end, *a.value) < std::tie(b.start, b.end, *b.value);
  });
  const Piece* reach = nullptr;
  for (const Piece& p : pieces) {
    if (reach != nullptr && p.start < reach->end && *p.value != *reach->value) {
      const bool exact = classes.find(*p.value) == classes.find(*reach->value) &&
                         p.binding->storage() == reach->binding->storage();
      if (!exact) {
        const auto& [first, second] = std::minmax(*p.value, *reach->value);
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "values `{}` and `{}` overlap in storage without an exact alias",
                          first.str(), second.str())
            .with_field("value_id", first.str())
            .with_field("other_value_id", second.str());
      }
    }
    if (reach == nullptr || p.end > reach->end) reach = &p;
  }
  return {};
}

std::string describe_state(const StateSpec& state) {
  std::string demand = "fixed per scope";
  if (const auto* scaled = std::get_if<StateCapacityTokenScaled>(&state.capacity_demand)) {
    demand = fmt::format("token-scaled {} bytes x {} tokens", scaled->bytes_per_token,
                         scaled->maximum_tokens);
  }
  return fmt::format("`{}` (lifetime {}, demand {}, initialization {})", state.id.str(),
                     state_lifetime_name(state.lifetime), demand,
                     state_initialization_name(state.initialization));
}

// The states bound in one resource (spec §3.3, §8.6): zero initialization
// needs Sequence lifetime (the runtime zeroes a sequence's backing; a
// Request/Step state has no such moment), and states sharing a resource must
// agree on lifetime, capacity demand and initialization — else the resource
// would be zeroed, sized or reclaimed by two different rules.
Result<void> check_state_resource(const ModelProgram& program, const ResourceId& resource,
                                  const std::vector<Piece>& pieces) {
  const StateSpec* first = nullptr;
  for (const Piece& p : pieces) {
    if (p.binding->usage() != BufferUsage::kState) continue;
    const StateSpec* it = program.find_state_by_value(*p.value);
    if (it == nullptr) continue;  // check_coverage names values without a state
    if (it->initialization == StateInitialization::kZero &&
        it->lifetime != StateLifetime::kSequence) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "state {}: zero initialization requires semantic Sequence state backing",
                        describe_state(*it))
          .with_field("state_id", it->id.str())
          .with_field("resource_id", resource.str());
    }
    if (first == nullptr) {
      first = it;
    } else if (first->lifetime != it->lifetime || first->capacity_demand != it->capacity_demand ||
               first->initialization != it->initialization) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "resource `{}` merges states of different lifetime, demand or "
                        "initialization: {} and {}",
                        resource.str(), describe_state(*first), describe_state(*it))
          .with_field("resource_id", resource.str())
          .with_field("state_id", first->id.str())
          .with_field("other_state_id", it->id.str());
    }
  }
  return {};
}

}  // namespace

Result<void> check_storage_sharing(const ModelProgram& program, std::span<const PlanNode> nodes,
                                   std::span<const ResolvedValueBinding* const> bound,
                                   const std::set<ProgramValueId>& retained) {
  ValueClasses classes;
  std::vector<std::pair<ProgramValueId, ProgramValueId>> edges;
  for (const auto& node : nodes) {
    for (const auto& alias : node.exact_aliases) {
      classes.join(alias.output_value_id, alias.input_value_id);
      edges.emplace_back(alias.output_value_id, alias.input_value_id);
    }
  }
  // Members of one alias class share one storage: the first member's (in id
  // order), kept at the class root's rank.
  ValueRankTable<const ResolvedValueBinding*> class_storage(program);
  for (const ResolvedValueBinding* binding : bound) {
    const ProgramValueId& id = binding->value_id();
    const ProgramValueId& root = classes.find(id);
    const ResolvedValueBinding* seen = class_storage.value_or(root, nullptr);
    if (seen == nullptr) {
      if (!class_storage.insert_or_assign(root, binding)) {
        return make_error(ErrorCode::kInvalidExecutionPlan, "value `{}` is not in the program",
                          root.str());
      }
      continue;
    }
    if (!(seen->storage() == binding->storage()) && seen->storage().overlaps(binding->storage())) {
      const auto& [first, second] = std::minmax(seen->value_id(), id);
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "values `{}` and `{}` overlap in storage without an exact alias",
                        first.str(), second.str())
          .with_field("value_id", first.str())
          .with_field("other_value_id", second.str());
    }
  }

  std::map<ResourceId, std::vector<Piece>> by_resource;
  for (const ResolvedValueBinding* binding : bound) {
    const ProgramValueId& id = binding->value_id();
    for (const auto& c : binding->storage().components()) {
      const auto end = checked_add(c.offset_bytes, c.length_bytes);
      if (!end) {
        return make_error(ErrorCode::kInvalidExecutionPlan, "value `{}` storage range overflows",
                          id.str());
      }
      by_resource[c.resource_id].push_back(Piece{c.offset_bytes, *end, &id, binding});
    }
  }

  // Each activation's live buffer, computed on first need; looked up only.
  std::optional<IdentityHashMap<ProgramValueId, size_t>> buffer_of;
  std::vector<ActivationLiveBuffer> live;
  for (auto& [resource, pieces] : by_resource) {
    const bool activations = std::all_of(pieces.begin(), pieces.end(), [](const Piece& p) {
      return p.binding->usage() == BufferUsage::kActivations;
    });
    if (!activations) {
      FERRITE_RETURN_IF_ERROR(check_state_resource(program, resource, pieces));
      FERRITE_RETURN_IF_ERROR(check_exact_sharing(pieces, classes));
      continue;
    }
    if (!buffer_of) {
      FERRITE_ASSIGN_OR_RETURN(live, activation_live_buffers(program, edges, retained));
      buffer_of.emplace();
      buffer_of->reserve(bound.size());
      for (size_t i = 0; i < live.size(); ++i) {
        for (const auto& v : live[i].values) buffer_of->emplace(v, i);
      }
    }
    // One packing buffer per live buffer present in this resource.
    std::map<size_t, std::pair<uint64_t, uint64_t>> ranges;  // live buffer → [start, end)
    std::map<size_t, const ProgramValueId*> names;
    for (const Piece& p : pieces) {
      auto it = buffer_of->find(*p.value);
      if (it == buffer_of->end()) {
        return make_error(ErrorCode::kInvalidExecutionPlan, "activation `{}` has no live interval",
                          p.value->str());
      }
      auto [range, inserted] = ranges.emplace(it->second, std::pair{p.start, p.end});
      if (!inserted) {
        range->second.first = std::min(range->second.first, p.start);
        range->second.second = std::max(range->second.second, p.end);
      } else {
        names.emplace(it->second, p.value);
      }
    }
    std::vector<PackingBuffer> buffers;
    std::vector<uint64_t> offsets;
    std::vector<size_t> owners;
    for (const auto& [index, range] : ranges) {
      buffers.push_back(PackingBuffer{.id = buffers.size(),
                                      .lower = live[index].lower,
                                      .upper = live[index].upper,
                                      .size = std::max<uint64_t>(range.second - range.first, 1),
                                      .alignment = 1});
      offsets.push_back(range.first);
      owners.push_back(index);
    }
    if (auto packed = verify_packing(buffers, offsets); !packed) {
      // Name the two values: find the first co-live byte-overlapping pair.
      for (size_t i = 0; i < buffers.size(); ++i) {
        for (size_t j = i + 1; j < buffers.size(); ++j) {
          const bool co_live = buffers[i].lower < buffers[j].upper &&
                               buffers[j].lower < buffers[i].upper;
          const bool share = offsets[i] < offsets[j] + buffers[j].size &&
                             offsets[j] < offsets[i] + buffers[i].size;
          if (co_live && share) {
            const auto& [first, second] = std::minmax(*names.at(owners[i]), *names.at(owners[j]));
            return make_error(ErrorCode::kInvalidExecutionPlan,
                              "values `{}` and `{}` overlap in storage in resource `{}` while "
                              "both are live",
                              first.str(), second.str(), resource.str())
                .with_field("value_id", first.str())
                .with_field("other_value_id", second.str());
          }
        }
      }
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "activation resource `{}` packing is invalid: {}", resource.str(),
                        packed.error().message());
    }
  }
  return {};
}

}  // namespace ferrite
