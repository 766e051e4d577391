#include "ferrite/program/weight_binding.h"

#include <algorithm>
#include <map>
#include <string>

#include <fmt/format.h>

#include "ferrite/core/checked_math.h"
#include "weight_layout_validation.h"

namespace ferrite {
namespace {

std::string layout_component_field(const WeightId& id) {
  return fmt::format("components[{}]", id.str());
}

}  // namespace

Result<uint64_t> ResolvedWeightComponentLayout::physical_bytes() const {
  auto bytes = checked_weight_physical_bytes(physical_dimensions, encoding);
  if (!bytes) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "weight component `{}` physical byte size overflows u64", component_id.str());
  }
  return *bytes;
}

Result<ResolvedWeightBinding> ResolvedWeightBinding::from_schema(const WeightSchema& schema,
                                                                 const WeightId& tensor_id) {
  FERRITE_ASSIGN_OR_RETURN(ResolvedWeightBinding binding, assemble_from_schema(schema, tensor_id));
  const WeightTensorSpec* tensor = schema.find_tensor(tensor_id);  // found by assemble
  FERRITE_RETURN_IF_ERROR(binding.validate());
  FERRITE_RETURN_IF_ERROR(binding.validate_logical(tensor->dimensions, tensor->logical_element_type));
  return binding;
}

Result<ResolvedWeightBinding> ResolvedWeightBinding::assemble_from_schema(
    const WeightSchema& schema, const WeightId& tensor_id) {
  const WeightTensorSpec* tensor = schema.find_tensor(tensor_id);
  if (tensor == nullptr) {
    return make_error(ErrorCode::kInvalidExecutionPlan, "unknown logical weight `{}`",
                      tensor_id.str());
  }
  FERRITE_ASSIGN_OR_RETURN(auto refs, schema.physical_component_refs(tensor_id));
  std::map<WeightId, ResolvedWeightComponentLayout> sorted;
  for (const WeightComponentSpec* component : refs) {
    sorted.emplace(component->id, ResolvedWeightComponentLayout{component->id, component->role,
                                                                component->dimensions,
                                                                component->encoding});
  }
  ResolvedWeightBinding binding{tensor_id, schema.format_id, schema.layout_id, schema.version,
                                tensor->physical_layout, {}};
  for (auto& [id, component] : sorted) binding.components.push_back(std::move(component));
  normalize_physical_layout(binding.physical_layout);
  return binding;
}

Result<void> ResolvedWeightBinding::validate() const {
  const std::string_view weight = weight_id.str();
  if (!schema_version.is_stable()) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "weight binding `{}` schema version {} is unstable (major 0)", weight,
                      schema_version.to_string());
  }
  if (components.empty()) {
    return make_error(ErrorCode::kInvalidExecutionPlan, "weight binding `{}` has no components",
                      weight);
  }
  for (size_t i = 1; i < components.size(); ++i) {
    if (!(components[i - 1].component_id < components[i].component_id)) {
      return make_error(
          ErrorCode::kInvalidExecutionPlan,
          "weight binding `{}` components are not strictly sorted by id (`{}` then `{}`)", weight,
          components[i - 1].component_id.str(), components[i].component_id.str());
    }
  }
  const weight_internal::FailFn fail = [&weight](std::string_view field, std::string_view reason) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "weight binding `{}` field `{}` is invalid: {}", weight, field, reason);
  };
  FERRITE_RETURN_IF_ERROR(
      weight_internal::check_layout_limits(fail, "physical_layout", physical_layout));
  std::set<WeightId> declared;
  for (const ResolvedWeightComponentLayout& component : components) {
    declared.insert(component.component_id);
    const std::string_view id = component.component_id.str();
    if (component.physical_dimensions.empty()) {
      return fail(layout_component_field(component.component_id),
                  fmt::format("component `{}` must have at least one dimension", id));
    }
    for (size_t axis = 0; axis < component.physical_dimensions.size(); ++axis) {
      if (component.physical_dimensions[axis] == 0) {
        return fail(layout_component_field(component.component_id),
                    fmt::format("component `{}` dimension[{}] is zero", id, axis));
      }
    }
    FERRITE_RETURN_IF_ERROR(component.physical_bytes());
  }
  const std::set<WeightId> referenced = component_ids_of(physical_layout);
  if (declared != referenced) {
    for (const WeightId& id : referenced) {
      if (!declared.contains(id)) {
        return fail("physical_layout",
                    fmt::format("layout references component `{}` that the binding lacks",
                                id.str()));
      }
    }
    for (const WeightId& id : declared) {
      if (!referenced.contains(id)) {
        return fail(layout_component_field(id),
                    fmt::format("component `{}` is not referenced by the layout", id.str()));
      }
    }
  }
  return {};
}

