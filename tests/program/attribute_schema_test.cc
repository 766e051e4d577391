#include "ferrite/program/attribute_schema.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace ferrite {
namespace attribute_schema_test {

constexpr std::string_view kContext = "node `layer.0.attn`";

AttributeId id(std::string_view name) { return AttributeId::literal(name); }

CanonicalRational rational(int64_t n, uint64_t d) { return *CanonicalRational::create(n, d); }

AttributeSpec spec(SemanticValueKind kind, bool required, AttributeConstraint constraint) {
  return AttributeSpec{kind, required, std::move(constraint)};
}

bool contains(const std::string& haystack, std::string_view needle) {
  return haystack.find(needle) != std::string::npos;
}

// A schema with one attribute of every kind, each with a constraint.
AttributeSchema full_schema() {
  auto schema = AttributeSchema::create({
      {id("causal"), spec(SemanticValueKind::kBool, false, BoolEqualsConstraint{true})},
      {id("offset"), spec(SemanticValueKind::kInteger, false, IntegerRangeConstraint{-4, 4})},
      {id("heads"), spec(SemanticValueKind::kUnsigned, true, UnsignedRangeConstraint{1, 256})},
      {id("epsilon"), spec(SemanticValueKind::kRational, false,
                           RationalRangeConstraint{rational(0, 1), rational(1, 1000)})},
      {id("scaling"), spec(SemanticValueKind::kText, false,
                           TextChoicesConstraint{{"linear", "rope", "yarn"}})},
      {id("axes"), spec(SemanticValueKind::kIntegers, false, IntegerListLengthConstraint{1, 3})},
      {id("note"), spec(SemanticValueKind::kText, false, NoAttributeConstraint{})},
  });
  EXPECT_TRUE(schema) << schema.error().to_string();
  return *schema;
}

std::map<AttributeId, SemanticValue> good_values() {
  return {
      {id("causal"), SemanticBool{true}},
      {id("offset"), SemanticInteger{-4}},
      {id("heads"), SemanticUnsigned{256}},
      {id("epsilon"), SemanticRational{*CanonicalRational::parse_decimal("1e-5")}},
      {id("scaling"), SemanticText{"rope"}},
      {id("axes"), SemanticIntegers{{0, 1, 2}}},
      {id("note"), SemanticText{"anything"}},
  };
}

// Asserts `result` failed as InvalidExecutionPlan naming `attribute`, and
// returns the message.
template <class T>
std::string expect_plan_error(const Result<T>& result, std::string_view attribute) {
  EXPECT_FALSE(result);
  if (result) return "";
  const Status& status = result.error();
  EXPECT_EQ(status.code(), ErrorCode::kInvalidExecutionPlan) << status.to_string();
  EXPECT_TRUE(contains(status.message(), fmt::format("`{}`", attribute))) << status.message();
  auto field = status.fields().find("attribute");
  EXPECT_TRUE(field != status.fields().end() && field->second == attribute) << status.to_string();
  return status.message();
}

// ---- AttributeSchema::create ---------------------------------------------

TEST(AttributeSchemaCreateTest, AcceptsEveryConstraintWithItsKind) {
  auto schema = full_schema();
  EXPECT_EQ(schema.entries().size(), 7u);
  const AttributeSpec* heads = schema.find(id("heads"));
  ASSERT_NE(heads, nullptr);
  EXPECT_EQ(heads->value_kind, SemanticValueKind::kUnsigned);
  EXPECT_TRUE(heads->required);
  const AttributeConstraint expected = UnsignedRangeConstraint{1, 256};
  EXPECT_EQ(heads->constraint, expected);
  EXPECT_EQ(schema.find(id("missing")), nullptr);
}

TEST(AttributeSchemaCreateTest, AcceptsNoConstraintWithEveryKindAndPointRanges) {
  std::map<AttributeId, AttributeSpec> entries;
  int index = 0;
  for (auto kind : {SemanticValueKind::kBool, SemanticValueKind::kInteger,
                    SemanticValueKind::kUnsigned, SemanticValueKind::kRational,
                    SemanticValueKind::kText, SemanticValueKind::kIntegers}) {
    entries.emplace(id(fmt::format("plain{}", index++)), spec(kind, true, NoAttributeConstraint{}));
  }
  entries.emplace(id("point_i"), spec(SemanticValueKind::kInteger, false,
                                      IntegerRangeConstraint{3, 3}));
  entries.emplace(id("point_u"), spec(SemanticValueKind::kUnsigned, false,
                                      UnsignedRangeConstraint{0, 0}));
  entries.emplace(id("point_r"), spec(SemanticValueKind::kRational, false,
                                      RationalRangeConstraint{rational(1, 2), rational(2, 4)}));
  entries.emplace(id("point_l"), spec(SemanticValueKind::kIntegers, false,
                                      IntegerListLengthConstraint{2, 2}));
  auto schema = AttributeSchema::create(entries);
  ASSERT_TRUE(schema) << schema.error().to_string();
  EXPECT_EQ(schema->entries(), entries);
}

TEST(AttributeSchemaCreateTest, EmptySchemaIsValid) {
  auto schema = AttributeSchema::create({});
  ASSERT_TRUE(schema);
  EXPECT_TRUE(schema->entries().empty());
  EXPECT_EQ(*schema, AttributeSchema());
}

TEST(AttributeSchemaCreateTest, RejectsEachConstraintWithAnotherKind) {
  const std::vector<std::pair<AttributeConstraint, SemanticValueKind>> constraints = {
      {BoolEqualsConstraint{true}, SemanticValueKind::kBool},
      {IntegerRangeConstraint{0, 1}, SemanticValueKind::kInteger},
      {UnsignedRangeConstraint{0, 1}, SemanticValueKind::kUnsigned},
      {RationalRangeConstraint{rational(0, 1), rational(1, 1)}, SemanticValueKind::kRational},
      {TextChoicesConstraint{{"a"}}, SemanticValueKind::kText},
      {IntegerListLengthConstraint{1, 2}, SemanticValueKind::kIntegers},
  };
  const SemanticValueKind kinds[] = {SemanticValueKind::kBool,     SemanticValueKind::kInteger,
                                     SemanticValueKind::kUnsigned, SemanticValueKind::kRational,
                                     SemanticValueKind::kText,     SemanticValueKind::kIntegers};
  for (const auto& [constraint, matching] : constraints) {
    for (auto kind : kinds) {
      auto result = AttributeSchema::create(
          {{id("ok"), spec(SemanticValueKind::kBool, false, NoAttributeConstraint{})},
           {id("bad.attr"), spec(kind, false, constraint)}});
      if (kind == matching) {
        EXPECT_TRUE(result) << result.error().to_string();
        continue;
      }
      std::string message = expect_plan_error(result, "bad.attr");
      EXPECT_TRUE(contains(message, describe_attribute_constraint(constraint))) << message;
      EXPECT_TRUE(contains(message, fmt::format("applies to kind {}, but the attribute has kind {}",
                                                semantic_value_kind_name(matching),
                                                semantic_value_kind_name(kind))))
          << message;
    }
  }
}

TEST(AttributeSchemaCreateTest, RejectsInvertedRanges) {
  const std::vector<std::pair<AttributeConstraint, SemanticValueKind>> inverted = {
      {IntegerRangeConstraint{5, -5}, SemanticValueKind::kInteger},
      {UnsignedRangeConstraint{2, 1}, SemanticValueKind::kUnsigned},
      {RationalRangeConstraint{rational(1, 2), rational(1, 3)}, SemanticValueKind::kRational},
      {IntegerListLengthConstraint{4, 3}, SemanticValueKind::kIntegers},
  };
  for (const auto& [constraint, kind] : inverted) {
    auto result = AttributeSchema::create({{id("range.attr"), spec(kind, true, constraint)}});
    std::string message = expect_plan_error(result, "range.attr");
    EXPECT_TRUE(contains(message, "minimum greater than maximum")) << message;
    EXPECT_TRUE(contains(message, describe_attribute_constraint(constraint))) << message;
  }
}

TEST(AttributeSchemaCreateTest, RejectsEmptyChoicesAndEmptyChoice) {
  auto none = AttributeSchema::create(
      {{id("mode"), spec(SemanticValueKind::kText, false, TextChoicesConstraint{})}});
  EXPECT_TRUE(contains(expect_plan_error(none, "mode"), "has no choices"));
  auto blank = AttributeSchema::create(
      {{id("mode"), spec(SemanticValueKind::kText, false, TextChoicesConstraint{{"a", ""}})}});
  EXPECT_TRUE(contains(expect_plan_error(blank, "mode"), "has an empty choice"));
}

TEST(AttributeSchemaCreateTest, ValidateAttributeSpecDirectly) {
  EXPECT_TRUE(validate_attribute_spec(
      id("x"), spec(SemanticValueKind::kUnsigned, false, UnsignedRangeConstraint{1, 2})));
  expect_plan_error(validate_attribute_spec(id("x"), spec(SemanticValueKind::kInteger, false,
                                                          UnsignedRangeConstraint{1, 2})),
                    "x");
}

// ---- validate_values --------------------------------------------------------

TEST(AttributeSchemaValidateTest, AcceptsValidValues) {
  auto schema = full_schema();
  auto result = schema.validate_values(good_values(), kContext);
  EXPECT_TRUE(result) << result.error().to_string();
}

TEST(AttributeSchemaValidateTest, OptionalAttributesMayBeAbsent) {
  auto schema = full_schema();
  auto result = schema.validate_values({{id("heads"), SemanticUnsigned{1}}}, kContext);
  EXPECT_TRUE(result) << result.error().to_string();
}

TEST(AttributeSchemaValidateTest, EmptySchemaAcceptsOnlyNoValues) {
  AttributeSchema schema;
  EXPECT_TRUE(schema.validate_values({}, kContext));
  expect_plan_error(schema.validate_values({{id("n"), SemanticUnsigned{1}}}, kContext), "n");
}

TEST(AttributeSchemaValidateTest, RejectsUndeclaredAttribute) {
  auto schema = full_schema();
  auto values = good_values();
  values.emplace(id("window"), SemanticUnsigned{4096});
  auto result = schema.validate_values(values, kContext);
  EXPECT_EQ(expect_plan_error(result, "window"),
            "node `layer.0.attn` attribute `window` is not declared by the operation");
  EXPECT_EQ(result.error().fields().at("context"), kContext);
}

TEST(AttributeSchemaValidateTest, RejectsInvalidValues) {
  auto schema = full_schema();
  auto values = good_values();
  values[id("note")] = SemanticText{""};
  std::string message = expect_plan_error(schema.validate_values(values, kContext), "note");
  EXPECT_TRUE(contains(message, "node `layer.0.attn` attribute `note` is invalid")) << message;
  EXPECT_TRUE(contains(message, "must not be empty")) << message;

  values = good_values();
  values[id("axes")] = SemanticIntegers{};
  message = expect_plan_error(schema.validate_values(values, kContext), "axes");
  EXPECT_TRUE(contains(message, "attribute `axes` is invalid")) << message;
}

TEST(AttributeSchemaValidateTest, RejectsWrongKind) {
  auto schema = full_schema();
  auto values = good_values();
  values[id("heads")] = SemanticText{"eight"};
  EXPECT_EQ(expect_plan_error(schema.validate_values(values, kContext), "heads"),
            "node `layer.0.attn` attribute `heads` has kind text, expected unsigned");

  values = good_values();
  values[id("offset")] = SemanticUnsigned{1};  // integer and unsigned are distinct kinds
  EXPECT_EQ(expect_plan_error(schema.validate_values(values, kContext), "offset"),
            "node `layer.0.attn` attribute `offset` has kind unsigned, expected integer");

  values = good_values();
  values[id("note")] = SemanticIntegers{{1}};  // no constraint still checks the kind
  EXPECT_EQ(expect_plan_error(schema.validate_values(values, kContext), "note"),
            "node `layer.0.attn` attribute `note` has kind integers, expected text");
}

TEST(AttributeSchemaValidateTest, RejectsEachConstraintViolation) {
  auto schema = full_schema();
  const std::vector<std::pair<std::string_view, SemanticValue>> violations = {
      {"causal", SemanticBool{false}},
      {"offset", SemanticInteger{5}},
      {"offset", SemanticInteger{-5}},
      {"heads", SemanticUnsigned{0}},
      {"heads", SemanticUnsigned{257}},
      {"epsilon", SemanticRational{rational(-1, 100000)}},
      {"epsilon", SemanticRational{rational(1001, 1000000)}},
      {"scaling", SemanticText{"Rope"}},
      {"axes", SemanticIntegers{{0, 1, 2, 3}}},
  };
  for (const auto& [name, value] : violations) {
    auto values = good_values();
    values[id(name)] = value;
    std::string message = expect_plan_error(schema.validate_values(values, kContext), name);
    const AttributeSpec& declared = *schema.find(id(name));
    EXPECT_EQ(message, fmt::format("node `layer.0.attn` attribute `{}` value {} does not satisfy {}",
                                   name, describe_semantic_value(value),
                                   describe_attribute_constraint(declared.constraint)));
  }
}

TEST(AttributeSchemaValidateTest, ConstraintBoundsAreInclusive) {
  auto schema = full_schema();
  const std::vector<std::pair<std::string_view, SemanticValue>> edges = {
      {"offset", SemanticInteger{4}},
      {"heads", SemanticUnsigned{1}},
      {"epsilon", SemanticRational{}},
      {"epsilon", SemanticRational{rational(1, 1000)}},
      {"axes", SemanticIntegers{{7}}},
      {"scaling", SemanticText{"yarn"}},
  };
  for (const auto& [name, value] : edges) {
    auto values = good_values();
    values[id(name)] = value;
    auto result = schema.validate_values(values, kContext);
    EXPECT_TRUE(result) << name << ": " << result.error().to_string();
  }
}

TEST(AttributeSchemaValidateTest, RejectsMissingRequiredAttribute) {
  auto schema = full_schema();
  auto values = good_values();
  values.erase(id("heads"));
  auto result = schema.validate_values(values, kContext);
  EXPECT_EQ(expect_plan_error(result, "heads"), "node `layer.0.attn` requires attribute `heads`");
  EXPECT_EQ(result.error().fields().at("context"), kContext);
}

TEST(AttributeSchemaValidateTest, MessagesWithoutContext) {
  auto schema = full_schema();
  auto result = schema.validate_values({}, "");
  EXPECT_EQ(expect_plan_error(result, "heads"), "missing required attribute `heads`");
  EXPECT_EQ(result.error().fields().count("context"), 0u);
  auto wrong = schema.validate_values({{id("heads"), SemanticBool{true}}}, "");
  EXPECT_EQ(expect_plan_error(wrong, "heads"), "attribute `heads` has kind bool, expected unsigned");
}

TEST(AttributeSchemaValidateTest, ChecksGivenValuesBeforeRequiredOnes) {
  auto schema = full_schema();
  // Both an undeclared attribute and a missing required one: the former wins.
  expect_plan_error(schema.validate_values({{id("zzz"), SemanticBool{true}}}, kContext), "zzz");
}

TEST(AttributeSchemaValidateTest, AttributeNamesAreNotDimensionSymbols) {
  // An attribute "n" is just a value; nothing ties it to a dimension symbol "n".
  auto schema = AttributeSchema::create(
      {{id("n"), spec(SemanticValueKind::kUnsigned, true, UnsignedRangeConstraint{1, 8})}});
  ASSERT_TRUE(schema);
  EXPECT_TRUE(schema->validate_values({{id("n"), SemanticUnsigned{8}}}, kContext));
  expect_plan_error(schema->validate_values({{id("n"), SemanticUnsigned{9}}}, kContext), "n");
}

// ---- helpers ------------------------------------------------------------------

TEST(AttributeConstraintTest, Describe) {
  EXPECT_EQ(describe_attribute_constraint(NoAttributeConstraint{}), "None");
  EXPECT_EQ(describe_attribute_constraint(BoolEqualsConstraint{true}), "BoolEquals(true)");
  EXPECT_EQ(describe_attribute_constraint(IntegerRangeConstraint{-1, 8}),
            "IntegerRange { minimum: -1, maximum: 8 }");
  EXPECT_EQ(describe_attribute_constraint(UnsignedRangeConstraint{1, 8}),
            "UnsignedRange { minimum: 1, maximum: 8 }");
  EXPECT_EQ(describe_attribute_constraint(
                RationalRangeConstraint{rational(0, 1), rational(1, 100000)}),
            "RationalRange { minimum: 0, maximum: 1/100000 }");
  EXPECT_EQ(describe_attribute_constraint(TextChoicesConstraint{{"rope", "linear"}}),
            "TextChoices { choices: [\"linear\", \"rope\"] }");
  EXPECT_EQ(describe_attribute_constraint(IntegerListLengthConstraint{1, 4}),
            "IntegerListLength { minimum: 1, maximum: 4 }");
}

TEST(AttributeConstraintTest, SatisfiesChecksKindAndBounds) {
  EXPECT_TRUE(satisfies_attribute_constraint(NoAttributeConstraint{}, SemanticText{"x"}));
  EXPECT_TRUE(satisfies_attribute_constraint(BoolEqualsConstraint{false}, SemanticBool{false}));
  EXPECT_FALSE(satisfies_attribute_constraint(BoolEqualsConstraint{false}, SemanticBool{true}));
  EXPECT_FALSE(satisfies_attribute_constraint(IntegerRangeConstraint{0, 9}, SemanticUnsigned{1}));
  EXPECT_TRUE(satisfies_attribute_constraint(
      RationalRangeConstraint{rational(1, 3), rational(1, 2)}, SemanticRational{rational(2, 5)}));
  EXPECT_FALSE(satisfies_attribute_constraint(
      RationalRangeConstraint{rational(1, 3), rational(1, 2)}, SemanticRational{rational(3, 10)}));
  EXPECT_TRUE(satisfies_attribute_constraint(IntegerListLengthConstraint{0, 1},
                                             SemanticIntegers{{5}}));
  EXPECT_FALSE(satisfies_attribute_constraint(IntegerListLengthConstraint{2, 3},
                                              SemanticIntegers{{5}}));
}

}  // namespace attribute_schema_test
}  // namespace ferrite
