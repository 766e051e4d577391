#include "ferrite/plan/storage_sharing.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <variant>

#include <fmt/format.h>

#include "ferrite/core/checked_math.h"
#include "ferrite/core/disjoint_indices.h"
#include "ferrite/memory/activation_liveness.h"
#include "ferrite/memory/interval_packing.h"

namespace ferrite {
namespace {

struct Piece {
  uint64_t start;
  uint64_t end;
  const ProgramValueId* value;
  const ResolvedValueBinding* binding;
  uint32_t rank;  // the value's ModelProgram::ValueInfo::rank: its id order
};

// Non-activation resources: any byte overlap between different values must be
// an exact alias with identical storage. A sweep by start offset compares each
// piece with the piece reaching furthest so far; a violating pair always meets
// such a comparison.
Result<void> check_exact_sharing(std::vector<Piece>& pieces, DisjointIndices& classes) {
  std::sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) {
    return std::tie(a.start, a.end, a.rank) < std::tie(b.start, b.end, b.rank);
  });
  const Piece* reach = nullptr;
  for (const Piece& p : pieces) {
    if (reach != nullptr && p.start < reach->end && p.rank != reach->rank) {
      const bool exact = classes.root(p.rank) == classes.root(reach->rank) &&
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
                                   std::span<const BoundValue> bound,
                                   const std::set<ProgramValueId>& retained) {
  // Values are read and written by their ranks (id order): alias classes by
  // union-find over ranks, whose root is a class's smallest rank, i.e. its
  // smallest id; no look-up per bound value.
  const size_t ranks = program.values_in_id_order().size();
  DisjointIndices classes(ranks);
  std::vector<std::pair<ProgramValueId, ProgramValueId>> edges;
  for (const auto& node : nodes) {
    for (const auto& alias : node.exact_aliases) {
      const ModelProgram::ValueInfo* out = program.find_value(alias.output_value_id);
      const ModelProgram::ValueInfo* in = program.find_value(alias.input_value_id);
      if (out == nullptr || in == nullptr) {
        const ProgramValueId& absent = out == nullptr ? alias.output_value_id : alias.input_value_id;
        return make_error(ErrorCode::kInvalidExecutionPlan, "value `{}` is not in the program",
                          absent.str());
      }
      classes.join(out->rank, in->rank);
      edges.emplace_back(alias.output_value_id, alias.input_value_id);
    }
  }
  for (const BoundValue& b : bound) {
    if (b.rank >= ranks) {
      return make_error(ErrorCode::kInvalidExecutionPlan, "value `{}` is not in the program",
                        b.binding->value_id().str());
    }
  }
  // Members of one alias class share one storage: the first member's (in id
  // order), kept at the class root's rank.
  std::vector<const ResolvedValueBinding*> class_storage(ranks, nullptr);
  for (const BoundValue& b : bound) {
    const ResolvedValueBinding*& seen = class_storage[classes.root(b.rank)];
    if (seen == nullptr) {
      seen = b.binding;
      continue;
    }
    if (!(seen->storage() == b.binding->storage()) &&
        seen->storage().overlaps(b.binding->storage())) {
      const auto& [first, second] = std::minmax(seen->value_id(), b.binding->value_id());
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "values `{}` and `{}` overlap in storage without an exact alias",
                        first.str(), second.str())
          .with_field("value_id", first.str())
          .with_field("other_value_id", second.str());
    }
  }

  // Consecutive values usually share a resource (a packed arena): the map is
  // searched again only when the resource changes.
  std::map<ResourceId, std::vector<Piece>> by_resource;
  std::vector<Piece>* last_pieces = nullptr;
  const ResourceId* last_resource = nullptr;
  for (const BoundValue& b : bound) {
    const ProgramValueId& id = b.binding->value_id();
    for (const auto& c : b.binding->storage().components()) {
      const auto end = checked_add(c.offset_bytes, c.length_bytes);
      if (!end) {
        return make_error(ErrorCode::kInvalidExecutionPlan, "value `{}` storage range overflows",
                          id.str());
      }
      if (last_resource == nullptr || !(*last_resource == c.resource_id)) {
        last_pieces = &by_resource[c.resource_id];
        last_resource = &c.resource_id;
      }
      last_pieces->push_back(Piece{c.offset_bytes, *end, &id, b.binding, b.rank});
    }
  }

  // Each activation's live buffer (by rank), computed on first need.
  constexpr uint32_t kNoBuffer = UINT32_MAX;
  std::vector<uint32_t> buffer_of;
  std::vector<ActivationLiveBuffer> live;
  // Per live buffer present in the resource: its byte range and the first
  // value met in it (reset after each resource through `present`).
  struct Present {
    uint64_t start = 0;
    uint64_t end = 0;
    const ProgramValueId* name = nullptr;
  };
  std::vector<Present> present_at;
  std::vector<uint32_t> present;
  for (auto& [resource, pieces] : by_resource) {
    const bool activations = std::all_of(pieces.begin(), pieces.end(), [](const Piece& p) {
      return p.binding->usage() == BufferUsage::kActivations;
    });
    if (!activations) {
      FERRITE_RETURN_IF_ERROR(check_state_resource(program, resource, pieces));
      FERRITE_RETURN_IF_ERROR(check_exact_sharing(pieces, classes));
      continue;
    }
    if (live.empty() && buffer_of.empty()) {
      FERRITE_ASSIGN_OR_RETURN(live, activation_live_buffers(program, edges, retained));
      if (live.size() >= kNoBuffer) {
        return make_error(ErrorCode::kInvalidExecutionPlan, "{} live buffers are too many",
                          live.size());
      }
      buffer_of.assign(ranks, kNoBuffer);
      for (size_t i = 0; i < live.size(); ++i) {
        for (const uint32_t rank : live[i].ranks) buffer_of[rank] = static_cast<uint32_t>(i);
      }
      present_at.resize(live.size());
    }
    // One packing buffer per live buffer present in this resource, in the
    // live buffers' order.
    present.clear();
    for (const Piece& p : pieces) {
      const uint32_t index = buffer_of[p.rank];
      if (index == kNoBuffer) {
        return make_error(ErrorCode::kInvalidExecutionPlan, "activation `{}` has no live interval",
                          p.value->str());
      }
      Present& range = present_at[index];
      if (range.name == nullptr) {
        range = Present{p.start, p.end, p.value};
        present.push_back(index);
      } else {
        range.start = std::min(range.start, p.start);
        range.end = std::max(range.end, p.end);
      }
    }
    std::sort(present.begin(), present.end());
    std::vector<PackingBuffer> buffers;
    std::vector<uint64_t> offsets;
    std::vector<const ProgramValueId*> names;
    buffers.reserve(present.size());
    offsets.reserve(present.size());
    names.reserve(present.size());
    for (const uint32_t index : present) {
      Present& range = present_at[index];
      buffers.push_back(PackingBuffer{.id = buffers.size(),
                                      .lower = live[index].lower,
                                      .upper = live[index].upper,
                                      .size = std::max<uint64_t>(range.end - range.start, 1),
                                      .alignment = 1});
      offsets.push_back(range.start);
      names.push_back(range.name);
      range = Present{};
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
            const auto& [first, second] = std::minmax(*names[i], *names[j]);
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
