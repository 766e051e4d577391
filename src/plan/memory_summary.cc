#include "ferrite/plan/memory_summary.h"

#include "ferrite/plan/plan_node_builder.h"

#include "ferrite/core/json_array.h"
#include <map>

#include <fmt/format.h>

#include "ferrite/core/checked_math.h"
#include "ferrite/core/enum_names.h"

namespace ferrite {

using nlohmann::json;

constexpr EnumNames<PlanResourceKind, 4> kPlanResourceKindNames{
    "plan resource kind",
    {{{PlanResourceKind::kStatic, "static"}, {PlanResourceKind::kState, "state"},
      {PlanResourceKind::kActivation, "activation"},
      {PlanResourceKind::kWorkspace, "workspace"}}}};
static_assert(kPlanResourceKindNames.covers_in_order(PlanResourceKind::kWorkspace));

std::string_view plan_resource_kind_name(PlanResourceKind kind) {
  return kPlanResourceKindNames.name(kind, "unknown");
}

json PlanResourceSummary::to_json() const {
  return json{{"resource_id", resource_id.str()},
              {"usage", buffer_usage_name(usage)},
              {"element_type", element_type_name(element_type)},
              {"size_bytes", size_bytes},
              {"alignment_bytes", alignment_bytes},
              {"kind", plan_resource_kind_name(kind)},
              {"storage_profile", storage_profile ? json(*storage_profile) : json(nullptr)},
              {"token_scaled", token_scaled ? json{{"bytes_per_token", token_scaled->bytes_per_token},
                                                   {"maximum_tokens", token_scaled->maximum_tokens}}
                                            : json(nullptr)}};
}

json PlanMemorySummary::to_json() const {
  json rows = json_array_of(resources, [&](const auto& r) { return r.to_json(); });
  json arenas = json_array_of(activation_arenas, [&](const auto& a) { return a.to_json(); });
  return json{{"resources", std::move(rows)},
              {"activation_arenas", std::move(arenas)},
              {"static_bytes", static_bytes},
              {"minimum_runnable_bytes", minimum_runnable_bytes},
              {"allocated_bytes", allocated_bytes},
              {"usable_capacity_bytes", usable_capacity_bytes}};
}

void encode_canonical(const PlanMemorySummary& summary, CanonicalEncoder& out) {
  // to_json()'s members in canonical (byte) order, at every level.
  const auto number = [&out](std::string_view key, uint64_t value) {
    out.key(key);
    out.unsigned_integer(value);
  };
  const auto text = [&out](std::string_view key, std::string_view value) {
    out.key(key);
    out.string(value);
  };
  out.begin_object();
  out.key("activation_arenas");
  out.begin_array();
  for (const ActivationArenaSummary& arena : summary.activation_arenas) {
    out.begin_object();
    number("buffers", arena.buffers);
    number("dedicated_bytes", arena.dedicated_bytes);
    number("load_bytes", arena.load_bytes);
    number("peak_bytes", arena.peak_bytes);
    text("resource_id", arena.resource_id.str());
    text("storage_profile", arena.storage_profile);
    out.end_object();
  }
  out.end_array();
  number("allocated_bytes", summary.allocated_bytes);
  number("minimum_runnable_bytes", summary.minimum_runnable_bytes);
  out.key("resources");
  out.begin_array();
  for (const PlanResourceSummary& row : summary.resources) {
    out.begin_object();
    number("alignment_bytes", row.alignment_bytes);
    text("element_type", element_type_name(row.element_type));
    text("kind", plan_resource_kind_name(row.kind));
    text("resource_id", row.resource_id.str());
    number("size_bytes", row.size_bytes);
    out.key("storage_profile");
    if (row.storage_profile) {
      out.string(*row.storage_profile);
    } else {
      out.null();
    }
    out.key("token_scaled");
    if (row.token_scaled) {
      out.begin_object();
      number("bytes_per_token", row.token_scaled->bytes_per_token);
      number("maximum_tokens", row.token_scaled->maximum_tokens);
      out.end_object();
    } else {
      out.null();
    }
    text("usage", buffer_usage_name(row.usage));
    out.end_object();
  }
  out.end_array();
  number("static_bytes", summary.static_bytes);
  number("usable_capacity_bytes", summary.usable_capacity_bytes);
  out.end_object();
}

namespace {

struct Accumulator {
  PlanResourceSummary summary;
  uint64_t end = 0;
  uint64_t minimum_bytes = 0;  // workspaces: bytes at 1 sequence / 1 token
};

Result<void> merge(std::map<ResourceId, Accumulator>& rows, const ResourceId& id, BufferUsage usage,
                   ElementType type, uint64_t end, uint64_t alignment, PlanResourceKind kind,
                   uint64_t minimum_bytes) {
  auto it = rows.find(id);
  if (it == rows.end()) {
    it = rows.emplace(id, Accumulator{PlanResourceSummary{id, usage, type, 0, alignment, kind,
                                                          std::nullopt, std::nullopt},
                                      0, 0})
             .first;
  } else if (usage == BufferUsage::kActivations && it->second.summary.usage == usage &&
             it->second.summary.kind == kind) {
    // An activation arena holds values of several element types: it is bytes.
    if (it->second.summary.element_type != type) it->second.summary.element_type = ElementType::kU8;
  } else if (it->second.summary.usage != usage || it->second.summary.element_type != type ||
             it->second.summary.kind != kind) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "resource `{}` has conflicting usage, dtype, lifetime, or demand", id.str())
        .with_field("resource_id", id.str());
  }
  Accumulator& row = it->second;
  row.end = std::max(row.end, end);
  row.summary.alignment_bytes = std::max(row.summary.alignment_bytes, alignment);
  row.minimum_bytes = std::max(row.minimum_bytes, minimum_bytes);
  return {};
}

