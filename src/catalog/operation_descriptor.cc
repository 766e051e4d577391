#include "ferrite/catalog/operation_descriptor.h"

#include "ferrite/core/json_array.h"
#include <fmt/format.h>

#include "ferrite/core/checked_math.h"
#include "ferrite/core/fingerprint.h"
#include "ferrite/core/tensor_json.h"
#include "ferrite/core/enum_names.h"

namespace ferrite {

using nlohmann::json;

constexpr EnumNames<ResourcePresence, 3> kResourcePresenceNames{
    "resource presence",
    {{{ResourcePresence::kForbidden, "forbidden"}, {ResourcePresence::kOptional, "optional"},
      {ResourcePresence::kRequired, "required"}}}};
FERRITE_ENUM_NAME_FUNCTIONS(kResourcePresenceNames, ResourcePresence::kRequired,
                            resource_presence_name, parse_resource_presence)

Result<void> OperationDescriptor::validate() const {
  const std::string_view op = id.str();
  if (!version.is_stable()) {
    return make_error(ErrorCode::kInvalidExecutionPlan, "operation `{}` has unstable version {}",
                      op, version.to_string());
  }
  if (outputs.empty()) {
    return make_error(ErrorCode::kInvalidExecutionPlan, "operation `{}` has no outputs", op);
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].access() == TensorAccess::kWrite) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "operation `{}` input[{}] must be read or read_write", op, i);
    }
    if (!std::holds_alternative<NoAlias>(inputs[i].alias())) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "operation `{}` input[{}] must not declare an alias", op, i);
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].access() == TensorAccess::kRead) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "operation `{}` output[{}] must be write or read_write", op, i);
    }
    const auto& alias = outputs[i].alias();
    std::optional<uint32_t> index;
    if (const auto* may = std::get_if<MayAlias>(&alias)) index = may->tensor_index;
    if (const auto* must = std::get_if<MustAlias>(&alias)) index = must->tensor_index;
    if (index && *index >= inputs.size()) {
      return make_error(
          ErrorCode::kInvalidExecutionPlan,
          "operation `{}` output[{}] aliases input[{}] but the operation has {} inputs", op, i,
          *index, inputs.size());
    }
  }
  if (!is_power_of_two(resources.minimum_value_alignment_bytes)) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "operation `{}` minimum value alignment {} is not a non-zero power of two",
                      op, resources.minimum_value_alignment_bytes);
  }
  if (!provider.minimum_version.is_stable() || provider.minimum_version.major != version.major) {
    return make_error(
        ErrorCode::kInvalidExecutionPlan,
        "operation `{}` provider minimum version {} must be stable and share major {}", op,
        provider.minimum_version.to_string(), version.major);
  }
  return {};
}

Result<void> OperationDescriptor::validate_attributes(
    const NodeId& node_id, const std::map<AttributeId, SemanticValue>& values) const {
  // Validation is pure: checked without a context first (every node of every
  // resolution round passes here), and again with the node named only to
  // word a failure.
  if (attributes.validate_values(values, {})) return {};
  return attributes.validate_values(values, fmt::format("node `{}`", node_id.str()));
}

json OperationDescriptor::to_json() const {
  json in = json_array_of(inputs, [&](const auto& c) { return tensor_contract_to_json(c); });
  json out = json_array_of(outputs, [&](const auto& c) { return tensor_contract_to_json(c); });
  json capabilities =
      json_array_of(provider.required_capabilities, [&](const auto& c) { return c.str(); });
  return json{
      {"id", id.str()},
      {"version", version.to_string()},
      {"inputs", in},
      {"outputs", out},
      {"attributes", attribute_schema_to_json(attributes)},
      {"resources",
       {{"minimum_value_alignment_bytes", resources.minimum_value_alignment_bytes},
        {"scratch", resource_presence_name(resources.scratch)},
        {"binding", resource_presence_name(resources.binding)},
        {"persistent", resource_presence_name(resources.persistent)}}},
      {"provider",
       {{"minimum_version", provider.minimum_version.to_string()},
        {"required_capabilities", capabilities}}}};
}

Result<std::string> OperationDescriptor::fingerprint() const {
  FERRITE_RETURN_IF_ERROR(validate());
  return canonical_fingerprint(to_json());
}

}  // namespace ferrite
