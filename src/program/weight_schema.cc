#include "ferrite/program/weight_schema.h"

#include <algorithm>
#include <functional>
#include <map>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ferrite/core/checked_math.h"
#include "ferrite/core/fingerprint.h"
#include "weight_layout_validation.h"

namespace ferrite {
namespace {

std::string component_field(const WeightId& id) {
  return fmt::format("weight_schema.components[{}]", id.str());
}
std::string tensor_field(const WeightId& id) {
  return fmt::format("weight_schema.tensors[{}]", id.str());
}

bool is_blank(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
  });
}

// ≥ 1 external name, each non-blank and unique schema-wide.
Result<void> check_component_names(const weight_internal::FailFn& fail,
                                   const WeightComponentSpec& component,
                                   std::map<std::string, WeightId>& name_owner) {
  const std::string field = component_field(component.id);
  const std::string_view id = component.id.str();
  if (component.external_names.empty()) {
    return fail(field + ".external_names",
                fmt::format("component `{}` must have at least one external name", id));
  }
  for (const std::string& name : component.external_names) {
    if (is_blank(name)) {
      return fail(field + ".external_names",
                  fmt::format("component `{}` has a blank external name", id));
    }
    auto [slot, inserted] = name_owner.emplace(name, component.id);
    if (!inserted) {
      return fail(field + ".external_names",
                  fmt::format("component `{}` external name `{}` is already used by component "
                              "`{}`",
                              id, name, slot->second.str()));
    }
  }
  return {};
}

// One quantization format id ↔ exactly one encoding across components.
Result<void> check_component_format(
    const weight_internal::FailFn& fail, const WeightComponentSpec& component,
    std::map<QuantizationFormatId, const WeightComponentSpec*>& format_owner) {
  if (auto format = weight_encoding_quantization_format(component.encoding)) {
    auto [slot, inserted] = format_owner.emplace(*format, &component);
    if (!inserted && slot->second->encoding != component.encoding) {
      return fail(component_field(component.id) + ".encoding",
                  fmt::format("component `{}` uses quantization format `{}` with a different "
                              "encoding than component `{}`",
                              component.id.str(), format->str(), slot->second->id.str()));
    }
  }
  return {};
}

}  // namespace

namespace {

// The element whose id is `id`, or null. A normalized schema is sorted by
// id, so the binary search finds it; ids are unique in a valid schema, so an
// equal id found by the search is the one. A schema that is not sorted
// (built by hand, not yet normalized) falls back to the linear scan when the
// search misses, so the answer never depends on the order, only the speed.
template <class Spec>
const Spec* find_by_id(const std::vector<Spec>& specs, const WeightId& id) {
  auto it = std::lower_bound(specs.begin(), specs.end(), id,
                             [](const Spec& spec, const WeightId& key) { return spec.id < key; });
  if (it != specs.end() && it->id == id) return &*it;
  for (const Spec& spec : specs) {
    if (spec.id == id) return &spec;
  }
  return nullptr;
}

}  // namespace

const WeightComponentSpec* WeightSchema::find_component(const WeightId& id) const {
  return find_by_id(components, id);
}

const WeightTensorSpec* WeightSchema::find_tensor(const WeightId& id) const {
  return find_by_id(tensors, id);
}

