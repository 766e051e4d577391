#include "ferrite/catalog/resource_estimator.h"

#include <array>
#include <cassert>
#include <cstring>
#include <memory>
#include <string_view>

#include <fmt/format.h>

#include "ferrite/catalog/canonical_encoding.h"
#include "ferrite/core/fingerprint.h"
#include "ferrite/core/json_array.h"
#include "ferrite/program/model_program.h"

namespace ferrite {

// A canonical sha256 text (64 lowercase hex digits, checked before one is
// made), held inline.
class InlineSha256Text {
 public:
  static constexpr size_t kDigits = 64;
  explicit InlineSha256Text(std::string_view checked) {
    assert(checked.size() == kDigits);
    std::memcpy(digits_.data(), checked.data(), kDigits);
  }
  std::string_view view() const { return {digits_.data(), kDigits}; }

 private:
  std::array<char, kDigits> digits_;
};

// Every node of a compile holds one head (its rounds share it), so the two
// fingerprints are held inline: as strings they were two allocations and
// 160 bytes per node for texts that every node, or every node of one
// operation, repeats.
//
// The three sets are nearly always empty, so they are kept apart, null
// when all three are (inline they were 144 bytes of empty containers per
// node).
struct NodeEstimatorInput::Head {
  struct Requirements {
    std::set<CapabilityId> capabilities;
    std::set<WeightFormatId> weight_formats;
    std::set<QuantizationFormatId> quantization_formats;
  };
  InlineSha256Text family_fingerprint;
  InlineSha256Text operation_fingerprint;
  NodeId node_id;
  OperationId operation_id;
  ContractVersion operation_version;
  std::map<AttributeId, SemanticValue> attributes;
  std::unique_ptr<const Requirements> requirements;  // null: all three empty

  const Requirements& required() const {
    static const Requirements kNone;
    return requirements != nullptr ? *requirements : kNone;
  }
};

OperationResourceEstimator::~OperationResourceEstimator() = default;

Result<void> OperationResourceEstimateRequest::validate() const {
  const std::string_view node = node_id.str();
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
  if (!input_fingerprint.is_canonical_sha256()) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "resource estimate request for node `{}` has input fingerprint `{}` that is "
                      "not a canonical sha256",
                      node, input_fingerprint.hex())
        .with_field("node_id", node);
  }
  return {};
}

namespace {

// The family and operation fingerprints an estimator input names must be
// canonical; errors name the node (and the provider, when there is one).
Result<void> check_input_fingerprints(const std::string& prepared_family_fingerprint,
                                      const std::string& operation_fingerprint,
                                      const NodeId& node_id, const OperationId& operation_id,
                                      const ProviderId* provider_id) {
  auto subject = [&] {  // formatted only for an error
    return provider_id == nullptr
               ? fmt::format("estimator input for node `{}`", node_id.str())
               : fmt::format("estimator input for node `{}` (provider `{}`)", node_id.str(),
                             provider_id->str());
  };
  if (!is_canonical_sha256(prepared_family_fingerprint)) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "{}: prepared family fingerprint `{}` is not a canonical sha256", subject(),
                      prepared_family_fingerprint)
        .with_field("node_id", node_id.str());
  }
  if (!is_canonical_sha256(operation_fingerprint)) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "{}: operation `{}` fingerprint `{}` is not a canonical sha256", subject(),
                      operation_id.str(), operation_fingerprint)
        .with_field("node_id", node_id.str());
  }
  return {};
}

}  // namespace

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
  FERRITE_RETURN_IF_ERROR(check_input_fingerprints(prepared_family_fingerprint,
                                                   operation_fingerprint, node_id, operation_id,
                                                   &provider_id));
  FERRITE_ASSIGN_OR_RETURN(
      auto input, NodeEstimatorInput::encode(prepared_family_fingerprint, operation_fingerprint,
                                             node_id, operation_id, operation_version, attributes,
                                             canonical_values, required_capabilities,
                                             required_weight_formats,
                                             required_quantization_formats));
  return input->fingerprint_for(provider_id).hex();
}

