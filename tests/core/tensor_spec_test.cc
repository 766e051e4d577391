#include "ferrite/core/tensor_spec.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ferrite {
namespace tensor_spec_test {

using ::testing::HasSubstr;

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
constexpr uint64_t k2p32 = uint64_t{1} << 32;
constexpr uint64_t k2p63 = uint64_t{1} << 63;

BlockedLayout exact_blocked(std::vector<uint64_t> block, std::vector<uint32_t> axis_order) {
  return BlockedLayout{std::move(block), std::move(axis_order), BlockedPaddingExact{}};
}

BlockedLayout zero_fill_blocked(std::vector<uint64_t> block, std::vector<uint32_t> axis_order,
                                std::vector<uint64_t> physical) {
  return BlockedLayout{std::move(block), std::move(axis_order),
                       BlockedPaddingZeroFill{std::move(physical)}};
}

uint64_t bytes_of(std::vector<uint64_t> dims, ElementType type, ResolvedTensorLayout layout) {
  auto t = ResolvedTensorSpec::create(std::move(dims), type, std::move(layout));
  EXPECT_TRUE(t) << t.error().to_string();
  return t ? t->minimum_storage_bytes() : 0;
}

// Asserts an InvalidExecutionPlan error whose message contains `needle`.
void expect_error(std::vector<uint64_t> dims, ElementType type, ResolvedTensorLayout layout,
                  std::string_view needle) {
  auto t = ResolvedTensorSpec::create(std::move(dims), type, std::move(layout));
  ASSERT_FALSE(t) << "unexpectedly valid: " << t->to_string();
  EXPECT_EQ(t.error().code(), ErrorCode::kInvalidExecutionPlan);
  EXPECT_THAT(t.error().message(), HasSubstr(std::string(needle)));
}

// ---- contiguous ------------------------------------------------------------

TEST(ResolvedTensorSpecTest, ContiguousBytes) {
  auto t = ResolvedTensorSpec::create({2, 3}, ElementType::kF16, ContiguousLayout{});
  ASSERT_TRUE(t) << t.error().to_string();
  EXPECT_EQ(t->minimum_storage_bytes(), 12u);
}

TEST(ResolvedTensorSpecTest, ContiguousBytesUseElementSize) {
  EXPECT_EQ(bytes_of({4, 8}, ElementType::kF32, ContiguousLayout{}), 128u);
  EXPECT_EQ(bytes_of({4, 8}, ElementType::kU8, ContiguousLayout{}), 32u);
  EXPECT_EQ(bytes_of({4, 8}, ElementType::kBool, ContiguousLayout{}), 32u);
  EXPECT_EQ(bytes_of({4, 8}, ElementType::kBf16, ContiguousLayout{}), 64u);
  EXPECT_EQ(bytes_of({4, 8}, ElementType::kI32, ContiguousLayout{}), 128u);
}

TEST(ResolvedTensorSpecTest, AccessorsReturnConstructionArguments) {
  auto t = ResolvedTensorSpec::create({3, 5}, ElementType::kI8, StridedLayout{{10, 1}});
  ASSERT_TRUE(t) << t.error().to_string();
  EXPECT_EQ(t->dimensions(), (std::vector<uint64_t>{3, 5}));
  EXPECT_EQ(t->element_type(), ElementType::kI8);
  EXPECT_EQ(t->rank(), 2u);
  EXPECT_FALSE(t->is_contiguous());
  ASSERT_TRUE(std::holds_alternative<StridedLayout>(t->layout()));
  EXPECT_EQ(std::get<StridedLayout>(t->layout()).byte_strides, (std::vector<uint64_t>{10, 1}));
}

TEST(ResolvedTensorSpecTest, MoveTakesTheStateAndTheMovedFromCanBeAssignedTo) {
  auto made = ResolvedTensorSpec::create({3, 5}, ElementType::kF16, StridedLayout{{10, 2}});
  ASSERT_TRUE(made) << made.error().to_string();
  const ResolvedTensorSpec copy = *made;
  ResolvedTensorSpec moved = std::move(*made);
  EXPECT_EQ(moved, copy);
  EXPECT_EQ(moved.to_string(), copy.to_string());
  // The moved-from tensor may be assigned to (tensor_spec.h), by copy or move.
  *made = copy;
  EXPECT_EQ(*made, copy);
  auto other = ResolvedTensorSpec::create({7}, ElementType::kI32, ContiguousLayout{});
  ASSERT_TRUE(other) << other.error().to_string();
  moved = std::move(*other);
  EXPECT_EQ(moved.dimensions(), (std::vector<uint64_t>{7}));
  EXPECT_EQ(moved.element_type(), ElementType::kI32);
  *other = std::move(moved);
  EXPECT_EQ(other->minimum_storage_bytes(), 28u);
  EXPECT_EQ(copy.minimum_storage_bytes(), 30u);  // its own state, untouched by the moves
}

TEST(ResolvedTensorSpecTest, RankZeroIsAScalar) {
  auto t = ResolvedTensorSpec::create({}, ElementType::kF32, ContiguousLayout{});
  ASSERT_TRUE(t) << t.error().to_string();
  EXPECT_EQ(t->rank(), 0u);
  EXPECT_TRUE(t->is_contiguous());
  EXPECT_EQ(t->minimum_storage_bytes(), 4u);
  EXPECT_EQ(bytes_of({}, ElementType::kF16, ContiguousLayout{}), 2u);
  EXPECT_EQ(bytes_of({}, ElementType::kF32, StridedLayout{}), 4u);
  EXPECT_EQ(bytes_of({}, ElementType::kF32, exact_blocked({}, {})), 4u);
}

TEST(ResolvedTensorSpecTest, RejectsZeroDimensionNamingTheAxis) {
  expect_error({2, 0, 3}, ElementType::kF32, ContiguousLayout{},
               "tensor dimension[1] must be greater than zero");
  expect_error({0}, ElementType::kU8, ContiguousLayout{}, "dimension[0]");
  expect_error({4, 4, 0}, ElementType::kF32, StridedLayout{{64, 16, 4}}, "dimension[2]");
  expect_error({4, 0}, ElementType::kF32, exact_blocked({4, 4}, {0, 1}), "dimension[1]");
}

TEST(ResolvedTensorSpecTest, RejectsByteSizeOverflow) {
  expect_error({k2p32, k2p32}, ElementType::kU8, ContiguousLayout{}, "overflows u64");
  // The element count fits but the byte size does not.
  expect_error({k2p63}, ElementType::kF16, ContiguousLayout{}, "overflows u64");
  expect_error({kMax}, ElementType::kF32, ContiguousLayout{}, "overflows u64");
  // The dense size is checked for every layout.
  expect_error({k2p32, k2p32}, ElementType::kU8, StridedLayout{{1, 1}}, "overflows u64");
}

TEST(ResolvedTensorSpecTest, AcceptsByteSizeAtTheLimit) {
  EXPECT_EQ(bytes_of({kMax}, ElementType::kU8, ContiguousLayout{}), kMax);
  EXPECT_EQ(bytes_of({k2p32 - 1, k2p32 + 1}, ElementType::kU8, ContiguousLayout{}), kMax);
  EXPECT_EQ(bytes_of({k2p63}, ElementType::kU8, ContiguousLayout{}), k2p63);
}

// ---- strided ---------------------------------------------------------------

TEST(ResolvedTensorSpecTest, StridedSpanIsElementPlusStrideSteps) {
  // 4 + (2-1)*64 + (3-1)*4 = 76.
  EXPECT_EQ(bytes_of({2, 3}, ElementType::kF32, StridedLayout{{64, 4}}), 76u);
  // Dense row-major strides give the dense size.
  EXPECT_EQ(bytes_of({2, 3}, ElementType::kF32, StridedLayout{{12, 4}}), 24u);
  // 2 + (4-1)*2 = 8.
  EXPECT_EQ(bytes_of({4}, ElementType::kF16, StridedLayout{{2}}), 8u);
  // Unit dimensions contribute nothing whatever their stride.
  EXPECT_EQ(bytes_of({1, 1}, ElementType::kF32, StridedLayout{{1000, 999}}), 4u);
}

TEST(ResolvedTensorSpecTest, StridedAllowsOverlapAndTransposes) {
  // No overlap check: 4 + 1*4 + 2*4 = 16 (< dense 24).
  EXPECT_EQ(bytes_of({2, 3}, ElementType::kF32, StridedLayout{{4, 4}}), 16u);
  // Column-major: 4 + 1*4 + 2*8 = 24.
  EXPECT_EQ(bytes_of({2, 3}, ElementType::kF32, StridedLayout{{4, 8}}), 24u);
}

TEST(ResolvedTensorSpecTest, StridedRejectsRankMismatch) {
  expect_error({2, 3}, ElementType::kF32, StridedLayout{{4}},
               "strided layout has 1 byte strides for rank 2");
  expect_error({2}, ElementType::kF32, StridedLayout{{8, 4}}, "has 2 byte strides for rank 1");
  expect_error({}, ElementType::kF32, StridedLayout{{4}}, "for rank 0");
}

TEST(ResolvedTensorSpecTest, StridedRejectsZeroStrideNamingTheAxis) {
  expect_error({2, 3}, ElementType::kF32, StridedLayout{{12, 0}},
               "strided layout byte_strides[1] must be greater than zero");
  // Even on an axis of extent 1.
  expect_error({1, 3}, ElementType::kF32, StridedLayout{{0, 4}}, "byte_strides[0]");
}

TEST(ResolvedTensorSpecTest, StridedRejectsSpanOverflow) {
  // (3-1) * 2^63 overflows in the multiplication.
  expect_error({3}, ElementType::kU8, StridedLayout{{k2p63}}, "strided tensor byte span overflows u64");
  // 1 + (2-1) * (2^64-1) overflows in the addition.
  expect_error({2}, ElementType::kU8, StridedLayout{{kMax}}, "byte span overflows u64");
  // Two axes that each fit but whose sum does not.
  expect_error({2, 2}, ElementType::kU8, StridedLayout{{k2p63, k2p63}}, "byte span overflows u64");
}

TEST(ResolvedTensorSpecTest, StridedSpanAtTheLimit) {
  // 1 + (2-1) * (2^64-2) = 2^64-1.
  EXPECT_EQ(bytes_of({2}, ElementType::kU8, StridedLayout{{kMax - 1}}), kMax);
}

// ---- blocked: spec §2.3 test vectors ---------------------------------------

TEST(ResolvedTensorSpecTest, SpecVectorBlockedExact) {
  EXPECT_EQ(bytes_of({4}, ElementType::kF32, exact_blocked({4}, {0})), 16u);
}

TEST(ResolvedTensorSpecTest, SpecVectorBlockedZeroFill) {
  EXPECT_EQ(bytes_of({3}, ElementType::kF32, zero_fill_blocked({4}, {0}, {4})), 16u);
}

TEST(ResolvedTensorSpecTest, SpecVectorExactPaddingRequiresDivisibleExtent) {
  expect_error({3}, ElementType::kF32, exact_blocked({4}, {0}),
               "blocked layout with exact padding requires dimension[0]=3 divisible by block 4");
}

TEST(ResolvedTensorSpecTest, SpecVectorZeroFillWithWrongPhysicalExtent) {
  expect_error({3}, ElementType::kF32, zero_fill_blocked({4}, {0}, {3}),
               "differ from the padded extents");
  expect_error({3}, ElementType::kF32, zero_fill_blocked({4}, {0}, {8}),
               "differ from the padded extents");
}

TEST(ResolvedTensorSpecTest, SpecVectorZeroFillInPhysicalAxisOrder) {
  // padded = [4, 8]; physical order [axis 1, axis 0] = [8, 4]; 8*4*4 = 128.
  EXPECT_EQ(bytes_of({3, 5}, ElementType::kF32, zero_fill_blocked({4, 4}, {1, 0}, {8, 4})), 128u);
  // The same extents in logical order are rejected.
  expect_error({3, 5}, ElementType::kF32, zero_fill_blocked({4, 4}, {1, 0}, {4, 8}),
               "zero-fill physical dimensions [4,8] differ from the padded extents [8,4]");
  // With the identity order the logical order is the physical one.
  EXPECT_EQ(bytes_of({3, 5}, ElementType::kF32, zero_fill_blocked({4, 4}, {0, 1}, {4, 8})), 128u);
}

TEST(ResolvedTensorSpecTest, SpecVectorRepeatedAxisOrderIsRejected) {
  expect_error({4, 4}, ElementType::kF32, exact_blocked({4, 4}, {0, 0}),
               "blocked layout axis_order [0,0] is not a permutation of 0..2");
}

// ---- blocked: other rules --------------------------------------------------

TEST(ResolvedTensorSpecTest, BlockedExactWithMultipleBlocks) {
  EXPECT_EQ(bytes_of({8, 4}, ElementType::kF16, exact_blocked({4, 2}, {1, 0})), 64u);
  EXPECT_EQ(bytes_of({8}, ElementType::kU8, exact_blocked({1}, {0})), 8u);
}

TEST(ResolvedTensorSpecTest, BlockedRejectsOutOfRangeOrShortAxisOrder) {
  expect_error({4, 4}, ElementType::kF32, exact_blocked({4, 4}, {0, 2}), "is not a permutation");
  expect_error({4, 4}, ElementType::kF32, exact_blocked({4, 4}, {0}), "is not a permutation");
  expect_error({4, 4}, ElementType::kF32, exact_blocked({4, 4}, {1, 0, 2}),
               "is not a permutation");
}

TEST(ResolvedTensorSpecTest, BlockedRejectsBlockCountMismatch) {
  expect_error({4, 4}, ElementType::kF32, exact_blocked({4}, {0, 1}),
               "blocked layout has 1 block extents for rank 2");
}

TEST(ResolvedTensorSpecTest, BlockedRejectsZeroBlockNamingTheAxis) {
  expect_error({4, 4}, ElementType::kF32, exact_blocked({4, 0}, {0, 1}),
               "blocked layout block[1] must be greater than zero");
}

TEST(ResolvedTensorSpecTest, ZeroFillRejectsWrongPhysicalRank) {
  expect_error({3, 5}, ElementType::kF32, zero_fill_blocked({4, 4}, {0, 1}, {4}),
               "zero-fill padding lists 1 physical dimensions for rank 2");
}

TEST(ResolvedTensorSpecTest, ZeroFillThatPadsNoAxisIsRejected) {
  expect_error({4}, ElementType::kF32, zero_fill_blocked({4}, {0}, {4}), "use exact");
  expect_error({8, 4}, ElementType::kF32, zero_fill_blocked({4, 2}, {1, 0}, {4, 8}),
               "pads no axis");
  expect_error({}, ElementType::kF32, zero_fill_blocked({}, {}, {}), "pads no axis");
}

TEST(ResolvedTensorSpecTest, ZeroFillPaddingOneAxisIsEnough) {
  // Axis 0 is exact (8 % 4 == 0), axis 1 padded 3 -> 4.
  EXPECT_EQ(bytes_of({8, 3}, ElementType::kU8, zero_fill_blocked({4, 4}, {0, 1}, {8, 4})), 32u);
}

TEST(ResolvedTensorSpecTest, ZeroFillRejectsPaddingOverflow) {
  // 2^64-1 is odd: padding it to a multiple of 2 needs 2^64.
  expect_error({kMax}, ElementType::kU8, zero_fill_blocked({2}, {0}, {0}),
               "blocked tensor padding overflows u64");
}

TEST(ResolvedTensorSpecTest, ZeroFillRejectsStoredSizeOverflow) {
  // Logical (2^32-1)^2 bytes fit; the padded 2^32 * 2^32 does not.
  expect_error({k2p32 - 1, k2p32 - 1}, ElementType::kU8,
               zero_fill_blocked({k2p32, k2p32}, {0, 1}, {k2p32, k2p32}), "overflows u64");
}

// ---- renderings ------------------------------------------------------------

TEST(ResolvedTensorSpecTest, ToStringForms) {
  auto contiguous = ResolvedTensorSpec::create({2, 3}, ElementType::kF16, ContiguousLayout{});
  ASSERT_TRUE(contiguous);
  EXPECT_EQ(contiguous->to_string(), "f16[2,3]");

  auto scalar = ResolvedTensorSpec::create({}, ElementType::kF32, ContiguousLayout{});
  ASSERT_TRUE(scalar);
  EXPECT_EQ(scalar->to_string(), "f32[]");

  auto strided = ResolvedTensorSpec::create({2, 3}, ElementType::kF32, StridedLayout{{64, 4}});
  ASSERT_TRUE(strided);
  EXPECT_EQ(strided->to_string(), "f32[2,3] strided[64,4]");

  auto exact = ResolvedTensorSpec::create({4}, ElementType::kBf16, exact_blocked({4}, {0}));
  ASSERT_TRUE(exact);
  EXPECT_EQ(exact->to_string(), "bf16[4] blocked[4|0]");

  auto zero_fill = ResolvedTensorSpec::create({3, 5}, ElementType::kF32,
                                              zero_fill_blocked({4, 4}, {1, 0}, {8, 4}));
  ASSERT_TRUE(zero_fill);
  EXPECT_EQ(zero_fill->to_string(), "f32[3,5] blocked[4,4|1,0] zero-fill[8,4]");
}

TEST(ResolvedTensorSpecTest, LayoutShortName) {
  EXPECT_EQ(layout_short_name(ContiguousLayout{}), "contiguous");
  EXPECT_EQ(layout_short_name(StridedLayout{{16, 4}}), "strided[16,4]");
  EXPECT_EQ(layout_short_name(StridedLayout{}), "strided[]");
  EXPECT_EQ(layout_short_name(exact_blocked({4, 4}, {1, 0})), "blocked[4,4|1,0]");
  EXPECT_EQ(layout_short_name(zero_fill_blocked({4, 4}, {1, 0}, {8, 4})),
            "blocked[4,4|1,0] zero-fill[8,4]");
}

TEST(ResolvedTensorSpecTest, DescribeLayout) {
  EXPECT_EQ(describe_layout(ContiguousLayout{}), "Contiguous");
  EXPECT_EQ(describe_layout(StridedLayout{{16}}), "Strided { byte_strides: [16] }");
  EXPECT_EQ(describe_layout(StridedLayout{{64, 4}}), "Strided { byte_strides: [64, 4] }");
  EXPECT_EQ(describe_layout(exact_blocked({4}, {0})),
            "Blocked { block: [4], axis_order: [0], padding: Exact }");
  EXPECT_EQ(describe_layout(zero_fill_blocked({4, 4}, {1, 0}, {8, 4})),
            "Blocked { block: [4, 4], axis_order: [1, 0], padding: ZeroFill { "
            "physical_dimensions: [8, 4] } }");
}

// ---- equality --------------------------------------------------------------

TEST(ResolvedTensorSpecTest, EqualityComparesDimensionsTypeAndLayout) {
  auto a = ResolvedTensorSpec::create({2, 3}, ElementType::kF32, ContiguousLayout{});
  auto b = ResolvedTensorSpec::create({2, 3}, ElementType::kF32, ContiguousLayout{});
  auto other_dims = ResolvedTensorSpec::create({3, 2}, ElementType::kF32, ContiguousLayout{});
  auto other_type = ResolvedTensorSpec::create({2, 3}, ElementType::kI32, ContiguousLayout{});
  auto other_layout = ResolvedTensorSpec::create({2, 3}, ElementType::kF32, StridedLayout{{12, 4}});
  ASSERT_TRUE(a && b && other_dims && other_type && other_layout);
  EXPECT_EQ(*a, *b);
  EXPECT_NE(*a, *other_dims);
  EXPECT_NE(*a, *other_type);
  // Same byte size, different layout: still different tensors.
  EXPECT_EQ(a->minimum_storage_bytes(), other_layout->minimum_storage_bytes());
  EXPECT_NE(*a, *other_layout);
}

TEST(ResolvedTensorSpecTest, LayoutVariantsOrderContiguousStridedBlocked) {
  const ResolvedTensorLayout contiguous = ContiguousLayout{};
  const ResolvedTensorLayout strided = StridedLayout{{4}};
  const ResolvedTensorLayout blocked = exact_blocked({4}, {0});
  EXPECT_LT(contiguous, strided);
  EXPECT_LT(strided, blocked);
  EXPECT_LT(ResolvedTensorLayout(exact_blocked({4}, {0})),
            ResolvedTensorLayout(zero_fill_blocked({4}, {0}, {4})));
}

// ---- ProgramTensorSpec -----------------------------------------------------

TEST(ProgramTensorSpecTest, DefaultsToF32Contiguous) {
  ProgramTensorSpec spec;
  EXPECT_TRUE(spec.dimensions.empty());
  EXPECT_EQ(spec.element_type, ElementType::kF32);
  EXPECT_TRUE(std::holds_alternative<ContiguousLayout>(spec.layout));
}

TEST(ProgramTensorSpecTest, ValidateAcceptsAValidSpec) {
  ProgramTensorSpec spec{{3, 5}, ElementType::kF32, zero_fill_blocked({4, 4}, {1, 0}, {8, 4})};
  EXPECT_TRUE(spec.validate("weights.w"));
}

TEST(ProgramTensorSpecTest, ValidateWrapsTheReasonWithTheField) {
  ProgramTensorSpec spec{{4, 0}, ElementType::kF32, ContiguousLayout{}};
  auto result = spec.validate("states.cache");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), ErrorCode::kInvalidExecutionPlan);
  EXPECT_EQ(result.error().message(),
            "`states.cache` is invalid: tensor dimension[1] must be greater than zero");
}