Result<void> WeightSchema::validate(const ModelFamilyId& family_id) const {
  std::string unknown;  // why the layout is unknown; empty when it is not
  if (!version.is_stable()) {
    unknown = fmt::format("schema version {} is unstable (major 0)", version.to_string());
  } else if (components.empty()) {
    unknown = "schema has no components";
  } else if (tensors.empty()) {
    unknown = "schema has no tensors";
  }
  if (!unknown.empty()) {
    return make_error(ErrorCode::kUnknownWeightLayout,
                      "model family `{}` weight layout `{}` is unknown: {}", family_id.str(),
                      layout_id.str(), unknown)
        .with_field("family_id", family_id.str())
        .with_field("layout_id", layout_id.str());
  }

  const weight_internal::FailFn fail = [&family_id](std::string_view field,
                                                    std::string_view reason) {
    return invalid_model_config(family_id.str(), field, reason);
  };

  std::map<WeightId, const WeightComponentSpec*> by_id;
  std::map<std::string, WeightId> name_owner;
  std::map<QuantizationFormatId, const WeightComponentSpec*> format_owner;
  for (const WeightComponentSpec& component : components) {
    if (!by_id.emplace(component.id, &component).second) {
      return fail(component_field(component.id),
                  fmt::format("duplicate component id `{}`", component.id.str()));
    }
    FERRITE_RETURN_IF_ERROR(check_component_names(fail, component, name_owner));
    FERRITE_RETURN_IF_ERROR(
        weight_internal::check_component_shape(fail, component_field(component.id), component));
    FERRITE_RETURN_IF_ERROR(check_component_format(fail, component, format_owner));
  }

  std::set<WeightId> tensor_ids;
  std::map<WeightId, WeightId> bound_by;
  weight_internal::LayoutChecker checker(fail, by_id, bound_by);
  for (const WeightTensorSpec& tensor : tensors) {
    const std::string field = tensor_field(tensor.id);
    const std::string_view id = tensor.id.str();
    if (!tensor_ids.insert(tensor.id).second) {
      return fail(field, fmt::format("duplicate logical weight id `{}`", id));
    }
    if (tensor.dimensions.empty()) {
      return fail(field + ".dimensions",
                  fmt::format("logical weight `{}` must have at least one dimension", id));
    }
    for (size_t axis = 0; axis < tensor.dimensions.size(); ++axis) {
      if (tensor.dimensions[axis] == 0) {
        return fail(field + ".dimensions",
                    fmt::format("logical weight `{}` dimension[{}] is zero", id, axis));
      }
    }
    FERRITE_RETURN_IF_ERROR(checker.check_tree(tensor.id, field + ".physical_layout",
                                               tensor.physical_layout, tensor.dimensions,
                                               tensor.logical_element_type));
  }

  for (const WeightComponentSpec& component : components) {
    if (component.required && !bound_by.contains(component.id)) {
      return fail(component_field(component.id),
                  fmt::format("required component `{}` is not bound by any logical weight",
                              component.id.str()));
    }
  }
  return {};
}

void WeightSchema::normalize() {
  // A compile normalizes a schema that usually is already (the family's, or a
  // copy of it): a sorted vector is only checked, not sorted again (a stable
  // sort of sorted input still merges and takes a buffer).
  const auto by_id = [](const auto& a, const auto& b) { return a.id < b.id; };
  if (!std::is_sorted(components.begin(), components.end(), by_id)) {
    std::stable_sort(components.begin(), components.end(), by_id);
  }
  if (!std::is_sorted(tensors.begin(), tensors.end(), by_id)) {
    std::stable_sort(tensors.begin(), tensors.end(), by_id);
  }
  for (WeightTensorSpec& tensor : tensors) normalize_physical_layout(tensor.physical_layout);
}

