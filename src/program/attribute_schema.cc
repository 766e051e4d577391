#include "ferrite/program/attribute_schema.h"

#include <optional>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ferrite {
namespace {

// The kind a constraint applies to; nullopt for None (any kind).
std::optional<SemanticValueKind> constraint_kind(const AttributeConstraint& constraint) {
  if (std::holds_alternative<BoolEqualsConstraint>(constraint)) return SemanticValueKind::kBool;
  if (std::holds_alternative<IntegerRangeConstraint>(constraint)) {
    return SemanticValueKind::kInteger;
  }
  if (std::holds_alternative<UnsignedRangeConstraint>(constraint)) {
    return SemanticValueKind::kUnsigned;
  }
  if (std::holds_alternative<RationalRangeConstraint>(constraint)) {
    return SemanticValueKind::kRational;
  }
  if (std::holds_alternative<TextChoicesConstraint>(constraint)) return SemanticValueKind::kText;
  if (std::holds_alternative<IntegerListLengthConstraint>(constraint)) {
    return SemanticValueKind::kIntegers;
  }
  return std::nullopt;
}

template <class Range>
bool is_inverted(const AttributeConstraint& constraint) {
  const auto* range = std::get_if<Range>(&constraint);
  return range != nullptr && range->minimum > range->maximum;
}

// "node `a` attribute `x`", or "attribute `x`" without a context.
std::string subject(std::string_view context, const AttributeId& id) {
  if (context.empty()) return fmt::format("attribute `{}`", id.str());
  return fmt::format("{} attribute `{}`", context, id.str());
}

// AttributeSchema::validate_values, but without the error field `context`.
Result<void> check_attribute_values(const AttributeSchema& schema,
                                    const std::map<AttributeId, SemanticValue>& values,
                                    std::string_view context) {
  for (const auto& [id, value] : values) {
    const AttributeSpec* spec = schema.find(id);
    if (spec == nullptr) {
      return make_error(ErrorCode::kInvalidExecutionPlan, "{} is not declared by the operation",
                        subject(context, id))
          .with_field("attribute", id.str());
    }
    if (auto valid = validate_semantic_value(value); !valid) {
      return make_error(ErrorCode::kInvalidExecutionPlan, "{} is invalid: {}", subject(context, id),
                        valid.error().message())
          .with_field("attribute", id.str());
    }
    if (kind_of(value) != spec->value_kind) {
      return make_error(ErrorCode::kInvalidExecutionPlan, "{} has kind {}, expected {}",
                        subject(context, id), semantic_value_kind_name(kind_of(value)),
                        semantic_value_kind_name(spec->value_kind))
          .with_field("attribute", id.str());
    }
    if (!satisfies_attribute_constraint(spec->constraint, value)) {
      return make_error(ErrorCode::kInvalidExecutionPlan, "{} value {} does not satisfy {}",
                        subject(context, id), describe_semantic_value(value),
                        describe_attribute_constraint(spec->constraint))
          .with_field("attribute", id.str());
    }
  }
  for (const auto& [id, spec] : schema.entries()) {
    if (!spec.required || values.contains(id)) continue;
    if (context.empty()) {
      return make_error(ErrorCode::kInvalidExecutionPlan, "missing required attribute `{}`",
                        id.str())
          .with_field("attribute", id.str());
    }
    return make_error(ErrorCode::kInvalidExecutionPlan, "{} requires attribute `{}`", context,
                      id.str())
        .with_field("attribute", id.str());
  }
  return {};
}

}  // namespace

std::string describe_attribute_constraint(const AttributeConstraint& constraint) {
  if (std::holds_alternative<NoAttributeConstraint>(constraint)) return "None";
  if (const auto* equals = std::get_if<BoolEqualsConstraint>(&constraint)) {
    return fmt::format("BoolEquals({})", equals->value);
  }
  if (const auto* range = std::get_if<IntegerRangeConstraint>(&constraint)) {
    return fmt::format("IntegerRange {{ minimum: {}, maximum: {} }}", range->minimum,
                       range->maximum);
  }
  if (const auto* range = std::get_if<UnsignedRangeConstraint>(&constraint)) {
    return fmt::format("UnsignedRange {{ minimum: {}, maximum: {} }}", range->minimum,
                       range->maximum);
  }
  if (const auto* range = std::get_if<RationalRangeConstraint>(&constraint)) {
    return fmt::format("RationalRange {{ minimum: {}, maximum: {} }}", range->minimum.to_string(),
                       range->maximum.to_string());
  }
  if (const auto* text = std::get_if<TextChoicesConstraint>(&constraint)) {
    std::vector<std::string> parts;
    for (const auto& choice : text->choices) {
      parts.push_back(describe_semantic_value(SemanticText{choice}));
    }
    return fmt::format("TextChoices {{ choices: [{}] }}", fmt::join(parts, ", "));
  }
  const auto& length = std::get<IntegerListLengthConstraint>(constraint);
  return fmt::format("IntegerListLength {{ minimum: {}, maximum: {} }}", length.minimum,
                     length.maximum);
}

