#include "ferrite/core/element_type.h"

#include <iterator>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ferrite {
namespace element_type_test {

using ::testing::HasSubstr;

struct Row {
  ElementType type;
  std::string_view name;
  std::string_view debug_name;
  uint64_t size;
};

// Spec §2.1, in declared order.
const std::vector<Row>& spec_rows() {
  static const std::vector<Row> rows = {
      {ElementType::kBool, "bool", "Bool", 1}, {ElementType::kU8, "u8", "U8", 1},
      {ElementType::kU32, "u32", "U32", 4},    {ElementType::kI8, "i8", "I8", 1},
      {ElementType::kI32, "i32", "I32", 4},    {ElementType::kF16, "f16", "F16", 2},
      {ElementType::kBf16, "bf16", "Bf16", 2}, {ElementType::kF32, "f32", "F32", 4},
  };
  return rows;
}

TEST(ElementTypeTest, AllElementTypesIsInDeclaredOrder) {
  const std::vector<ElementType> all(std::begin(kAllElementTypes), std::end(kAllElementTypes));
  const std::vector<ElementType> expected = {
      ElementType::kBool, ElementType::kU8,  ElementType::kU32,  ElementType::kI8,
      ElementType::kI32,  ElementType::kF16, ElementType::kBf16, ElementType::kF32};
  EXPECT_EQ(all, expected);
}

TEST(ElementTypeTest, SetIteratesInDeclaredOrder) {
  // "First allowed dtype" depends on this: the set order is the declared order,
  // not grouped by size or name.
  std::set<ElementType> set(std::rbegin(kAllElementTypes), std::rend(kAllElementTypes));
  const std::vector<ElementType> iterated(set.begin(), set.end());
  const std::vector<ElementType> expected(std::begin(kAllElementTypes),
                                          std::end(kAllElementTypes));
  EXPECT_EQ(iterated, expected);
  const std::set<ElementType> mixed = {ElementType::kF32, ElementType::kI8, ElementType::kU32};
  EXPECT_EQ(*mixed.begin(), ElementType::kU32);
  EXPECT_LT(ElementType::kU32, ElementType::kI8);
  EXPECT_LT(ElementType::kBf16, ElementType::kF32);
}

TEST(ElementTypeTest, SizesInBytes) {
  for (const Row& row : spec_rows()) {
    EXPECT_EQ(element_type_size_bytes(row.type), row.size) << row.name;
  }
}

TEST(ElementTypeTest, WireAndDebugNames) {
  for (const Row& row : spec_rows()) {
    EXPECT_EQ(element_type_name(row.type), row.name);
    EXPECT_EQ(element_type_debug_name(row.type), row.debug_name);
  }
}

TEST(ElementTypeTest, NamesRoundTrip) {
  for (ElementType type : kAllElementTypes) {
    auto parsed = parse_element_type(element_type_name(type));
    ASSERT_TRUE(parsed) << parsed.error().to_string();
    EXPECT_EQ(*parsed, type) << element_type_name(type);
  }
}

TEST(ElementTypeTest, NamesAreDistinct) {
  std::set<std::string_view> names;
  std::set<std::string_view> debug_names;
  for (ElementType type : kAllElementTypes) {
    names.insert(element_type_name(type));
    debug_names.insert(element_type_debug_name(type));
  }
  EXPECT_EQ(names.size(), 8u);
  EXPECT_EQ(debug_names.size(), 8u);
}

TEST(ElementTypeTest, UnknownNameIsAnError) {
  auto parsed = parse_element_type("float32");
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(parsed.error().message(), HasSubstr("unknown element type `float32`"));
  EXPECT_THAT(parsed.error().message(), HasSubstr("bool, u8, u32, i8, i32, f16, bf16, f32"));
}

TEST(ElementTypeTest, ParsingIsExactAndCaseSensitive) {
  for (std::string_view bad : {"", "F32", "Bf16", "f32 ", " f32", "f64", "u16", "i64", "bool\n"}) {
    auto parsed = parse_element_type(bad);
    EXPECT_FALSE(parsed) << "`" << bad << "` parsed";
    if (!parsed) {
      EXPECT_EQ(parsed.error().code(), ErrorCode::kInvalidArgument);
    }
  }
  EXPECT_FALSE(parse_element_type(std::string_view("f32\0", 4)));
}

}  // namespace element_type_test
}  // namespace ferrite