namespace {

// One provider's estimator input: the node's bytes around its id.
class ProviderEstimatorInput : public DeferredSha256::Source {
 public:
  ProviderEstimatorInput(std::shared_ptr<const NodeEstimatorInput> node, ProviderId provider)
      : node_(std::move(node)), provider_(std::move(provider)) {}

 protected:
  void write(CanonicalSha256& out) const override { node_->write(provider_, out); }
  void release() override { node_.reset(); }

 private:
  std::shared_ptr<const NodeEstimatorInput> node_;
  ProviderId provider_;
};

}  // namespace

Result<std::shared_ptr<const NodeEstimatorInput>> NodeEstimatorInput::encode(
    const std::string& prepared_family_fingerprint, const std::string& operation_fingerprint,
    const NodeId& node_id, const OperationId& operation_id,
    const ContractVersion& operation_version,
    const std::map<AttributeId, SemanticValue>& attributes, std::string_view canonical_values,
    const std::set<CapabilityId>& required_capabilities,
    const std::set<WeightFormatId>& required_weight_formats,
    const std::set<QuantizationFormatId>& required_quantization_formats) {
  auto input = std::shared_ptr<NodeEstimatorInput>(new NodeEstimatorInput());
  FERRITE_ASSIGN_OR_RETURN(input->head_,
                           make_head(prepared_family_fingerprint, operation_fingerprint, node_id,
                                       operation_id, operation_version, attributes,
                                       required_capabilities, required_weight_formats,
                                       required_quantization_formats, nullptr));
  input->values_text_ = canonical_values;
  return std::shared_ptr<const NodeEstimatorInput>(std::move(input));
}

Result<std::shared_ptr<const NodeEstimatorInput>> NodeEstimatorInput::encode_sharing_values(
    const std::string& prepared_family_fingerprint, const std::string& operation_fingerprint,
    const NodeId& node_id, const OperationId& operation_id,
    const ContractVersion& operation_version,
    const std::map<AttributeId, SemanticValue>& attributes,
    std::shared_ptr<const std::vector<ResolvedValueBinding>> values,
    std::vector<std::string_view> weight_canonical,
    const std::set<CapabilityId>& required_capabilities,
    const std::set<WeightFormatId>& required_weight_formats,
    const std::set<QuantizationFormatId>& required_quantization_formats,
    const NodeEstimatorInput* earlier) {
  if (values == nullptr) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "estimator input for node `{}` has no bindings to share", node_id.str())
        .with_field("node_id", node_id.str());
  }
  auto input = std::shared_ptr<NodeEstimatorInput>(new NodeEstimatorInput());
  FERRITE_ASSIGN_OR_RETURN(input->head_,
                           make_head(prepared_family_fingerprint, operation_fingerprint, node_id,
                                       operation_id, operation_version, attributes,
                                       required_capabilities, required_weight_formats,
                                       required_quantization_formats, earlier));
  input->values_ = std::move(values);
  if (!weight_canonical.empty()) {
    input->weight_canonical_ =
        std::make_shared<const std::vector<std::string_view>>(std::move(weight_canonical));
  }
  return std::shared_ptr<const NodeEstimatorInput>(std::move(input));
}

std::shared_ptr<const NodeEstimatorInput> NodeEstimatorInput::with_moved_values(
    const NodeEstimatorInput& earlier,
    std::shared_ptr<const std::vector<ResolvedValueBinding>> values) {
  if (earlier.head_ == nullptr || earlier.values_ == nullptr || values == nullptr ||
      values->size() != earlier.values_->size()) {
    return nullptr;
  }
  for (size_t i = 0; i < values->size(); ++i) {
    if ((*values)[i].weight() != (*earlier.values_)[i].weight()) return nullptr;
  }
  auto input = std::shared_ptr<NodeEstimatorInput>(new NodeEstimatorInput());
  input->head_ = earlier.head_;
  input->values_ = std::move(values);
  input->weight_canonical_ = earlier.weight_canonical_;
  return std::shared_ptr<const NodeEstimatorInput>(std::move(input));
}