PlanResourceKind kind_of(BufferUsage usage) {
  switch (usage) {
    case BufferUsage::kWeights: return PlanResourceKind::kStatic;
    case BufferUsage::kState: return PlanResourceKind::kState;
    default: return PlanResourceKind::kActivation;
  }
}

}  // namespace

Result<std::vector<uint64_t>> workspace_tokens(const ModelProgram& program,
                                               const ValueTensors& value_tensors,
                                               const RuntimePolicy& policy) {
  const auto& program_nodes = program.nodes();
  std::vector<std::optional<uint64_t>> extents(program_nodes.size());
  uint64_t largest = 1;
  for (size_t i = 0; i < program_nodes.size(); ++i) {
    const auto* work = std::get_if<WorkTokens>(&program_nodes[i]->work);
    if (work == nullptr) continue;
    auto tensor = value_tensors.find(work->value_id);
    if (tensor == value_tensors.end() || work->axis >= tensor->second.rank()) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "node `{}` schedules tokens along axis {} of value `{}`, which has no "
                        "such axis",
                        program_nodes[i]->id.str(), work->axis, work->value_id.str())
          .with_field("node_id", program_nodes[i]->id.str());
    }
    extents[i] = std::max<uint64_t>(1, tensor->second.dimensions()[work->axis]);
    largest = std::max(largest, *extents[i]);
  }
  std::vector<uint64_t> tokens(program_nodes.size());
  for (size_t i = 0; i < program_nodes.size(); ++i) {
    tokens[i] = std::min(policy.maximum_scheduled_tokens, extents[i].value_or(largest));
  }
  return tokens;
}