bool satisfies_attribute_constraint(const AttributeConstraint& constraint,
                                    const SemanticValue& value) {
  if (std::holds_alternative<NoAttributeConstraint>(constraint)) return true;
  if (constraint_kind(constraint) != kind_of(value)) return false;
  if (const auto* equals = std::get_if<BoolEqualsConstraint>(&constraint)) {
    return std::get<SemanticBool>(value).value == equals->value;
  }
  if (const auto* range = std::get_if<IntegerRangeConstraint>(&constraint)) {
    const int64_t v = std::get<SemanticInteger>(value).value;
    return range->minimum <= v && v <= range->maximum;
  }
  if (const auto* range = std::get_if<UnsignedRangeConstraint>(&constraint)) {
    const uint64_t v = std::get<SemanticUnsigned>(value).value;
    return range->minimum <= v && v <= range->maximum;
  }
  if (const auto* range = std::get_if<RationalRangeConstraint>(&constraint)) {
    const CanonicalRational& v = std::get<SemanticRational>(value).value;
    return range->minimum <= v && v <= range->maximum;
  }
  if (const auto* text = std::get_if<TextChoicesConstraint>(&constraint)) {
    return text->choices.contains(std::get<SemanticText>(value).value);
  }
  const auto& length = std::get<IntegerListLengthConstraint>(constraint);
  const auto size = static_cast<uint64_t>(std::get<SemanticIntegers>(value).value.size());
  return length.minimum <= size && size <= length.maximum;
}

Result<void> validate_attribute_spec(const AttributeId& id, const AttributeSpec& spec) {
  const AttributeConstraint& constraint = spec.constraint;
  if (auto kind = constraint_kind(constraint); kind && *kind != spec.value_kind) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "attribute `{}` constraint {} applies to kind {}, but the attribute has "
                      "kind {}",
                      id.str(), describe_attribute_constraint(constraint),
                      semantic_value_kind_name(*kind), semantic_value_kind_name(spec.value_kind))
        .with_field("attribute", id.str());
  }
  if (is_inverted<IntegerRangeConstraint>(constraint) ||
      is_inverted<UnsignedRangeConstraint>(constraint) ||
      is_inverted<RationalRangeConstraint>(constraint) ||
      is_inverted<IntegerListLengthConstraint>(constraint)) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "attribute `{}` constraint {} has minimum greater than maximum", id.str(),
                      describe_attribute_constraint(constraint))
        .with_field("attribute", id.str());
  }
  if (const auto* text = std::get_if<TextChoicesConstraint>(&constraint)) {
    if (text->choices.empty()) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "attribute `{}` constraint {} has no choices", id.str(),
                        describe_attribute_constraint(constraint))
          .with_field("attribute", id.str());
    }
    if (text->choices.contains("")) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "attribute `{}` constraint {} has an empty choice", id.str(),
                        describe_attribute_constraint(constraint))
          .with_field("attribute", id.str());
    }
  }
  return {};
}

Result<AttributeSchema> AttributeSchema::create(std::map<AttributeId, AttributeSpec> entries) {
  for (const auto& [id, spec] : entries) {
    FERRITE_RETURN_IF_ERROR(validate_attribute_spec(id, spec));
  }
  return AttributeSchema(std::move(entries));
}

const AttributeSpec* AttributeSchema::find(const AttributeId& id) const {
  auto it = entries_.find(id);
  return it == entries_.end() ? nullptr : &it->second;
}

Result<void> AttributeSchema::validate_values(const std::map<AttributeId, SemanticValue>& values,
                                              std::string_view context) const {
  auto valid = check_attribute_values(*this, values, context);
  if (!valid && !context.empty()) {
    return make_error(std::move(valid).error().with_field("context", std::string(context)));
  }
  return valid;
}

}  // namespace ferrite
