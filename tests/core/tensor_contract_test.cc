#include "ferrite/core/tensor_contract.h"

#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ferrite {
namespace tensor_contract_test {

using ::testing::HasSubstr;

const std::set<ElementType> kF32 = {ElementType::kF32};
const std::vector<LayoutConstraint> kContiguous = {ContiguousLayoutConstraint{}};

Result<TensorContract> with_dims(std::vector<DimensionConstraint> dims) {
  return TensorContract::create(std::move(dims), kF32, kContiguous, TensorAccess::kRead,
                                NoAlias{});
}

Result<TensorContract> with_layouts(std::vector<DimensionConstraint> dims,
                                    std::vector<LayoutConstraint> layouts) {
  return TensorContract::create(std::move(dims), kF32, std::move(layouts), TensorAccess::kRead,
                                NoAlias{});
}

void expect_error(const Result<TensorContract>& result, std::string_view needle) {
  ASSERT_FALSE(result) << "unexpectedly valid contract";
  EXPECT_EQ(result.error().code(), ErrorCode::kInvalidExecutionPlan);
  EXPECT_THAT(result.error().message(), HasSubstr(std::string(needle)));
}

StridedLayoutConstraint strided(std::vector<StrideConstraint> strides) {
  return StridedLayoutConstraint{std::move(strides)};
}

// ---- create: success -------------------------------------------------------

TEST(TensorContractTest, CreateKeepsFieldsAndDimensionOrder) {
  auto c = TensorContract::create(
      {DimensionSymbol{"tokens"}, DimensionExact{64}, DimensionRange{1, 8}},
      {ElementType::kF16, ElementType::kF32}, {ContiguousLayoutConstraint{}},
      TensorAccess::kReadWrite, MayAlias{2});
  ASSERT_TRUE(c) << c.error().to_string();
  ASSERT_EQ(c->rank(), 3u);
  EXPECT_EQ(c->dimensions()[0], DimensionConstraint(DimensionSymbol{"tokens"}));
  EXPECT_EQ(c->dimensions()[1], DimensionConstraint(DimensionExact{64}));
  EXPECT_EQ(c->dimensions()[2], DimensionConstraint(DimensionRange{1, 8}));
  EXPECT_EQ(c->element_types(), (std::set<ElementType>{ElementType::kF16, ElementType::kF32}));
  EXPECT_EQ(c->access(), TensorAccess::kReadWrite);
  EXPECT_EQ(c->alias(), AliasPolicy(MayAlias{2}));
  ASSERT_EQ(c->layouts().size(), 1u);
}

TEST(TensorContractTest, RankZeroContractIsValid) {
  auto c = with_layouts({}, {ContiguousLayoutConstraint{}, strided({}),
                             BlockedLayoutConstraint{{}, {}}});
  ASSERT_TRUE(c) << c.error().to_string();
  EXPECT_EQ(c->rank(), 0u);
  EXPECT_EQ(c->layouts().size(), 3u);
}

TEST(TensorContractTest, LayoutsAreSortedByVariantOrder) {
  auto c = with_layouts({DimensionExact{4}},
                        {BlockedLayoutConstraint{{4}, {0}}, strided({StrideExactBytes{4}}),
                         ContiguousLayoutConstraint{}});
  ASSERT_TRUE(c) << c.error().to_string();
  ASSERT_EQ(c->layouts().size(), 3u);
  EXPECT_TRUE(std::holds_alternative<ContiguousLayoutConstraint>(c->layouts()[0]));
  EXPECT_TRUE(std::holds_alternative<StridedLayoutConstraint>(c->layouts()[1]));
  EXPECT_TRUE(std::holds_alternative<BlockedLayoutConstraint>(c->layouts()[2]));
}

TEST(TensorContractTest, LayoutsAreSortedFieldWiseWithinAVariant) {
  auto c = with_layouts(
      {DimensionExact{4}},
      {strided({StrideSymbol{"s"}}), strided({StrideExactBytes{32}}), strided({StrideExactBytes{16}}),
       BlockedLayoutConstraint{{4}, {0}}, BlockedLayoutConstraint{{2}, {0}}});
  ASSERT_TRUE(c) << c.error().to_string();
  const std::vector<LayoutConstraint> expected = {
      strided({StrideExactBytes{16}}), strided({StrideExactBytes{32}}),
      strided({StrideSymbol{"s"}}),  // ExactBytes sorts before Symbol
      BlockedLayoutConstraint{{2}, {0}}, BlockedLayoutConstraint{{4}, {0}}};
  EXPECT_EQ(c->layouts(), expected);
  EXPECT_EQ(describe_layout_constraints(c->layouts()),
            "[Strided { strides: [ExactBytes(16)] }, Strided { strides: [ExactBytes(32)] }, "
            "Strided { strides: [Symbol(\"s\")] }, Blocked { block: [2], axis_order: [0] }, "
            "Blocked { block: [4], axis_order: [0] }]");
}

TEST(TensorContractTest, LayoutsAreDeduplicated) {
  auto c = with_layouts({DimensionExact{4}},
                        {ContiguousLayoutConstraint{}, strided({StrideExactBytes{4}}),
                         ContiguousLayoutConstraint{}, strided({StrideExactBytes{4}}),
                         ContiguousLayoutConstraint{}});
  ASSERT_TRUE(c) << c.error().to_string();
  const std::vector<LayoutConstraint> expected = {ContiguousLayoutConstraint{},
                                                  strided({StrideExactBytes{4}})};
  EXPECT_EQ(c->layouts(), expected);
}

TEST(TensorContractTest, EqualContractsFromDifferentLayoutOrders) {
  auto a = with_layouts({DimensionExact{4}},
                        {strided({StrideExactBytes{4}}), ContiguousLayoutConstraint{}});
  auto b = with_layouts({DimensionExact{4}}, {ContiguousLayoutConstraint{},
                                              strided({StrideExactBytes{4}}),
                                              ContiguousLayoutConstraint{}});
  ASSERT_TRUE(a && b);
  EXPECT_EQ(*a, *b);
  auto c = with_layouts({DimensionExact{8}}, {ContiguousLayoutConstraint{}});
  ASSERT_TRUE(c);
  EXPECT_FALSE(*a == *c);
}

TEST(TensorContractTest, AcceptsSingletonRangeAndPaddedSymbols) {
  EXPECT_TRUE(with_dims({DimensionRange{4, 4}}));
  EXPECT_TRUE(with_dims({DimensionRange{1, UINT64_MAX}}));
  EXPECT_TRUE(with_dims({DimensionSymbol{" n "}}));
  EXPECT_TRUE(with_dims({DimensionExact{1}}));
}

TEST(TensorContractTest, SameSymbolMayNameADimensionAndAStride) {
  auto c = with_layouts({DimensionSymbol{"shared"}}, {strided({StrideSymbol{"shared"}})});
  EXPECT_TRUE(c) << c.error().to_string();
}

// ---- create: errors --------------------------------------------------------

TEST(TensorContractTest, RejectsEmptyElementTypes) {
  expect_error(TensorContract::create({DimensionExact{4}}, {}, kContiguous, TensorAccess::kRead,
                                      NoAlias{}),
               "tensor contract must allow at least one element type");
}

TEST(TensorContractTest, RejectsEmptyLayouts) {
  expect_error(with_layouts({DimensionExact{4}}, {}),
               "tensor contract must allow at least one layout");
}

TEST(TensorContractTest, RejectsExactZeroNamingTheAxis) {
  expect_error(with_dims({DimensionExact{4}, DimensionExact{0}}),
               "tensor contract dimension[1] is Exact(0)");
}

TEST(TensorContractTest, RejectsRangeStartingAtZero) {
  expect_error(with_dims({DimensionRange{0, 8}}), "tensor contract dimension[0] range starts at zero");
  expect_error(with_dims({DimensionRange{0, 0}}), "range starts at zero");
}

TEST(TensorContractTest, RejectsInvertedRange) {
  expect_error(with_dims({DimensionExact{2}, DimensionRange{5, 4}}),
               "tensor contract dimension[1] range 5..=4 is inverted");
}

TEST(TensorContractTest, RejectsBlankSymbol) {
  expect_error(with_dims({DimensionSymbol{"  "}}), "tensor contract dimension[0] symbol is empty");
  expect_error(with_dims({DimensionSymbol{""}}), "symbol is empty");
  expect_error(with_dims({DimensionExact{1}, DimensionSymbol{"\t\n \r"}}),
               "dimension[1] symbol is empty");
}

TEST(TensorContractTest, RejectsStridedRankMismatch) {
  expect_error(with_layouts({DimensionExact{2}, DimensionExact{3}},
                            {strided({StrideExactBytes{4}})}),
               "tensor contract strided layout has 1 strides for rank 2");
  expect_error(with_layouts({}, {strided({StrideExactBytes{4}})}), "has 1 strides for rank 0");
}

TEST(TensorContractTest, RejectsZeroExactBytesStride) {
  expect_error(with_layouts({DimensionExact{2}, DimensionExact{3}},
                            {strided({StrideExactBytes{12}, StrideExactBytes{0}})}),
               "tensor contract stride[1] is ExactBytes(0)");
}

TEST(TensorContractTest, RejectsBlankStrideSymbol) {
  expect_error(with_layouts({DimensionExact{2}}, {strided({StrideSymbol{"  "}})}),
               "tensor contract stride[0] symbol is empty");
  expect_error(with_layouts({DimensionExact{2}}, {strided({StrideSymbol{""}})}),
               "stride[0] symbol is empty");
}

TEST(TensorContractTest, RejectsBlockedBlockCountMismatch) {
  expect_error(with_layouts({DimensionExact{4}, DimensionExact{4}},
                            {BlockedLayoutConstraint{{4}, {0, 1}}}),
               "tensor contract blocked layout has 1 block extents for rank 2");
}

TEST(TensorContractTest, RejectsZeroBlock) {
  expect_error(with_layouts({DimensionExact{4}, DimensionExact{4}},
                            {BlockedLayoutConstraint{{4, 0}, {0, 1}}}),
               "tensor contract block[1] is zero");
}

TEST(TensorContractTest, RejectsNonPermutationAxisOrder) {
  const std::vector<DimensionConstraint> dims = {DimensionExact{4}, DimensionExact{4}};
  expect_error(with_layouts(dims, {BlockedLayoutConstraint{{4, 4}, {0, 0}}}),
               "tensor contract blocked axis_order [0,0] is not a permutation of 0..2");
  expect_error(with_layouts(dims, {BlockedLayoutConstraint{{4, 4}, {1, 2}}}),
               "is not a permutation");
  expect_error(with_layouts(dims, {BlockedLayoutConstraint{{4, 4}, {0}}}), "is not a permutation");
  EXPECT_TRUE(with_layouts(dims, {BlockedLayoutConstraint{{4, 4}, {1, 0}}}));
}

TEST(TensorContractTest, InvalidLayoutIsRejectedEvenBesideAValidOne) {
  expect_error(with_layouts({DimensionExact{2}},
                            {ContiguousLayoutConstraint{}, strided({StrideExactBytes{0}})}),
               "ExactBytes(0)");
}

// ---- describe_* ------------------------------------------------------------

TEST(TensorContractTest, DescribeDimensionConstraint) {
  EXPECT_EQ(describe_dimension_constraint(DimensionExact{4}), "Exact(4)");
  EXPECT_EQ(describe_dimension_constraint(DimensionSymbol{"n"}), "Symbol(\"n\")");
  EXPECT_EQ(describe_dimension_constraint(DimensionRange{1, 8}), "Range { minimum: 1, maximum: 8 }");
}

TEST(TensorContractTest, DescribeLayoutConstraint) {
  EXPECT_EQ(describe_layout_constraint(ContiguousLayoutConstraint{}), "Contiguous");
  EXPECT_EQ(describe_layout_constraint(strided({StrideExactBytes{16}, StrideSymbol{"s"}})),
            "Strided { strides: [ExactBytes(16), Symbol(\"s\")] }");
  EXPECT_EQ(describe_layout_constraint(strided({})), "Strided { strides: [] }");
  EXPECT_EQ(describe_layout_constraint(BlockedLayoutConstraint{{4, 4}, {1, 0}}),
            "Blocked { block: [4, 4], axis_order: [1, 0] }");
}

TEST(TensorContractTest, DescribeLayoutConstraints) {
  EXPECT_EQ(describe_layout_constraints({}), "[]");
  EXPECT_EQ(describe_layout_constraints({ContiguousLayoutConstraint{}, strided({StrideExactBytes{16}})}),
            "[Contiguous, Strided { strides: [ExactBytes(16)] }]");
}

TEST(TensorContractTest, DescribeAliasPolicy) {
  EXPECT_EQ(describe_alias_policy(NoAlias{}), "NoAlias");
  EXPECT_EQ(describe_alias_policy(MayAlias{0}), "MayAlias { tensor_index: 0 }");
  EXPECT_EQ(describe_alias_policy(MustAlias{2}), "MustAlias { tensor_index: 2 }");
}

// ---- access ----------------------------------------------------------------

TEST(TensorContractTest, AccessNamesRoundTrip) {
  const std::vector<std::pair<TensorAccess, std::string_view>> cases = {
      {TensorAccess::kRead, "read"},
      {TensorAccess::kWrite, "write"},
      {TensorAccess::kReadWrite, "read_write"}};
  for (const auto& [access, name] : cases) {
    EXPECT_EQ(tensor_access_name(access), name);
    auto parsed = parse_tensor_access(name);
    ASSERT_TRUE(parsed) << parsed.error().to_string();
    EXPECT_EQ(*parsed, access);
  }
}

TEST(TensorContractTest, ParseAccessRejectsUnknownNames) {
  for (std::string_view bad : {"", "Read", "readwrite", "read-write", "rw"}) {
    auto parsed = parse_tensor_access(bad);
    ASSERT_FALSE(parsed) << bad;
    EXPECT_EQ(parsed.error().code(), ErrorCode::kInvalidArgument);
  }
  EXPECT_THAT(parse_tensor_access("rw").error().message(), HasSubstr("unknown tensor access `rw`"));
}

TEST(TensorContractTest, AccessReadsAndWrites) {
  EXPECT_TRUE(access_reads(TensorAccess::kRead));
  EXPECT_FALSE(access_writes(TensorAccess::kRead));
  EXPECT_FALSE(access_reads(TensorAccess::kWrite));
  EXPECT_TRUE(access_writes(TensorAccess::kWrite));
  EXPECT_TRUE(access_reads(TensorAccess::kReadWrite));
  EXPECT_TRUE(access_writes(TensorAccess::kReadWrite));
}

}  // namespace tensor_contract_test
}  // namespace ferrite
