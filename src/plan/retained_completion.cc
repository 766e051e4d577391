#include "ferrite/plan/retained_completion.h"

#include <fmt/format.h>

#include "ferrite/core/checked_math.h"
#include "ferrite/core/tensor_json.h"

namespace ferrite {

nlohmann::json RetainedCompletionValue::to_json() const {
  return nlohmann::json{{"value_id", value_id.str()},
                        {"producer_node_id", producer_node_id.str()},
                        {"output_ordinal", output_ordinal},
                        {"resource_id", resource_id.str()},
                        {"logical_offset_bytes", logical_offset_bytes},
                        {"tensor", tensor_spec_to_json(tensor)}};
}

namespace {

}  // namespace

Result<CompletionReadback> RetainedCompletionValue::readback_request(
    const ResolvedTensorSpec& requested) const {
  if (!requested.is_contiguous()) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "readback of retained value `{}` must request a contiguous tensor, not {}",
                      value_id.str(), requested.to_string())
        .with_field("value_id", value_id.str());
  }
  if (requested.element_type() != tensor.element_type()) {
    return make_error(
               ErrorCode::kInvalidExecutionPlan,
               "readback of retained value `{}`: element type differs (requested {}, retained {})",
               value_id.str(), requested.to_string(), tensor.to_string())
        .with_field("value_id", value_id.str());
  }
  if (requested.minimum_storage_bytes() > tensor.minimum_storage_bytes()) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "readback of retained value `{}`: {} bytes exceeds retained activation "
                      "capacity of {} bytes",
                      value_id.str(), requested.minimum_storage_bytes(),
                      tensor.minimum_storage_bytes())
        .with_field("value_id", value_id.str());
  }
  return CompletionReadback{value_id,
                            producer_node_id,
                            resource_id,
                            logical_offset_bytes,
                            requested.minimum_storage_bytes(),
                            requested};
}

Result<CompletionReadback> RetainedCompletionValue::readback_for_work(
    const ProgramNodeWorkSpec& producer_work, uint64_t scheduled_tokens) const {
  std::vector<uint64_t> dims = tensor.dimensions();
  if (const auto* tokens = std::get_if<WorkTokens>(&producer_work)) {
    if (tokens->value_id != value_id || tokens->axis >= dims.size() || !tensor.is_contiguous()) {
      return make_error(
                 ErrorCode::kInvalidExecutionPlan,
                 "retained value `{}` has no contiguous token axis for a work-shaped readback",
                 value_id.str())
          .with_field("value_id", value_id.str());
    }
    for (uint32_t a = 0; a < tokens->axis; ++a) {
      if (dims[a] != 1) {
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "retained value `{}` token axis {} is not a contiguous prefix",
                          value_id.str(), tokens->axis)
            .with_field("value_id", value_id.str());
      }
    }
    if (scheduled_tokens == 0 || scheduled_tokens > dims[tokens->axis]) {
      return make_error(
                 ErrorCode::kInvalidExecutionPlan,
                 "readback of retained value `{}` for {} tokens is outside its capacity of {}",
                 value_id.str(), scheduled_tokens, dims[tokens->axis])
          .with_field("value_id", value_id.str());
    }
    dims[tokens->axis] = scheduled_tokens;
  }
  FERRITE_ASSIGN_OR_RETURN(auto requested, ResolvedTensorSpec::create(std::move(dims),
                                                                      tensor.element_type(),
                                                                      ContiguousLayout{}));
  return readback_request(requested);
}

Result<std::vector<RetainedCompletionValue>> resolve_retained_completion_values(
    const PreparedModelFamily& family, std::span<const PlanNode> nodes,
    const CompletionRetentionSpec& retention) {
  std::vector<RetainedCompletionValue> out;
  for (const ProgramValueId& value : retention.values()) {
    if (family.program().value_kind(value) != ProgramValueKind::kNodeOutput) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "completion retention must reference a semantic node output: `{}`",
                        value.str())
          .with_field("value_id", value.str());
    }
    size_t producer = nodes.size();
    const ResolvedValueBinding* binding = nullptr;
    size_t count = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
      for (const auto& b : nodes[i].values) {
        if (b.role() == ValueBindingRole::kOutput && b.value_id() == value) {
          ++count;
          producer = i;
          binding = &b;
        }
      }
    }
    if (count != 1 || binding == nullptr) {
      return make_error(
                 ErrorCode::kInvalidExecutionPlan,
                 "retained value `{}` has {} producing output bindings, expected exactly one",
                 value.str(), count)
          .with_field("value_id", value.str());
    }
    if (binding->usage() != BufferUsage::kActivations ||
        binding->storage().components().size() != 1) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "retained value `{}` must be an Activations value with exactly one storage "
                        "component",
                        value.str())
          .with_field("value_id", value.str());
    }
    const ResolvedStorageComponent& component = binding->storage().components()[0];
    auto end = checked_add(component.offset_bytes, binding->tensor().minimum_storage_bytes());
    if (!end)
      return make_error(ErrorCode::kInvalidExecutionPlan, "retained value `{}` range overflows",
                        value.str())
          .with_field("value_id", value.str());
    const ResolvedStorageComponent range{std::nullopt, component.resource_id, component.offset_bytes,
                                         binding->tensor().minimum_storage_bytes(),
                                         component.element_type};
    for (size_t i = producer; i < nodes.size(); ++i) {
      for (const auto& b : nodes[i].values) {
        if (&b == binding || !access_writes(b.access())) continue;
        for (const auto& c : b.storage().components()) {
          if (c.overlaps(range)) {
            return make_error(ErrorCode::kInvalidExecutionPlan,
                              "retained value `{}` is overwritten by node `{}` {}", value.str(),
                              nodes[i].id.str(), b.describe())
                .with_field("value_id", value.str());
          }
        }
      }
    }
    out.push_back(RetainedCompletionValue{value, nodes[producer].id, binding->ordinal(),
                                          component.resource_id, component.offset_bytes,
                                          binding->tensor()});
  }
  return out;
}

}  // namespace ferrite
