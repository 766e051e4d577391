#include "ferrite/core/tensor_json.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ferrite/core/fingerprint.h"

namespace ferrite {
namespace tensor_json_test {

using nlohmann::json;

std::string dump(const json& value) { return canonical_json(value); }

BlockedLayout exact_blocked(std::vector<uint64_t> block, std::vector<uint32_t> axis_order) {
  return BlockedLayout{std::move(block), std::move(axis_order), BlockedPaddingExact{}};
}

TensorContract contract(std::vector<DimensionConstraint> dims, std::set<ElementType> types,
                        std::vector<LayoutConstraint> layouts, TensorAccess access,
                        AliasPolicy alias) {
  auto c = TensorContract::create(std::move(dims), std::move(types), std::move(layouts), access,
                                  std::move(alias));
  EXPECT_TRUE(c) << c.error().to_string();
  return std::move(*c);
}

// ---- layouts ---------------------------------------------------------------

TEST(TensorJsonTest, ContiguousLayoutIsAString) {
  const json j = layout_to_json(ContiguousLayout{});
  EXPECT_TRUE(j.is_string());
  EXPECT_EQ(dump(j), R"("contiguous")");
}

TEST(TensorJsonTest, StridedLayout) {
  EXPECT_EQ(dump(layout_to_json(StridedLayout{{16, 4}})), R"({"strided":[16,4]})");
  EXPECT_EQ(dump(layout_to_json(StridedLayout{{16}})), R"({"strided":[16]})");
  EXPECT_EQ(dump(layout_to_json(StridedLayout{})), R"({"strided":[]})");
}

TEST(TensorJsonTest, BlockedLayoutWithExactPadding) {
  EXPECT_EQ(dump(layout_to_json(exact_blocked({4, 4}, {1, 0}))),
            R"({"blocked":{"axis_order":[1,0],"block":[4,4],"padding":"exact"}})");
  EXPECT_EQ(dump(layout_to_json(exact_blocked({4}, {0}))),
            R"({"blocked":{"axis_order":[0],"block":[4],"padding":"exact"}})");
}

TEST(TensorJsonTest, BlockedLayoutWithZeroFillPadding) {
  const json j = layout_to_json(BlockedLayout{{4, 4}, {1, 0}, BlockedPaddingZeroFill{{8, 4}}});
  EXPECT_EQ(dump(j), R"({"blocked":{"axis_order":[1,0],"block":[4,4],"padding":{"zero_fill":[8,4]}}})");
  EXPECT_EQ(j, json::parse(
                   R"({"blocked":{"block":[4,4],"axis_order":[1,0],"padding":{"zero_fill":[8,4]}}})"));
  const json single = layout_to_json(BlockedLayout{{4}, {0}, BlockedPaddingZeroFill{{4}}});
  EXPECT_EQ(dump(single), R"({"blocked":{"axis_order":[0],"block":[4],"padding":{"zero_fill":[4]}}})");
}

// ---- tensors ---------------------------------------------------------------

TEST(TensorJsonTest, ResolvedTensorSpec) {
  auto t = ResolvedTensorSpec::create({4, 8}, ElementType::kF32, ContiguousLayout{});
  ASSERT_TRUE(t);
  EXPECT_EQ(dump(tensor_spec_to_json(*t)),
            R"({"dimensions":[4,8],"element_type":"f32","layout":"contiguous"})");
}

TEST(TensorJsonTest, HeaderExampleTensor) {
  auto t = ResolvedTensorSpec::create({4}, ElementType::kF32, {});
  ASSERT_TRUE(t);
  EXPECT_EQ(dump(tensor_spec_to_json(*t)),
            R"({"dimensions":[4],"element_type":"f32","layout":"contiguous"})");
}

TEST(TensorJsonTest, ScalarTensorHasEmptyDimensionArray) {
  auto t = ResolvedTensorSpec::create({}, ElementType::kBf16, ContiguousLayout{});
  ASSERT_TRUE(t);
  const json j = tensor_spec_to_json(*t);
  EXPECT_TRUE(j.at("dimensions").is_array());
  EXPECT_EQ(dump(j), R"({"dimensions":[],"element_type":"bf16","layout":"contiguous"})");
}

TEST(TensorJsonTest, ResolvedTensorSpecWithBlockedLayout) {
  auto t = ResolvedTensorSpec::create({3, 5}, ElementType::kF16,
                                      BlockedLayout{{4, 4}, {1, 0}, BlockedPaddingZeroFill{{8, 4}}});
  ASSERT_TRUE(t) << t.error().to_string();
  EXPECT_EQ(dump(tensor_spec_to_json(*t)),
            R"({"dimensions":[3,5],"element_type":"f16","layout":{"blocked":{"axis_order":[1,0],"block":[4,4],"padding":{"zero_fill":[8,4]}}}})");
}

TEST(TensorJsonTest, ProgramTensorSpecMatchesResolved) {
  ProgramTensorSpec spec{{2, 3}, ElementType::kU8, StridedLayout{{64, 4}}};
  EXPECT_EQ(dump(tensor_spec_to_json(spec)),
            R"({"dimensions":[2,3],"element_type":"u8","layout":{"strided":[64,4]}})");
  auto resolved = spec.resolve();
  ASSERT_TRUE(resolved);
  EXPECT_EQ(tensor_spec_to_json(spec), tensor_spec_to_json(*resolved));
}

TEST(TensorJsonTest, ElementTypeUsesWireName) {
  for (ElementType type : kAllElementTypes) {
    ProgramTensorSpec spec{{1}, type, ContiguousLayout{}};
    EXPECT_EQ(tensor_spec_to_json(spec).at("element_type"), std::string(element_type_name(type)));
  }
}

// ---- contract pieces -------------------------------------------------------

TEST(TensorJsonTest, DimensionConstraints) {
  EXPECT_EQ(dump(dimension_constraint_to_json(DimensionExact{4})), "4");
  EXPECT_EQ(dump(dimension_constraint_to_json(DimensionSymbol{"tokens"})), R"("tokens")");
  EXPECT_EQ(dump(dimension_constraint_to_json(DimensionRange{1, 8})), R"({"max":8,"min":1})");
  EXPECT_TRUE(dimension_constraint_to_json(DimensionExact{4}).is_number_unsigned());
}

TEST(TensorJsonTest, LayoutConstraints) {
  EXPECT_EQ(dump(layout_constraint_to_json(ContiguousLayoutConstraint{})), R"("contiguous")");
  EXPECT_EQ(dump(layout_constraint_to_json(
                StridedLayoutConstraint{{StrideExactBytes{16}, StrideSymbol{"s"}}})),
            R"({"strided":[16,"s"]})");
  EXPECT_EQ(dump(layout_constraint_to_json(StridedLayoutConstraint{{StrideExactBytes{16}}})),
            R"({"strided":[16]})");
  EXPECT_EQ(dump(layout_constraint_to_json(StridedLayoutConstraint{{StrideSymbol{"s"}}})),
            R"({"strided":["s"]})");
  EXPECT_EQ(dump(layout_constraint_to_json(StridedLayoutConstraint{})), R"({"strided":[]})");
  EXPECT_EQ(dump(layout_constraint_to_json(BlockedLayoutConstraint{{4}, {0}})),
            R"({"blocked":{"axis_order":[0],"block":[4]}})");
  EXPECT_EQ(dump(layout_constraint_to_json(BlockedLayoutConstraint{{4, 2}, {1, 0}})),
            R"({"blocked":{"axis_order":[1,0],"block":[4,2]}})");
}

TEST(TensorJsonTest, AliasPolicies) {
  EXPECT_EQ(dump(alias_policy_to_json(NoAlias{})), R"("no_alias")");
  EXPECT_EQ(dump(alias_policy_to_json(MayAlias{0})), R"({"may_alias":0})");
  EXPECT_EQ(dump(alias_policy_to_json(MustAlias{0})), R"({"must_alias":0})");
  EXPECT_EQ(dump(alias_policy_to_json(MustAlias{3})), R"({"must_alias":3})");
}

// ---- contracts -------------------------------------------------------------

TEST(TensorJsonTest, FullContract) {
  const TensorContract c =
      contract({DimensionSymbol{"tokens"}, DimensionExact{64}, DimensionRange{1, 8}},
               {ElementType::kF32, ElementType::kF16},
               {BlockedLayoutConstraint{{4, 4, 4}, {2, 1, 0}},
                StridedLayoutConstraint{{StrideSymbol{"s"}, StrideExactBytes{16}, StrideExactBytes{4}}},
                ContiguousLayoutConstraint{}},
               TensorAccess::kRead, NoAlias{});
  EXPECT_EQ(
      dump(tensor_contract_to_json(c)),
      R"({"access":"read","alias":"no_alias","dimensions":["tokens",64,{"max":8,"min":1}],)"
      R"("element_types":["f16","f32"],"layouts":["contiguous",{"strided":["s",16,4]},)"
      R"({"blocked":{"axis_order":[2,1,0],"block":[4,4,4]}}]})");
}

TEST(TensorJsonTest, ContractAccessAndAliasVariants) {
  const TensorContract write =
      contract({DimensionExact{4}}, {ElementType::kU8}, {ContiguousLayoutConstraint{}},
               TensorAccess::kWrite, MustAlias{1});
  EXPECT_EQ(dump(tensor_contract_to_json(write)),
            R"({"access":"write","alias":{"must_alias":1},"dimensions":[4],)"
            R"("element_types":["u8"],"layouts":["contiguous"]})");
  const TensorContract read_write =
      contract({DimensionExact{4}}, {ElementType::kU8}, {ContiguousLayoutConstraint{}},
               TensorAccess::kReadWrite, MayAlias{0});
  const json j = tensor_contract_to_json(read_write);
  EXPECT_EQ(j.at("access"), "read_write");
  EXPECT_EQ(dump(j.at("alias")), R"({"may_alias":0})");
}

TEST(TensorJsonTest, ContractElementTypesFollowDeclaredOrder) {
  const TensorContract c = contract({}, {ElementType::kF32, ElementType::kI8, ElementType::kU32,
                                         ElementType::kBool},
                                    {ContiguousLayoutConstraint{}}, TensorAccess::kRead, NoAlias{});
  EXPECT_EQ(dump(tensor_contract_to_json(c).at("element_types")), R"(["bool","u32","i8","f32"])");
}

TEST(TensorJsonTest, RankZeroContractHasEmptyDimensionArray) {
  const TensorContract c =
      contract({}, {ElementType::kF32}, {ContiguousLayoutConstraint{}}, TensorAccess::kRead,
               NoAlias{});
  const json j = tensor_contract_to_json(c);
  EXPECT_TRUE(j.at("dimensions").is_array());
  EXPECT_EQ(dump(j.at("dimensions")), "[]");
}

}  // namespace tensor_json_test
}  // namespace ferrite
