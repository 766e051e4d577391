#include "ferrite/format/tensor_arg.h"

#include <gtest/gtest.h>

#include "format/format_test_util.h"

namespace ferrite {
namespace tensor_arg_test {

using format_test::FailsWith;

TEST(FormatTensorArgTest, ParsesContiguousAndScalars) {
  auto tokens = parse_value_tensor_arg("value.tokens=u32[32]");
  FERRITE_ASSERT_OK(tokens);
  EXPECT_EQ(tokens->first, ProgramValueId::literal("value.tokens"));
  EXPECT_EQ(tokens->second, (ProgramTensorSpec{{32}, ElementType::kU32, ContiguousLayout{}}));

  auto scalar = parse_value_tensor_arg("x=f32[]");
  FERRITE_ASSERT_OK(scalar);
  EXPECT_EQ(scalar->second, (ProgramTensorSpec{{}, ElementType::kF32, ContiguousLayout{}}));

  auto matrix = parse_value_tensor_arg("a:b/c=bf16[2,3,4]");
  FERRITE_ASSERT_OK(matrix);
  EXPECT_EQ(matrix->first.str(), "a:b/c");
  EXPECT_EQ(matrix->second.dimensions, (std::vector<uint64_t>{2, 3, 4}));
}

TEST(FormatTensorArgTest, ParsesLayouts) {
  auto strided = parse_value_tensor_arg("x=f32[4,8]@strided[64,4]");
  FERRITE_ASSERT_OK(strided);
  EXPECT_EQ(strided->second.layout, ResolvedTensorLayout(StridedLayout{{64, 4}}));

  auto exact = parse_value_tensor_arg("x=f32[8,4]@blocked[4,4|1,0]");
  FERRITE_ASSERT_OK(exact);
  EXPECT_EQ(exact->second.layout,
            ResolvedTensorLayout(BlockedLayout{{4, 4}, {1, 0}, BlockedPaddingExact{}}));

  // 3 pads to 4 and 5 pads to 8; physical extents in axis order (axis 1, then 0).
  auto padded = parse_value_tensor_arg("x=f32[3,5]@blocked[4,4|1,0]");
  FERRITE_ASSERT_OK(padded);
  EXPECT_EQ(padded->second.layout,
            ResolvedTensorLayout(BlockedLayout{{4, 4}, {1, 0}, BlockedPaddingZeroFill{{8, 4}}}));
  auto resolved = padded->second.resolve();
  FERRITE_ASSERT_OK(resolved);
  EXPECT_EQ(resolved->minimum_storage_bytes(), 128u);

  auto scalar_strided = parse_value_tensor_arg("x=f32[]@strided[]");
  FERRITE_ASSERT_OK(scalar_strided);
}

TEST(FormatTensorArgTest, FormatRoundTrips) {
  for (const char* text : {"x=f32[]", "value.tokens=u32[32]", "x=f32[4,8]@strided[64,4]",
                           "x=f32[3,5]@blocked[4,4|1,0]", "x=u8[8,4]@blocked[4,2|0,1]"}) {
    auto parsed = parse_value_tensor_arg(text);
    FERRITE_ASSERT_OK(parsed);
    EXPECT_EQ(format_value_tensor_arg(parsed->first, parsed->second), text);
  }
}

TEST(FormatTensorArgTest, ErrorsQuoteTextAndPointAtProblem) {
  struct Case {
    const char* text;
    const char* fragment;
  };
  const std::vector<Case> cases = {
      {"x", "missing `=`"},
      {"=f32[4]", "is not a valid program value id"},
      {"bad id=f32[4]", "`bad id` is not a valid program value id"},
      {"x=f33[4]", "unknown element type `f33`"},
      {"x=f32", "expected `[` to open the dimensions but the text ends"},
      {"x=f32[4,a]", "dimension 1 `a` is not an unsigned integer (column 9)"},
      {"x=f32[4,]", "dimension 1 is empty"},
      {"x=f32[,4]", "dimension 0 is empty (column 7)"},
      {"x=f32[-4]", "dimension 0 `-4` is not an unsigned integer"},
      {"x=f32[04]", "dimension 0 `04` is not an unsigned integer"},
      {"x=f32[18446744073709551616]", "is not an unsigned integer"},
      {"x=f32[4", "expected `]` to close the dimensions but the text ends"},
      {"x=f32[4]x", "unexpected trailing text `x`"},
      {"x=f32[4] ", "unexpected trailing text"},
      {"x=f32[4]@tiled[4]", "unknown layout"},
      {"x=f32[4,8]@strided[4]", "1 byte strides for a rank-2 tensor"},
      {"x=f32[4]@blocked[4]", "expected `|` between block extents and axis order"},
      {"x=f32[4,4]@blocked[4|0]", "1 block extents for a rank-2 tensor"},
      {"x=f32[4,4]@blocked[4,0|0,1]", "block 1 must be greater than zero"},
      {"x=f32[4,4]@blocked[4,4|0,0]", "axis order [0,0] is not a permutation of 0..2"},
      {"x=f32[4,4]@blocked[4,4|0,2]", "is not a permutation"},
      {"x=f32[0]", "is invalid: tensor dimension[0] must be greater than zero"},
      {"x=f32[4]@strided[0]", "is invalid: strided layout byte_strides[0]"},
      {"x=f32[4294967296,4294967296]", "is invalid"},
  };
  for (const auto& c : cases) {
    auto result = parse_value_tensor_arg(c.text);
    EXPECT_TRUE(FailsWith(result, ErrorCode::kInvalidArgument, c.fragment)) << c.text;
    EXPECT_TRUE(FailsWith(result, ErrorCode::kInvalidArgument,
                          "tensor argument `" + std::string(c.text) + "`"))
        << c.text;
  }
}

}  // namespace tensor_arg_test
}  // namespace ferrite