TEST(ProgramTensorSpecTest, ValidateWrapsLayoutErrors) {
  ProgramTensorSpec spec{{3}, ElementType::kF32, exact_blocked({4}, {0})};
  auto result = spec.validate("x");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message(),
            "`x` is invalid: blocked layout with exact padding requires dimension[0]=3 divisible "
            "by block 4");
}

TEST(ProgramTensorSpecTest, ResolveMatchesCreate) {
  ProgramTensorSpec spec{{2, 3}, ElementType::kF32, StridedLayout{{64, 4}}};
  auto resolved = spec.resolve();
  ASSERT_TRUE(resolved) << resolved.error().to_string();
  auto created = ResolvedTensorSpec::create({2, 3}, ElementType::kF32, StridedLayout{{64, 4}});
  ASSERT_TRUE(created);
  EXPECT_EQ(*resolved, *created);
  EXPECT_EQ(resolved->minimum_storage_bytes(), 76u);

  ProgramTensorSpec bad{{2, 3}, ElementType::kF32, StridedLayout{{4}}};
  auto failed = bad.resolve();
  ASSERT_FALSE(failed);
  // resolve() does not add the field wrapper.
  EXPECT_EQ(failed.error().message(), "strided layout has 1 byte strides for rank 2");
}

TEST(ProgramTensorSpecTest, ByteLenIgnoresLayout) {
  ProgramTensorSpec zero_fill{{3}, ElementType::kF32, zero_fill_blocked({4}, {0}, {4})};
  auto len = zero_fill.byte_len();
  ASSERT_TRUE(len);
  EXPECT_EQ(*len, 12u);
  auto resolved = zero_fill.resolve();
  ASSERT_TRUE(resolved);
  EXPECT_EQ(resolved->minimum_storage_bytes(), 16u);

  ProgramTensorSpec strided{{2, 3}, ElementType::kF32, StridedLayout{{64, 4}}};
  ASSERT_TRUE(strided.byte_len());
  EXPECT_EQ(*strided.byte_len(), 24u);

  ProgramTensorSpec scalar{{}, ElementType::kF16, ContiguousLayout{}};
  ASSERT_TRUE(scalar.byte_len());
  EXPECT_EQ(*scalar.byte_len(), 2u);
}

