// ferrite/core/identity.h — stable, portable identities.
//
// Contract: an `Identity<Tag>` is a validated string: 1..=160 bytes, each byte
// ASCII alphanumeric or one of `. _ - : /`. Invalid values are unrepresentable:
// the only ways to get one are `create` (returns an InvalidIdentity error that
// names the kind and the reason) and `literal` (for compile-time constants;
// terminates on invalid input, so never call it on data from a file).
// Identities order by plain byte-wise comparison, which fixes every iteration
// order that reaches a hash or an output file.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(NodeId node, NodeId::create("layer.0.attn"));
//   auto op = OperationId::literal("operation.rms_norm");
#pragma once

#include <compare>
#include <string>
#include <string_view>
#include <utility>

#include "ferrite/core/status.h"

namespace ferrite {

inline constexpr size_t kMaxIdentityBytes = 160;

// Validates `value` against the identity rules; `kind` names the identity in
// the error ("node", "operation attribute", ...).
Result<void> validate_identity(std::string_view kind, std::string_view value);

template <class Tag>
class Identity {
 public:
  static Result<Identity> create(std::string value) {
    FERRITE_RETURN_IF_ERROR(validate_identity(Tag::kKind, value));
    return Identity(std::move(value));
  }
  // For string literals in code and tests only: aborts on an invalid value.
  static Identity literal(std::string_view value) {
    auto result = create(std::string(value));
    if (!result) abort_invalid_literal(result.error());
    return std::move(*result);
  }
  static constexpr std::string_view kind() { return Tag::kKind; }

  const std::string& str() const { return value_; }
  std::string_view view() const { return value_; }

  friend auto operator<=>(const Identity&, const Identity&) = default;
  friend bool operator==(const Identity&, const Identity&) = default;

 private:
  explicit Identity(std::string value) : value_(std::move(value)) {}
  std::string value_;
};

[[noreturn]] void abort_invalid_literal(const Status& status);

#define FERRITE_DEFINE_IDENTITY(Name, kind_text)                 \
  struct Name##Tag {                                             \
    static constexpr std::string_view kKind = kind_text;         \
  };                                                             \
  using Name = Identity<Name##Tag>

FERRITE_DEFINE_IDENTITY(CapabilityId, "capability");
FERRITE_DEFINE_IDENTITY(DeviceId, "device");
FERRITE_DEFINE_IDENTITY(ModelFamilyId, "model family");
FERRITE_DEFINE_IDENTITY(NodeId, "node");
FERRITE_DEFINE_IDENTITY(OperationId, "operation");
FERRITE_DEFINE_IDENTITY(PlanId, "plan");
FERRITE_DEFINE_IDENTITY(ProgramValueId, "program value");
FERRITE_DEFINE_IDENTITY(ProviderId, "provider");
FERRITE_DEFINE_IDENTITY(QuantizationFormatId, "quantization format");
FERRITE_DEFINE_IDENTITY(ResourceId, "resource");
FERRITE_DEFINE_IDENTITY(StateId, "state");
FERRITE_DEFINE_IDENTITY(TensorId, "tensor");
FERRITE_DEFINE_IDENTITY(WeightId, "weight");
FERRITE_DEFINE_IDENTITY(WeightFormatId, "weight format");
FERRITE_DEFINE_IDENTITY(WeightLayoutId, "weight layout");
FERRITE_DEFINE_IDENTITY(WeightMaterializerId, "weight materializer");
FERRITE_DEFINE_IDENTITY(AttributeId, "operation attribute");
FERRITE_DEFINE_IDENTITY(PolicyId, "runtime policy");

// "{a, b, c}": the identities of an ordered range in its order, for messages.
template <class Range>
std::string identity_list_text(const Range& ids) {
  std::string text = "{";
  for (const auto& id : ids) {
    if (text.size() > 1) text += ", ";
    text += id.str();
  }
  return text + "}";
}

}  // namespace ferrite
