#include "ferrite/plan/memory_summary.h"

#include "ferrite/plan/plan_node_builder.h"

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

namespace {

// One row of the summary's `resources`: its members in canonical (byte)
// order. The one definition of a row's wire form (to_json parses it).
void encode_resource(const PlanResourceSummary& row, CanonicalEncoder& out) {
  out.begin_object();
  out.key("alignment_bytes");
  out.unsigned_integer(row.alignment_bytes);
  out.key("element_type");
  out.string(element_type_name(row.element_type));
  out.key("kind");
  out.string(plan_resource_kind_name(row.kind));
  out.key("resource_id");
  out.string(row.resource_id);
  out.key("size_bytes");
  out.unsigned_integer(row.size_bytes);
  out.key("storage_profile");
  if (row.storage_profile) {
    out.string(*row.storage_profile);
  } else {
    out.null();
  }
  out.key("token_scaled");
  if (row.token_scaled) {
    out.begin_object();
    out.key("bytes_per_token");
    out.unsigned_integer(row.token_scaled->bytes_per_token);
    out.key("maximum_tokens");
    out.unsigned_integer(row.token_scaled->maximum_tokens);
    out.end_object();
  } else {
    out.null();
  }
  out.key("usage");
  out.string(buffer_usage_name(row.usage));
  out.end_object();
}

}  // namespace

json PlanResourceSummary::to_json() const {
  CanonicalText text;
  encode_resource(*this, text);
  return json::parse(text.text());
}

json PlanMemorySummary::to_json() const {
  CanonicalText text;
  encode_canonical(*this, text);
  return json::parse(text.text());
}

void encode_canonical(const PlanMemorySummary& summary, CanonicalEncoder& out) {
  // Members in canonical (byte) order: the one definition of the summary's
  // wire form (to_json parses it). A plan has an arena or two, so each
  // arena is written from its own document.
  out.begin_object();
  out.key("activation_arenas");
  out.begin_array();
  for (const ActivationArenaSummary& arena : summary.activation_arenas) out.json(arena.to_json());
  out.end_array();
  out.key("allocated_bytes");
  out.unsigned_integer(summary.allocated_bytes);
  out.key("minimum_runnable_bytes");
  out.unsigned_integer(summary.minimum_runnable_bytes);
  out.key("resources");
  out.begin_array();
  for (const PlanResourceSummary& row : summary.resources) encode_resource(row, out);
  out.end_array();
  out.key("static_bytes");
  out.unsigned_integer(summary.static_bytes);
  out.key("usable_capacity_bytes");
  out.unsigned_integer(summary.usable_capacity_bytes);
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
  if (!value_tensors.indexes(program)) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "the value tensors were inferred for another program");
  }
  const auto& program_nodes = program.nodes();
  std::vector<std::optional<uint64_t>> extents(program_nodes.size());
  uint64_t largest = 1;
  for (size_t i = 0; i < program_nodes.size(); ++i) {
    const auto* work = std::get_if<WorkTokens>(&program_nodes[i]->work);
    if (work == nullptr) continue;
    // The value is usually one the node binds: found among its bindings.
    const ModelProgram::ValueInfo* info = program.find_node_value(i, work->value_id);
    const ResolvedTensorSpec* tensor = value_tensors.at(info);
    if (tensor == nullptr || work->axis >= tensor->rank()) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "node `{}` schedules tokens along axis {} of value `{}`, which has no "
                        "such axis",
                        program_nodes[i]->id.str(), work->axis, work->value_id.str())
          .with_field("node_id", program_nodes[i]->id.str());
    }
    extents[i] = std::max<uint64_t>(1, tensor->dimensions()[work->axis]);
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
