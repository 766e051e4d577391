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

Error retention_error(const ProgramValueId& value, std::string message) {
  return make_error(Status(ErrorCode::kInvalidExecutionPlan, std::move(message))
                        .with_field("value_id", value.str()));
}

}  // namespace

Result<std::vector<RetainedCompletionValue>> resolve_retained_completion_values(
    const PreparedModelFamily& family, const std::vector<PlanNode>& nodes,
    const CompletionRetentionSpec& retention) {
  std::vector<RetainedCompletionValue> out;
  for (const ProgramValueId& value : retention.values()) {
    if (family.program().value_kind(value) != ProgramValueKind::kNodeOutput) {
      return retention_error(value, fmt::format("completion retention must reference a semantic "
                                                "node output: `{}`",
                                                value.str()));
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
      return retention_error(value, fmt::format("retained value `{}` has {} producing output "
                                                "bindings, expected exactly one",
                                                value.str(), count));
    }
    if (binding->usage() != BufferUsage::kActivations ||
        binding->storage().components().size() != 1) {
      return retention_error(value, fmt::format("retained value `{}` must be an Activations value "
                                                "with exactly one storage component",
                                                value.str()));
    }
    const ResolvedStorageComponent& component = binding->storage().components()[0];
    auto end = checked_add(component.offset_bytes, binding->tensor().minimum_storage_bytes());
    if (!end) return retention_error(value, fmt::format("retained value `{}` range overflows",
                                                        value.str()));
    const ResolvedStorageComponent range{std::nullopt, component.resource_id, component.offset_bytes,
                                         binding->tensor().minimum_storage_bytes(),
                                         component.element_type};
    for (size_t i = producer; i < nodes.size(); ++i) {
      for (const auto& b : nodes[i].values) {
        if (&b == binding || !access_writes(b.access())) continue;
        for (const auto& c : b.storage().components()) {
          if (c.overlaps(range)) {
            return retention_error(value, fmt::format("retained value `{}` is overwritten by node "
                                                      "`{}` {}",
                                                      value.str(), nodes[i].id.str(),
                                                      b.describe()));
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
