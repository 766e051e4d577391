// ferrite/program/attribute_schema.h — the attributes an operation accepts.
//
// Contract: an `AttributeSchema` maps each declared `AttributeId` to an
// `AttributeSpec`: the value kind, whether the attribute is required, and an
// optional constraint. Each constraint is legal only with its matching kind
// (BoolEquals↔bool, IntegerRange↔integer, UnsignedRange↔unsigned,
// RationalRange↔rational, TextChoices↔text, IntegerListLength↔integers);
// ranges are inclusive and need minimum <= maximum; text choices must be
// non-empty and contain no empty string. `create` rejects any other spec with
// an error naming the attribute.
//
// `validate_values` checks a node's attribute values against the schema: each
// given attribute is declared, valid (`validate_semantic_value`), of the
// declared kind and satisfies its constraint; each required attribute is
// present. Messages start with the caller's `context` (e.g. "node
// `layer.0.attn`") and name the attribute; the status carries the fields
// "attribute" and (when non-empty) "context". Every error here is
// InvalidExecutionPlan.
//
// Design rule: attribute values never participate in shape inference. An
// attribute named "n" and a dimension symbol "n" are unrelated; shapes are
// fixed by tensor contracts alone.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto schema, AttributeSchema::create({
//       {AttributeId::literal("epsilon"),
//        AttributeSpec{SemanticValueKind::kRational, /*required=*/true, NoAttributeConstraint{}}},
//       {AttributeId::literal("heads"),
//        AttributeSpec{SemanticValueKind::kUnsigned, false, UnsignedRangeConstraint{1, 256}}}}));
//   FERRITE_RETURN_IF_ERROR(schema.validate_values(node.attributes, "node `layer.0.attn`"));
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "ferrite/core/identity.h"
#include "ferrite/core/status.h"
#include "ferrite/program/semantic_value.h"

namespace ferrite {

// Variant order is the spec's: None, BoolEquals, IntegerRange, UnsignedRange,
// RationalRange, TextChoices, IntegerListLength. Ranges are inclusive.
struct NoAttributeConstraint {
  friend auto operator<=>(const NoAttributeConstraint&, const NoAttributeConstraint&) = default;
};
struct BoolEqualsConstraint {
  bool value = false;
  friend auto operator<=>(const BoolEqualsConstraint&, const BoolEqualsConstraint&) = default;
};
struct IntegerRangeConstraint {
  int64_t minimum = 0;
  int64_t maximum = 0;
  friend auto operator<=>(const IntegerRangeConstraint&, const IntegerRangeConstraint&) = default;
};
struct UnsignedRangeConstraint {
  uint64_t minimum = 0;
  uint64_t maximum = 0;
  friend auto operator<=>(const UnsignedRangeConstraint&, const UnsignedRangeConstraint&) = default;
};
struct RationalRangeConstraint {
  CanonicalRational minimum;
  CanonicalRational maximum;
  friend auto operator<=>(const RationalRangeConstraint&, const RationalRangeConstraint&) = default;
};
struct TextChoicesConstraint {
  std::set<std::string> choices;
  friend auto operator<=>(const TextChoicesConstraint&, const TextChoicesConstraint&) = default;
};
// Bounds the number of elements of an Integers value.
struct IntegerListLengthConstraint {
  uint64_t minimum = 0;
  uint64_t maximum = 0;
  friend auto operator<=>(const IntegerListLengthConstraint&,
                          const IntegerListLengthConstraint&) = default;
};
using AttributeConstraint =
    std::variant<NoAttributeConstraint, BoolEqualsConstraint, IntegerRangeConstraint,
                 UnsignedRangeConstraint, RationalRangeConstraint, TextChoicesConstraint,
                 IntegerListLengthConstraint>;

// Seed-style rendering for messages: None, BoolEquals(true),
// IntegerRange { minimum: 1, maximum: 8 }, TextChoices { choices: ["a", "b"] }, ...
std::string describe_attribute_constraint(const AttributeConstraint& constraint);

// True when `value` has the constraint's kind and lies within it (None
// accepts every value). Does not check `validate_semantic_value`.
bool satisfies_attribute_constraint(const AttributeConstraint& constraint,
                                    const SemanticValue& value);

struct AttributeSpec {
  SemanticValueKind value_kind = SemanticValueKind::kBool;
  bool required = false;
  AttributeConstraint constraint = NoAttributeConstraint{};

  friend bool operator==(const AttributeSpec&, const AttributeSpec&) = default;
};

// Checks the spec rules above; the error names `id`.
Result<void> validate_attribute_spec(const AttributeId& id, const AttributeSpec& spec);

class AttributeSchema {
 public:
  // The empty schema: accepts only an empty attribute map.
  AttributeSchema() = default;

  static Result<AttributeSchema> create(std::map<AttributeId, AttributeSpec> entries);

  const std::map<AttributeId, AttributeSpec>& entries() const { return entries_; }
  // nullptr when `id` is not declared.
  const AttributeSpec* find(const AttributeId& id) const;

  // See the contract above. Given values are checked first (in attribute-id
  // order), then missing required attributes (in attribute-id order).
  Result<void> validate_values(const std::map<AttributeId, SemanticValue>& values,
                               std::string_view context) const;

  friend bool operator==(const AttributeSchema&, const AttributeSchema&) = default;

 private:
  explicit AttributeSchema(std::map<AttributeId, AttributeSpec> entries)
      : entries_(std::move(entries)) {}
  std::map<AttributeId, AttributeSpec> entries_;
};

}  // namespace ferrite
