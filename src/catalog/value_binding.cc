#include "ferrite/catalog/value_binding.h"

#include <map>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "ferrite/core/tensor_json.h"

namespace ferrite {
namespace {

std::string describe_slot(const ProgramValueId& value_id, ValueBindingRole role,
                          uint32_t ordinal) {
  return fmt::format("{}[{}] `{}`", value_binding_role_name(role), ordinal, value_id.str());
}

}  // namespace

Result<ResolvedValueBinding> ResolvedValueBinding::create(
    ProgramValueId value_id, ValueBindingRole role, uint32_t ordinal, ResolvedTensorSpec tensor,
    TensorAccess access, AliasPolicy alias, BufferUsage usage,
    std::optional<ResolvedWeightBinding> weight, ResolvedValueStorage storage) {
  SharedWeight shared;
  if (weight) shared = std::make_shared<const ResolvedWeightBinding>(std::move(*weight));
  return create(std::move(value_id), role, ordinal, std::move(tensor), access, std::move(alias),
                usage, std::move(shared), std::move(storage));
}

Result<ResolvedValueBinding> ResolvedValueBinding::create(
    ProgramValueId value_id, ValueBindingRole role, uint32_t ordinal, ResolvedTensorSpec tensor,
    TensorAccess access, AliasPolicy alias, BufferUsage usage, SharedWeight weight,
    ResolvedValueStorage storage) {
  return create_with(std::move(value_id), role, ordinal, std::move(tensor), access,
                     std::move(alias), usage, std::move(weight), std::move(storage), nullptr);
}

Result<ResolvedValueBinding> ResolvedValueBinding::create(
    ProgramValueId value_id, ValueBindingRole role, uint32_t ordinal, ResolvedTensorSpec tensor,
    TensorAccess access, AliasPolicy alias, BufferUsage usage, SharedWeight weight,
    ResolvedValueStorage storage, const CheckedWeightBinding& checked) {
  return create_with(std::move(value_id), role, ordinal, std::move(tensor), access,
                     std::move(alias), usage, std::move(weight), std::move(storage), &checked);
}

Result<ResolvedValueBinding> ResolvedValueBinding::create_with(
    ProgramValueId&& value_id, ValueBindingRole role, uint32_t ordinal, ResolvedTensorSpec&& tensor,
    TensorAccess access, AliasPolicy&& alias, BufferUsage usage, SharedWeight&& weight,
    ResolvedValueStorage&& storage, const CheckedWeightBinding* checked) {
  // Named only in errors (a binding is created for every node in every round).
  const auto slot_name = [&] { return describe_slot(value_id, role, ordinal); };

  // Rule 1: access and alias agree with the role.
  if (role == ValueBindingRole::kInput) {
    if (!access_reads(access)) {
      return make_error(
          ErrorCode::kInvalidExecutionPlan,
          "value binding {} is an input but has access `{}` (expected read or read_write)", slot_name(),
          tensor_access_name(access));
    }
    if (!std::holds_alternative<NoAlias>(alias)) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "value binding {} is an input but declares alias {}", slot_name(),
                        describe_alias_policy(alias));
    }
  } else if (!access_writes(access)) {
    return make_error(
        ErrorCode::kInvalidExecutionPlan,
        "value binding {} is an output but has access `{}` (expected write or read_write)", slot_name(),
        tensor_access_name(access));
  }

  const bool is_weight = usage == BufferUsage::kWeights;
  const auto& components = storage.components();
  // Rule 2: non-weight values live in exactly one component.
  if (!is_weight && components.size() != 1) {
    return make_error(
        ErrorCode::kInvalidExecutionPlan,
        "value binding {} with usage `{}` must have exactly one storage component, found {}", slot_name(),
        buffer_usage_name(usage), components.size());
  }
  // Rule 3: an unnamed single component stores the tensor's element type.
  if (components.size() == 1 && !components.front().component_id &&
      components.front().element_type != tensor.element_type()) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "value binding {} storage in resource `{}` holds {} but the tensor is {}",
                      slot_name(), components.front().resource_id.str(),
                      element_type_name(components.front().element_type),
                      element_type_name(tensor.element_type()));
  }
  // Rule 4: the component is large enough for the tensor.
  if (!is_weight && components.front().length_bytes < tensor.minimum_storage_bytes()) {
    return make_error(
        ErrorCode::kInvalidExecutionPlan,
        "value binding {} storage in resource `{}` has {} bytes but tensor {} needs {}", slot_name(),
        components.front().resource_id.str(), components.front().length_bytes, tensor.to_string(),
        tensor.minimum_storage_bytes());
  }

  if (is_weight) {
    // Rule 5: the weight contract is present, valid, and matches the storage exactly.
    if (!weight) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "value binding {} has usage `weights` but carries no weight contract",
                        slot_name());
    }
    const std::string_view weight_id = weight->weight_id.str();
    // The contract's own rules, unless evidence says they passed for it and
    // this tensor's dimensions and element type.
    if (checked == nullptr ||
        !checked->vouches_for(weight.get(), tensor.dimensions(), tensor.element_type())) {
      FERRITE_RETURN_IF_ERROR(weight->validate(), "value binding {}", slot_name());
      FERRITE_RETURN_IF_ERROR(weight->validate_logical(tensor.dimensions(), tensor.element_type()),
                              "value binding {}", slot_name());
    }
    if (components.size() != weight->components.size()) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "value binding {} has {} storage components but weight `{}` declares {}",
                        slot_name(), components.size(), weight_id, weight->components.size());
    }
    // The declared component of each stored one: usually the one at the same
    // index (storages list a weight's components in its order); otherwise
    // found in a map built once, so a long list is never searched per item.
    std::map<WeightId, const ResolvedWeightComponentLayout*> declared;
    const auto declared_layout = [&](size_t index,
                                     const WeightId& id) -> const ResolvedWeightComponentLayout* {
      if (weight->components[index].component_id == id) return &weight->components[index];
      if (declared.empty()) {
        for (const ResolvedWeightComponentLayout& layout : weight->components) {
          declared.emplace(layout.component_id, &layout);
        }
      }
      auto it = declared.find(id);
      return it == declared.end() ? nullptr : it->second;
    };
    for (size_t index = 0; index < components.size(); ++index) {
      const ResolvedStorageComponent& stored = components[index];
      if (!stored.component_id) {
        return make_error(
            ErrorCode::kInvalidExecutionPlan,
            "value binding {} stores weight `{}` in resource `{}` without a component id", slot_name(),
            weight_id, stored.resource_id.str());
      }
      const std::string_view component_id = stored.component_id->str();
      const ResolvedWeightComponentLayout* layout = declared_layout(index, *stored.component_id);
      if (layout == nullptr) {
        return make_error(
            ErrorCode::kInvalidExecutionPlan,
            "value binding {} stores component `{}` that weight `{}` does not declare", slot_name(),
            component_id, weight_id);
      }
      FERRITE_ASSIGN_OR_RETURN(uint64_t physical_bytes, layout->physical_bytes());
      if (stored.length_bytes != physical_bytes) {
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "value binding {} stores component `{}` of weight `{}` in {} bytes but "
                          "it has {} physical bytes",
                          slot_name(), component_id, weight_id, stored.length_bytes, physical_bytes);
      }
      const ElementType physical_type = layout->physical_element_type();
      if (stored.element_type != physical_type) {
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "value binding {} stores component `{}` of weight `{}` as {} but its "
                          "physical element type is {}",
                          slot_name(), component_id, weight_id, element_type_name(stored.element_type),
                          element_type_name(physical_type));
      }
    }
  } else if (weight) {
    // Rule 6: only weights carry a weight contract.
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "value binding {} has usage `{}` but carries weight contract `{}`", slot_name(),
                      buffer_usage_name(usage), weight->weight_id.str());
  }

  return ResolvedValueBinding(std::move(value_id), role, ordinal, std::move(tensor), access,
                              std::move(alias), usage, std::move(weight), std::move(storage));
}

std::string ResolvedValueBinding::describe() const {
  return describe_slot(value_id_, role_, ordinal_);
}

nlohmann::json ResolvedValueBinding::to_json() const {
  return nlohmann::json{
      {"value_id", value_id_.str()},
      {"role", std::string(value_binding_role_name(role_))},
      {"ordinal", ordinal_},
      {"tensor", tensor_spec_to_json(tensor_)},
      {"access", std::string(tensor_access_name(access_))},
      {"alias", alias_policy_to_json(alias_)},
      {"usage", std::string(buffer_usage_name(usage_))},
      {"weight", weight_ ? weight_->to_json() : nlohmann::json(nullptr)},
      {"storage", storage_.to_json()}};
}

}  // namespace ferrite