Result<std::shared_ptr<const NodeEstimatorInput::Head>> NodeEstimatorInput::make_head(
    const std::string& prepared_family_fingerprint, const std::string& operation_fingerprint,
    const NodeId& node_id, const OperationId& operation_id,
    const ContractVersion& operation_version,
    const std::map<AttributeId, SemanticValue>& attributes,
    const std::set<CapabilityId>& required_capabilities,
    const std::set<WeightFormatId>& required_weight_formats,
    const std::set<QuantizationFormatId>& required_quantization_formats,
    const NodeEstimatorInput* earlier) {
  // An earlier round's head, when it was made of exactly these inputs (a
  // later round moves only storage, which is in the values).
  if (earlier != nullptr && earlier->head_ != nullptr) {
    const Head& head = *earlier->head_;
    if (head.node_id == node_id && head.operation_id == operation_id &&
        head.operation_version == operation_version &&
        head.family_fingerprint.view() == prepared_family_fingerprint &&
        head.operation_fingerprint.view() == operation_fingerprint &&
        head.attributes == attributes &&
        head.required().capabilities == required_capabilities &&
        head.required().weight_formats == required_weight_formats &&
        head.required().quantization_formats == required_quantization_formats) {
      return earlier->head_;
    }
  }
  FERRITE_RETURN_IF_ERROR(check_input_fingerprints(prepared_family_fingerprint,
                                                   operation_fingerprint, node_id, operation_id,
                                                   nullptr));
  // Only what the head is made of is kept: its bytes are written when a
  // digest is read (write()), which the compile does once per node, for
  // the chosen provider of the last round.
  std::unique_ptr<const Head::Requirements> requirements;
  if (!required_capabilities.empty() || !required_weight_formats.empty() ||
      !required_quantization_formats.empty()) {
    requirements = std::make_unique<const Head::Requirements>(Head::Requirements{
        required_capabilities, required_weight_formats, required_quantization_formats});
  }
  return std::make_shared<const Head>(Head{
      InlineSha256Text(prepared_family_fingerprint), InlineSha256Text(operation_fingerprint),
      node_id, operation_id, operation_version, attributes, std::move(requirements)});
}

void NodeEstimatorInput::write(const ProviderId& provider_id, CanonicalSha256& out) const {
  // The bytes of canonical_json(estimator_input_material(...)) up to the
  // value of "values", in canonical key order, never built as a document.
  const Head& head = *head_;
  thread_local CanonicalText text;
  text.reset();
  text.begin_object();
  text.key("attributes");
  text.begin_object();
  for (const auto& [id, value] : head.attributes) {
    text.key(id);
    encode_semantic_value(value, text);
  }
  text.end_object();
  text.key("node_id");
  text.string(head.node_id);
  text.key("operation_fingerprint");
  text.string(head.operation_fingerprint.view());
  text.key("operation_id");
  text.string(head.operation_id);
  text.key("operation_version");
  text.string(head.operation_version.to_string());
  text.key("prepared_family_fingerprint");
  text.string(head.family_fingerprint.view());
  text.key("provider_id");
  text.string(provider_id);
  text.key("required_capabilities");
  const Head::Requirements& required = head.required();
  text.id_array(required.capabilities);
  text.key("required_quantization_formats");
  text.id_array(required.quantization_formats);
  text.key("required_weight_formats");
  text.id_array(required.weight_formats);
  text.key("values");
  out.update(text.text());
  if (values_ != nullptr) {
    static const std::vector<std::string_view> kNone;
    encode_canonical_values(*values_, weight_canonical_ != nullptr ? *weight_canonical_ : kNone,
                            out);
  } else {
    out.update(values_text_);
  }
  out.update("}");
}

DeferredSha256 NodeEstimatorInput::fingerprint_for(const ProviderId& provider_id) const {
  return DeferredSha256::of(
      std::make_shared<ProviderEstimatorInput>(shared_from_this(), provider_id));
}

}  // namespace ferrite
