#include "ferrite/catalog/resource_estimator.h"

#include <fmt/format.h>

#include "ferrite/catalog/canonical_encoding.h"
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
  return estimator_input_fingerprint_of_encoded(
      prepared_family_fingerprint, operation_fingerprint, node_id, operation_id, operation_version,
      attributes, provider_id, encode_canonical_values(values), required_capabilities,
      required_weight_formats, required_quantization_formats);
}

Result<std::string> estimator_input_fingerprint_of_encoded(
    const std::string& prepared_family_fingerprint, const std::string& operation_fingerprint,
    const NodeId& node_id, const OperationId& operation_id,
    const ContractVersion& operation_version,
    const std::map<AttributeId, SemanticValue>& attributes, const ProviderId& provider_id,
    std::string_view canonical_values, const std::set<CapabilityId>& required_capabilities,
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
  // Streamed in canonical key order: the bytes of
  // canonical_json(estimator_input_material(...)), never built as a document.
  thread_local CanonicalSha256 out;
  out.reset();
  auto identities = [&](const auto& ids) {
    out.begin_array();
    for (const auto& id : ids) out.string(id.str());
    out.end_array();
  };
  out.begin_object();
  out.key("attributes");
  out.begin_object();
  for (const auto& [id, value] : attributes) {
    out.key(id.str());
    out.json(semantic_value_to_json(value));
  }
  out.end_object();
  out.key("node_id");
  out.string(node_id.str());
  out.key("operation_fingerprint");
  out.string(operation_fingerprint);
  out.key("operation_id");
  out.string(operation_id.str());
  out.key("operation_version");
  out.string(operation_version.to_string());
  out.key("prepared_family_fingerprint");
  out.string(prepared_family_fingerprint);
  out.key("provider_id");
  out.string(provider_id.str());
  out.key("required_capabilities");
  identities(required_capabilities);
  out.key("required_quantization_formats");
  identities(required_quantization_formats);
  out.key("required_weight_formats");
  identities(required_weight_formats);
  out.key("values");
  out.canonical_value(canonical_values);
  out.end_object();
  return out.hex();
}

}  // namespace ferrite
