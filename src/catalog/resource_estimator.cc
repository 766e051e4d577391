#include "ferrite/catalog/resource_estimator.h"

#include <fmt/format.h>

#include "ferrite/core/fingerprint.h"
#include "ferrite/core/json_array.h"
#include "ferrite/program/model_program.h"

namespace ferrite {

OperationResourceEstimator::~OperationResourceEstimator() = default;

Result<void> OperationResourceEstimateRequest::validate() const {
  const std::string& node = node_id.str();
  if (operation == nullptr) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "resource estimate request for node `{}` has no operation descriptor", node)
        .with_field("node_id", node);
  }
  FERRITE_RETURN_IF_ERROR(operation->validate());
  FERRITE_RETURN_IF_ERROR(operation->validate_attributes(node_id, attributes));
  const size_t expected = operation->inputs.size() + operation->outputs.size();
  if (values.size() != expected) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "resource estimate request for node `{}` has {} value bindings but operation "
                      "`{}` has {} inputs and {} outputs",
                      node, values.size(), operation->id.str(), operation->inputs.size(),
                      operation->outputs.size())
        .with_field("node_id", node);
  }
  for (size_t i = 0; i < values.size(); ++i) {
    const bool is_input = i < operation->inputs.size();
    const ValueBindingRole role = is_input ? ValueBindingRole::kInput : ValueBindingRole::kOutput;
    const size_t ordinal = is_input ? i : i - operation->inputs.size();
    if (values[i].role() != role || values[i].ordinal() != ordinal) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "resource estimate request for node `{}` binding {} is {} but slot {} is "
                        "{}[{}] of operation `{}`",
                        node, i, values[i].describe(), i, value_binding_role_name(role), ordinal,
                        operation->id.str())
          .with_field("node_id", node);
    }
  }
  if (!token_rows.empty() && token_rows.size() != values.size()) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "resource estimate request for node `{}` has {} token row counts for {} "
                      "value bindings",
                      node, token_rows.size(), values.size())
        .with_field("node_id", node);
  }
  if (!is_canonical_sha256(input_fingerprint)) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "resource estimate request for node `{}` has input fingerprint `{}` that is "
                      "not a canonical sha256",
                      node, input_fingerprint)
        .with_field("node_id", node);
  }
  return {};
}

Result<std::string> estimator_input_fingerprint(
    const std::string& prepared_family_fingerprint, const std::string& operation_fingerprint,
    const NodeId& node_id, const OperationId& operation_id,
    const ContractVersion& operation_version,
    const std::map<AttributeId, SemanticValue>& attributes, const ProviderId& provider_id,
    const std::vector<ResolvedValueBinding>& values,
    const std::set<CapabilityId>& required_capabilities,
    const std::set<WeightFormatId>& required_weight_formats,
    const std::set<QuantizationFormatId>& required_quantization_formats) {
  if (!is_canonical_sha256(prepared_family_fingerprint)) {
    return make_error(
        ErrorCode::kInvalidExecutionPlan,
        "estimator input for node `{}` (provider `{}`): prepared family fingerprint `{}` is not "
        "a canonical sha256",
        node_id.str(), provider_id.str(), prepared_family_fingerprint);
  }
  if (!is_canonical_sha256(operation_fingerprint)) {
    return make_error(
        ErrorCode::kInvalidExecutionPlan,
        "estimator input for node `{}` (provider `{}`): operation `{}` fingerprint `{}` is not a "
        "canonical sha256",
        node_id.str(), provider_id.str(), operation_id.str(), operation_fingerprint);
  }
  nlohmann::json attribute_json = nlohmann::json::object();
  for (const auto& [id, value] : attributes) attribute_json[id.str()] = semantic_value_to_json(value);
  nlohmann::json value_json = nlohmann::json::array();
  for (const ResolvedValueBinding& binding : values) value_json.push_back(binding.to_json());
  const nlohmann::json material{
      {"prepared_family_fingerprint", prepared_family_fingerprint},
      {"operation_fingerprint", operation_fingerprint},
      {"node_id", node_id.str()},
      {"operation_id", operation_id.str()},
      {"operation_version", operation_version.to_string()},
      {"attributes", std::move(attribute_json)},
      {"provider_id", provider_id.str()},
      {"values", std::move(value_json)},
      {"required_capabilities", json_identity_array(required_capabilities)},
      {"required_weight_formats", json_identity_array(required_weight_formats)},
      {"required_quantization_formats", json_identity_array(required_quantization_formats)}};
  return canonical_fingerprint(material);
}

}  // namespace ferrite