TEST(ProgramTensorSpecTest, ByteLenReportsOverflow) {
  ProgramTensorSpec spec{{k2p32, k2p32}, ElementType::kU8, ContiguousLayout{}};
  auto len = spec.byte_len();
  ASSERT_FALSE(len);
  EXPECT_EQ(len.error().code(), ErrorCode::kInvalidExecutionPlan);
  EXPECT_THAT(len.error().message(), HasSubstr("overflows u64"));
}

TEST(ProgramTensorSpecTest, EqualityComparesAllFields) {
  ProgramTensorSpec a{{2}, ElementType::kF32, ContiguousLayout{}};
  ProgramTensorSpec b = a;
  EXPECT_EQ(a, b);
  b.element_type = ElementType::kF16;
  EXPECT_NE(a, b);
  b = a;
  b.layout = StridedLayout{{4}};
  EXPECT_NE(a, b);
  b = a;
  b.dimensions = {3};
  EXPECT_NE(a, b);
}

TEST(TensorSpecTest, CopiesShareOneStateAndCompareByValue) {
  const auto tensor =
      ResolvedTensorSpec::create({3, 5}, ElementType::kF32, zero_fill_blocked({4, 4}, {1, 0}, {8, 4}))
          .value();
  const ResolvedTensorSpec copy = tensor;  // NOLINT(performance-unnecessary-copy-initialization)
  EXPECT_EQ(&copy.dimensions(), &tensor.dimensions());
  EXPECT_EQ(&copy.layout(), &tensor.layout());
  EXPECT_EQ(copy, tensor);
  EXPECT_EQ(copy.minimum_storage_bytes(), 128u);
  // Made apart: equal by value, not by state.
  const auto again =
      ResolvedTensorSpec::create({3, 5}, ElementType::kF32, zero_fill_blocked({4, 4}, {1, 0}, {8, 4}))
          .value();
  EXPECT_NE(&again.dimensions(), &tensor.dimensions());
  EXPECT_EQ(again, tensor);
  const auto other_type =
      ResolvedTensorSpec::create({3, 5}, ElementType::kF16, zero_fill_blocked({4, 4}, {1, 0}, {8, 4}))
          .value();
  const auto other_layout = ResolvedTensorSpec::create({3, 5}, ElementType::kF32, ContiguousLayout{})
                                .value();
  EXPECT_NE(other_type, tensor);
  EXPECT_NE(other_layout, tensor);
}

}  // namespace tensor_spec_test
}  // namespace ferrite
