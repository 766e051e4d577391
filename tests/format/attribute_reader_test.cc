#include "ferrite/format/attribute_reader.h"

#include <gtest/gtest.h>

#include "ferrite/program/attribute_json.h"
#include "ferrite/program/model_program.h"
#include "format/format_test_util.h"

namespace ferrite {
namespace attribute_reader_test {

using format_test::FailsAt;
using nlohmann::json;

CanonicalRational rational(int64_t n, uint64_t d) { return *CanonicalRational::create(n, d); }

TEST(FormatAttributeReaderTest, SemanticValuesRoundTrip) {
  const std::vector<SemanticValue> values = {
      SemanticBool{true},
      SemanticBool{false},
      SemanticInteger{-3},
      SemanticInteger{INT64_MIN},
      SemanticUnsigned{UINT64_MAX},
      SemanticRational{rational(1, 100000)},
      SemanticRational{rational(-7, 3)},
      SemanticRational{CanonicalRational::from_integer(10000)},
      SemanticText{"half_split"},
      SemanticIntegers{{1, -2, INT64_MAX}},
  };
  for (const auto& original : values) {
    const json j = semantic_value_to_json(original);
    auto read = read_semantic_value(JsonCursor(j));
    FERRITE_ASSERT_OK(read);
    EXPECT_EQ(*read, original) << j.dump();
  }
}

TEST(FormatAttributeReaderTest, SemanticValueErrorsNamePaths) {
  auto read = [](const char* text) {
    static json doc;
    doc = json::parse(text);
    return read_semantic_value(JsonCursor(doc, "$.a.eps"));
  };
  EXPECT_TRUE(FailsAt(read(R"({"rational":0})"), ErrorCode::kSerialization, "$.a.eps.rational"));
  EXPECT_TRUE(FailsAt(read(R"({"rational":"1/0"})"), ErrorCode::kSerialization, "$.a.eps.rational"));
  EXPECT_TRUE(FailsAt(read(R"({"rational":"x"})"), ErrorCode::kSerialization, "$.a.eps.rational"));
  EXPECT_TRUE(FailsAt(read(R"({"unsigned":-1})"), ErrorCode::kSerialization, "$.a.eps.unsigned"));
  EXPECT_TRUE(FailsAt(read(R"({"float":1})"), ErrorCode::kSerialization, "$.a.eps.float"));
  EXPECT_TRUE(FailsAt(read(R"({})"), ErrorCode::kSerialization, "$.a.eps"));
  EXPECT_TRUE(FailsAt(read(R"({"bool":true,"text":"x"})"), ErrorCode::kSerialization, "$.a.eps"));
  EXPECT_TRUE(FailsAt(read(R"({"integers":[1,"2"]})"), ErrorCode::kSerialization,
                      "$.a.eps.integers[1]"));
  EXPECT_TRUE(FailsAt(read(R"(3)"), ErrorCode::kSerialization, "$.a.eps"));
  // Decimal text is read exactly.
  EXPECT_EQ(*read(R"({"rational":"1e-5"})"), SemanticValue(SemanticRational{rational(1, 100000)}));
}

TEST(FormatAttributeReaderTest, AttributeSchemasRoundTrip) {
  auto schema = AttributeSchema::create({
      {AttributeId::literal("flag"), {SemanticValueKind::kBool, false, BoolEqualsConstraint{true}}},
      {AttributeId::literal("offset"), {SemanticValueKind::kInteger, true, IntegerRangeConstraint{-1, 8}}},
      {AttributeId::literal("heads"), {SemanticValueKind::kUnsigned, true, UnsignedRangeConstraint{1, 64}}},
      {AttributeId::literal("epsilon"),
       {SemanticValueKind::kRational, true, RationalRangeConstraint{rational(0, 1), rational(1, 2)}}},
      {AttributeId::literal("convention"),
       {SemanticValueKind::kText, true, TextChoicesConstraint{{"half_split", "interleaved"}}}},
      {AttributeId::literal("axes"), {SemanticValueKind::kIntegers, false, IntegerListLengthConstraint{1, 4}}},
      {AttributeId::literal("note"), {SemanticValueKind::kText, false, NoAttributeConstraint{}}},
  });
  FERRITE_ASSERT_OK(schema);
  const json j = attribute_schema_to_json(*schema);
  auto read = read_attribute_schema(JsonCursor(j));
  FERRITE_ASSERT_OK(read);
  EXPECT_EQ(*read, *schema);
  auto empty = read_attribute_schema(JsonCursor(json::object()));
  FERRITE_ASSERT_OK(empty);
  EXPECT_EQ(*empty, AttributeSchema());
}

TEST(FormatAttributeReaderTest, AttributeSchemaErrorsNamePaths) {
  auto read = [](const char* text) {
    static json doc;
    doc = json::parse(text);
    return read_attribute_schema(JsonCursor(doc, "$.attributes"));
  };
  EXPECT_TRUE(FailsAt(read(R"({"eps":{"kind":"rational","required":true}})"),
                      ErrorCode::kSerialization, "$.attributes.eps.constraint"));
  EXPECT_TRUE(FailsAt(read(R"({"eps":{"kind":"real","required":true,"constraint":"none"}})"),
                      ErrorCode::kSerialization, "$.attributes.eps.kind"));
  EXPECT_TRUE(FailsAt(read(R"({"eps":{"kind":"unsigned","required":1,"constraint":"none"}})"),
                      ErrorCode::kSerialization, "$.attributes.eps.required"));
  EXPECT_TRUE(FailsAt(
      read(R"({"eps":{"kind":"unsigned","required":true,"constraint":{"unsigned_range":[1]}}})"),
      ErrorCode::kSerialization, "$.attributes.eps.constraint.unsigned_range"));
  EXPECT_TRUE(FailsAt(
      read(R"({"c":{"kind":"text","required":true,"constraint":{"text_choices":["a","a"]}}})"),
      ErrorCode::kSerialization, "$.attributes.c.constraint.text_choices[1]"));
  EXPECT_TRUE(FailsAt(read(R"({"bad id":{"kind":"bool","required":true,"constraint":"none"}})"),
                      ErrorCode::kSerialization, "$.attributes[\"bad id\"]"));
  // AttributeSchema::create rejections keep their code and gain the path.
  EXPECT_TRUE(FailsAt(
      read(R"({"eps":{"kind":"bool","required":true,"constraint":{"unsigned_range":[1,2]}}})"),
      ErrorCode::kInvalidExecutionPlan, "$.attributes"));
}

}  // namespace attribute_reader_test
}  // namespace ferrite