Result<std::vector<const WeightComponentSpec*>> WeightSchema::physical_component_refs(
    const WeightId& tensor_id) const {
  const WeightTensorSpec* tensor = find_tensor(tensor_id);
  if (tensor == nullptr) {
    return make_error(ErrorCode::kInvalidExecutionPlan, "unknown logical weight `{}`",
                      tensor_id.str());
  }
  const weight_internal::FailFn fail = [&tensor_id](std::string_view field,
                                                    std::string_view reason) {
    return make_error(ErrorCode::kInvalidExecutionPlan, "logical weight `{}` {}: {}",
                      tensor_id.str(), field, reason);
  };
  FERRITE_RETURN_IF_ERROR(
      weight_internal::check_layout_limits(fail, "physical_layout", tensor->physical_layout));
  // The schema's component `id`, or the error naming the reference.
  const auto referenced = [&](const WeightId& id) -> Result<const WeightComponentSpec*> {
    const WeightComponentSpec* component = find_component(id);
    if (component == nullptr) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "logical weight `{}` references unknown weight component `{}`",
                        tensor_id.str(), id.str());
    }
    return component;
  };
  // A dense leaf (most weights) names one component: no set to build.
  if (const auto* dense = std::get_if<DenseLayout>(&tensor->physical_layout.node)) {
    FERRITE_ASSIGN_OR_RETURN(const WeightComponentSpec* component, referenced(dense->component_id));
    return std::vector<const WeightComponentSpec*>{component};
  }
  const std::set<WeightId> ids = component_ids_of(tensor->physical_layout);
  std::vector<const WeightComponentSpec*> refs;
  refs.reserve(ids.size());
  for (const WeightId& id : ids) {
    FERRITE_ASSIGN_OR_RETURN(const WeightComponentSpec* component, referenced(id));
    refs.push_back(component);
  }
  // Schema order: the components live in one vector, so address order is it.
  std::sort(refs.begin(), refs.end(), std::less<const WeightComponentSpec*>());
  return refs;
}

Result<uint64_t> WeightSchema::physical_bytes(const WeightId& tensor_id) const {
  FERRITE_ASSIGN_OR_RETURN(auto refs, physical_component_refs(tensor_id));
  uint64_t total = 0;
  for (const WeightComponentSpec* component : refs) {
    FERRITE_ASSIGN_OR_RETURN(uint64_t bytes, component->physical_bytes());
    auto sum = checked_add(total, bytes);
    if (!sum) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "logical weight `{}` physical byte size overflows u64", tensor_id.str());
    }
    total = *sum;
  }
  return total;
}

std::set<QuantizationFormatId> WeightSchema::quantization_formats() const {
  std::set<QuantizationFormatId> formats;
  for (const WeightComponentSpec& component : components) {
    if (auto format = weight_encoding_quantization_format(component.encoding)) {
      formats.insert(*format);
    }
  }
  return formats;
}

Result<void> WeightSchema::validate_program_references(
    const ModelFamilyId& family_id, std::span<const WeightReference> references) const {
  std::set<WeightId> referenced;
  for (const WeightReference& reference : references) {
    const std::string_view id = reference.weight_id.str();
    const std::string field = fmt::format("program.weights[{}]", id);
    const WeightTensorSpec* tensor = find_tensor(reference.weight_id);
    if (tensor == nullptr) {
      return invalid_model_config(
          family_id.str(), field,
          fmt::format("program weight `{}` is not a logical weight of the weight schema", id));
    }
    if (reference.tensor.dimensions != tensor->dimensions) {
      return invalid_model_config(
          family_id.str(), field + ".tensor.dimensions",
          fmt::format("program weight `{}` dimensions [{}] differ from the schema's logical "
                      "dimensions [{}]",
                      id, fmt::join(reference.tensor.dimensions, ","),
                      fmt::join(tensor->dimensions, ",")));
    }
    if (reference.tensor.element_type != tensor->logical_element_type) {
      return invalid_model_config(
          family_id.str(), field + ".tensor.element_type",
          fmt::format("program weight `{}` element type {} differs from the schema's logical "
                      "element type {}",
                      id, element_type_debug_name(reference.tensor.element_type),
                      element_type_debug_name(tensor->logical_element_type)));
    }
    referenced.insert(reference.weight_id);
  }
  for (const WeightTensorSpec& tensor : tensors) {
    if (tensor.required && !referenced.contains(tensor.id)) {
      return invalid_model_config(
          family_id.str(), tensor_field(tensor.id),
          fmt::format("required logical weight `{}` is not referenced by the program",
                      tensor.id.str()));
    }
  }
  return {};
}

std::string WeightSchema::fingerprint() const { return canonical_fingerprint(to_json()); }

}  // namespace ferrite