Result<void> ResolvedWeightBinding::validate_logical(std::span<const uint64_t> dimensions,
                                                     ElementType logical_element_type) const {
  const std::string_view weight = weight_id.str();
  const weight_internal::FailFn fail = [&weight](std::string_view field, std::string_view reason) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "weight binding `{}` field `{}` is invalid: {}", weight, field, reason);
  };
  // Rebuild the components as schema components (names are not part of a binding).
  std::vector<WeightComponentSpec> specs;
  specs.reserve(components.size());
  for (const ResolvedWeightComponentLayout& component : components) {
    specs.push_back(WeightComponentSpec{component.component_id, component.role, {},
                                        component.physical_dimensions, component.encoding, true});
  }
  std::map<WeightId, const WeightComponentSpec*> by_id;
  for (const WeightComponentSpec& spec : specs) {
    if (!by_id.emplace(spec.id, &spec).second) {
      return fail(layout_component_field(spec.id),
                  fmt::format("duplicate component id `{}`", spec.id.str()));
    }
    FERRITE_RETURN_IF_ERROR(weight_internal::check_component_shape(fail, layout_component_field(spec.id),
                                                                   spec));
  }
  std::map<WeightId, WeightId> bound_by;
  weight_internal::LayoutChecker checker(fail, by_id, bound_by);
  FERRITE_RETURN_IF_ERROR(checker.check_tree(weight_id, "physical_layout", physical_layout,
                                             dimensions, logical_element_type));
  for (const WeightComponentSpec& spec : specs) {
    if (!bound_by.contains(spec.id)) {
      return fail(layout_component_field(spec.id),
                  fmt::format("component `{}` is not bound by the layout", spec.id.str()));
    }
  }
  return {};
}

Result<CheckedWeightBinding> CheckedWeightBinding::check(const ResolvedWeightBinding& binding,
                                                         std::span<const uint64_t> dimensions,
                                                         ElementType logical_element_type) {
  FERRITE_RETURN_IF_ERROR(binding.validate());
  FERRITE_RETURN_IF_ERROR(binding.validate_logical(dimensions, logical_element_type));
  CheckedWeightBinding checked;
  checked.binding_ = &binding;
  checked.dimensions_.assign(dimensions.begin(), dimensions.end());
  checked.element_type_ = logical_element_type;
  return checked;
}

bool CheckedWeightBinding::vouches_for(const ResolvedWeightBinding* binding,
                                       std::span<const uint64_t> dimensions,
                                       ElementType logical_element_type) const {
  return binding != nullptr && binding == binding_ && logical_element_type == element_type_ &&
         std::equal(dimensions.begin(), dimensions.end(), dimensions_.begin(), dimensions_.end());
}

std::set<QuantizationFormatId> ResolvedWeightBinding::quantization_formats() const {
  std::set<QuantizationFormatId> formats;
  for (const ResolvedWeightComponentLayout& component : components) {
    if (auto format = weight_encoding_quantization_format(component.encoding)) {
      formats.insert(*format);
    }
  }
  return formats;
}

bool ResolvedWeightBinding::has_quantized_components() const {
  for (const ResolvedWeightComponentLayout& component : components) {
    if (is_quantized_encoding(component.encoding)) return true;
  }
  return false;
}

Result<uint64_t> ResolvedWeightBinding::physical_bytes() const {
  uint64_t total = 0;
  for (const ResolvedWeightComponentLayout& component : components) {
    FERRITE_ASSIGN_OR_RETURN(uint64_t bytes, component.physical_bytes());
    auto sum = checked_add(total, bytes);
    if (!sum) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "weight binding `{}` physical byte size overflows u64", weight_id.str());
    }
    total = *sum;
  }
  return total;
}

nlohmann::json ResolvedWeightBinding::to_json() const {
  using nlohmann::json;
  json components_json = json::array();
  for (const ResolvedWeightComponentLayout& component : components) {
    components_json.push_back(
        json{{"component_id", component.component_id.str()},
             {"role", std::string(weight_component_role_name(component.role))},
             {"physical_dimensions", component.physical_dimensions},
             {"encoding", weight_encoding_to_json(component.encoding)}});
  }
  return json{{"weight_id", weight_id.str()},
              {"format_id", format_id.str()},
              {"layout_id", layout_id.str()},
              {"schema_version",
               json{{"major", schema_version.major}, {"minor", schema_version.minor}}},
              {"physical_layout", physical_layout_to_json(physical_layout)},
              {"components", std::move(components_json)}};
}

}  // namespace ferrite