namespace {

// The storage profile the joint selection chose for `node`'s own scratch
// workspace (its per-node id, before it was pointed at the shared arena),
// checked against the profile of every earlier node's.
Result<void> record_shared_profile(const PlanNode& node, const JointProviderSelection& selection,
                                   std::optional<DynamicStorageProfile>& shared) {
  FERRITE_ASSIGN_OR_RETURN(auto workspaces, node_workspaces(node.id, node.provider_resources));
  for (const auto& workspace : workspaces) {
    if (workspace.slot != NodeWorkspace::kScratch) continue;
    auto chosen = selection.profiles.find(workspace.base_id);
    if (chosen == selection.profiles.end()) return {};
    if (shared && !(*shared == chosen->second)) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "node `{}` places its scratch in storage profile {}, but the shared "
                        "scratch arena has {}",
                        node.id.str(), chosen->second.to_string(), shared->to_string())
          .with_field("node_id", node.id.str());
    }
    shared = chosen->second;
  }
  return {};
}

}  // namespace

Result<PlanMemorySummary> build_memory_summary(
    std::span<const PlanNode> nodes, const JointProviderSelection& selection,
    const RuntimePolicy& policy,
    const std::map<ResourceId, StateCapacityTokenScaled>& token_scaled_states,
    const std::vector<uint64_t>& node_tokens) {
  if (node_tokens.size() != nodes.size()) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "memory summary needs the scheduled tokens of each of {} nodes, got {}",
                      nodes.size(), node_tokens.size());
  }
  std::map<ResourceId, Accumulator> rows;
  std::optional<DynamicStorageProfile> shared_profiles;
  for (size_t node_index = 0; node_index < nodes.size(); ++node_index) {
    const PlanNode& node = nodes[node_index];
    const uint64_t alignment = node.provider_resources.value_alignment_bytes();
    for (const auto& binding : node.values) {
      for (const auto& c : binding.storage().components()) {
        if (alignment == 0 || c.offset_bytes % alignment != 0) {
          return make_error(ErrorCode::kInvalidExecutionPlan,
                            "node `{}` {} offset {} in resource `{}` is not a multiple of provider "
                            "`{}` value alignment {}",
                            node.id.str(), binding.describe(), c.offset_bytes, c.resource_id.str(),
                            node.provider_id.str(), alignment)
              .with_field("resource_id", c.resource_id.str());
        }
        auto end = checked_add(c.offset_bytes, c.length_bytes);
        if (!end) {
          return make_error(ErrorCode::kInvalidExecutionPlan, "resource `{}` range overflows",
                            c.resource_id.str())
              .with_field("resource_id", c.resource_id.str());
        }
        FERRITE_RETURN_IF_ERROR(merge(rows, c.resource_id, binding.usage(), c.element_type, *end,
                                      alignment, kind_of(binding.usage()), 0));
      }
    }
    const std::tuple<const std::optional<ResourceId>*,
                     const std::optional<ProviderWorkspaceRequirement>*, BufferUsage>
        workspaces[] = {
            {&node.scratch_resource, &node.provider_resources.scratch(), BufferUsage::kScratch},
            {&node.binding_resource, &node.provider_resources.binding(), BufferUsage::kBinding},
            {&node.persistent_resource, &node.provider_resources.persistent(),
             BufferUsage::kPersistent}};
    for (const auto& [id, requirement, usage] : workspaces) {
      if (!id->has_value() || !requirement->has_value()) continue;
      const ProviderWorkspaceRequirement& w = **requirement;
      if (**id == ResourceId::literal(kSharedScratchResourceId)) {
        // The shared arena takes the profile the joint selection chose for
        // each node's own scratch; every node must agree on it.
        FERRITE_RETURN_IF_ERROR(record_shared_profile(node, selection, shared_profiles));
      }
      FERRITE_ASSIGN_OR_RETURN(
          uint64_t bytes, w.bytes_for(policy.maximum_active_sequences, node_tokens[node_index]),
          "node `{}` {} workspace", node.id.str(), buffer_usage_name(usage));
      FERRITE_ASSIGN_OR_RETURN(uint64_t minimum, w.bytes_for(1, 1));
      const bool plan_scope = w.scope == ProviderWorkspaceScope::kPlan;
      FERRITE_RETURN_IF_ERROR(merge(rows, **id, usage, ElementType::kU8, bytes, w.alignment_bytes,
                                    plan_scope ? PlanResourceKind::kStatic
                                               : PlanResourceKind::kWorkspace,
                                    minimum));
    }
  }

  PlanMemorySummary out;
  out.usable_capacity_bytes = policy.plannable_bytes();
  for (auto& [id, row] : rows) {
    auto size = checked_align_up(row.end, row.summary.alignment_bytes);
    if (!size) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "resource `{}` size overflows or alignment {} is not a power of two",
                        id.str(), row.summary.alignment_bytes)
          .with_field("resource_id", id.str());
    }
    row.summary.size_bytes = *size;
    uint64_t minimum = *size;  // bytes the smallest runnable scope needs
    if (row.summary.kind == PlanResourceKind::kWorkspace) {
      // A workspace at 1 sequence and 1 token (its formula's minimum).
      auto one = checked_align_up(row.minimum_bytes, row.summary.alignment_bytes);
      if (!one) {
        return make_error(ErrorCode::kInvalidExecutionPlan, "workspace `{}` size overflows u64",
                          id.str())
            .with_field("resource_id", id.str());
      }
      minimum = *one;
    }
    if (auto scaled = token_scaled_states.find(id); scaled != token_scaled_states.end()) {
      const StateCapacityTokenScaled& demand = scaled->second;
      if (row.summary.kind != PlanResourceKind::kState || demand.bytes_per_token < row.end) {
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "token-scaled state demand is smaller than its resolved resource range: "
                          "`{}` binds {} bytes, {} bytes per token",
                          id.str(), row.end, demand.bytes_per_token)
            .with_field("resource_id", id.str());
      }
      auto capacity = checked_mul(demand.bytes_per_token, demand.maximum_tokens);
      auto full = capacity ? checked_align_up(*capacity, row.summary.alignment_bytes) : std::nullopt;
      auto one = checked_align_up(demand.bytes_per_token, row.summary.alignment_bytes);
      if (!full || !one) {
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "token-scaled state `{}` capacity overflows u64", id.str())
            .with_field("resource_id", id.str());
      }
      row.summary.size_bytes = *full;
      row.summary.token_scaled = demand;
      minimum = *one;
    }
    if (row.summary.kind != PlanResourceKind::kStatic) {
      if (auto it = selection.profiles.find(id); it != selection.profiles.end()) {
        row.summary.storage_profile = it->second.to_string();
      } else if (id == ResourceId::literal(kSharedScratchResourceId) && shared_profiles) {
        row.summary.storage_profile = shared_profiles->to_string();
      }
    }
    const uint64_t bytes = row.summary.kind == PlanResourceKind::kStatic ? row.summary.size_bytes
                                                                          : minimum;
    std::optional<uint64_t> total = row.summary.kind == PlanResourceKind::kStatic
                                        ? checked_add(out.static_bytes, bytes)
                                        : checked_add(out.minimum_runnable_bytes, bytes);
    auto allocated = checked_add(out.allocated_bytes, row.summary.size_bytes);
    if (!total || !allocated)
      return make_error(ErrorCode::kInvalidExecutionPlan, "plan memory total overflows")
          .with_field("resource_id", id.str());
    out.allocated_bytes = *allocated;
    (row.summary.kind == PlanResourceKind::kStatic ? out.static_bytes : out.minimum_runnable_bytes) =
        *total;
    out.resources.push_back(std::move(row.summary));
  }
  auto required = checked_add(out.static_bytes, out.minimum_runnable_bytes);
  if (!required || *required > out.usable_capacity_bytes) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "minimum runnable plan requires {} bytes, exceeding usable capacity {}",
                      required ? fmt::format("{}", *required) : std::string("> 2^64"),
                      out.usable_capacity_bytes);
  }
  if (out.allocated_bytes > out.usable_capacity_bytes) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "plan allocates {} bytes (token-scaled states at their "
                      "maximum tokens), exceeding usable capacity {}",
                      out.allocated_bytes, out.usable_capacity_bytes);
  }
  return out;
}

}  // namespace ferrite
