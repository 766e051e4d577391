#include "ferrite/catalog/workspace_requirement.h"

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ferrite {
namespace workspace_requirement_test {

using ::testing::HasSubstr;

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

ProviderWorkspaceRequirement workspace(ProviderWorkspaceSizeFormula formula,
                                       uint64_t alignment = 1,
                                       ProviderWorkspaceScope scope =
                                           ProviderWorkspaceScope::kInvocation) {
  return ProviderWorkspaceRequirement{formula, alignment, scope,
                                      DynamicStorageRequirement::contiguous()};
}

template <class T>
void expect_plan_error(const Result<T>& result, std::initializer_list<std::string_view> needles) {
  ASSERT_FALSE(result.has_value()) << "expected an error containing " << *needles.begin();
  EXPECT_EQ(result.error().code(), ErrorCode::kInvalidExecutionPlan) << result.error().to_string();
  for (std::string_view needle : needles) {
    EXPECT_THAT(result.error().message(), HasSubstr(std::string(needle)));
  }
}

TEST(WorkspaceRequirementTest, ScopeWireNames) {
  const std::vector<std::pair<ProviderWorkspaceScope, std::string_view>> names = {
      {ProviderWorkspaceScope::kPlan, "plan"},
      {ProviderWorkspaceScope::kRequest, "request"},
      {ProviderWorkspaceScope::kSequence, "sequence"},
      {ProviderWorkspaceScope::kStep, "step"},
      {ProviderWorkspaceScope::kInvocation, "invocation"}};
  for (const auto& [scope, name] : names) {
    EXPECT_EQ(provider_workspace_scope_name(scope), name);
    EXPECT_EQ(parse_provider_workspace_scope(name).value(), scope);
  }
  auto unknown = parse_provider_workspace_scope("forever");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(unknown.error().message(), HasSubstr("`forever`"));
}

TEST(WorkspaceRequirementTest, AcceptsEveryFormulaKind) {
  for (const ProviderWorkspaceSizeFormula& formula :
       std::vector<ProviderWorkspaceSizeFormula>{WorkspaceFixed{8}, WorkspaceActualSequences{8},
                                                 WorkspaceTokens{8}, WorkspaceAffine{0, 0, 8},
                                                 WorkspacePages{8, 4}}) {
    auto valid = workspace(formula).validate();
    EXPECT_TRUE(valid) << workspace_formula_kind(formula) << ": " << valid.error().to_string();
  }
}

TEST(WorkspaceRequirementTest, FixedRequiresBytes) {
  expect_plan_error(workspace(WorkspaceFixed{0}).validate(), {"`fixed`", "bytes > 0"});
}

TEST(WorkspaceRequirementTest, ActualSequencesRequiresRate) {
  expect_plan_error(workspace(WorkspaceActualSequences{0}).validate(),
                    {"`actual_sequences`", "bytes_per_sequence > 0"});
}

TEST(WorkspaceRequirementTest, TokensRequiresRate) {
  expect_plan_error(workspace(WorkspaceTokens{0}).validate(), {"`tokens`", "bytes_per_token > 0"});
}

TEST(WorkspaceRequirementTest, AffineRequiresARate) {
  expect_plan_error(workspace(WorkspaceAffine{64, 0, 0}).validate(),
                    {"`affine`", "per_sequence > 0 or per_token > 0"});
}

TEST(WorkspaceRequirementTest, AffineRejectsOverflowAtOneSequenceOneToken) {
  expect_plan_error(workspace(WorkspaceAffine{kMax, 1, 0}).validate(),
                    {"`affine`", "overflows u64"});
}

TEST(WorkspaceRequirementTest, PagesRequirePageBytes) {
  expect_plan_error(workspace(WorkspacePages{0, 4}).validate(), {"`pages`", "bytes_per_page > 0"});
}

TEST(WorkspaceRequirementTest, PagesRequireMaximumPages) {
  expect_plan_error(workspace(WorkspacePages{64, 0}).validate(), {"`pages`", "maximum_pages > 0"});
}

TEST(WorkspaceRequirementTest, PagesRejectOverflowingBound) {
  expect_plan_error(workspace(WorkspacePages{kMax / 2, 3}).validate(),
                    {"`pages`", "overflows u64"});
}

TEST(WorkspaceRequirementTest, AlignmentMustBePowerOfTwo) {
  expect_plan_error(workspace(WorkspaceFixed{8}, 0).validate(), {"alignment 0"});
  expect_plan_error(workspace(WorkspaceFixed{8}, 48).validate(),
                    {"invocation-scoped", "alignment 48", "power of two"});
}

TEST(WorkspaceRequirementTest, PlanScopeRequiresFixed) {
  EXPECT_TRUE(workspace(WorkspaceFixed{8}, 1, ProviderWorkspaceScope::kPlan).validate());
  expect_plan_error(workspace(WorkspaceTokens{8}, 1, ProviderWorkspaceScope::kPlan).validate(),
                    {"plan-scoped", "`fixed`", "`tokens`"});
}

TEST(WorkspaceRequirementTest, SequenceScopeForbidsPerSequenceTerms) {
  const auto sequence = ProviderWorkspaceScope::kSequence;
  EXPECT_TRUE(workspace(WorkspaceTokens{8}, 1, sequence).validate());
  EXPECT_TRUE(workspace(WorkspaceAffine{8, 0, 8}, 1, sequence).validate());
  expect_plan_error(workspace(WorkspaceActualSequences{8}, 1, sequence).validate(),
                    {"sequence-scoped", "`actual_sequences`"});
  expect_plan_error(workspace(WorkspaceAffine{0, 8, 8}, 1, sequence).validate(),
                    {"sequence-scoped", "`affine`"});
}

TEST(WorkspaceRequirementTest, StorageMustAcceptAProfile) {
  ProviderWorkspaceRequirement empty = workspace(WorkspaceFixed{8});
  empty.storage.accepted_profiles.clear();
  expect_plan_error(empty.validate(), {"accepts no dynamic storage profile"});
}

TEST(WorkspaceRequirementTest, MinimumBytesMustAlign) {
  expect_plan_error(workspace(WorkspaceFixed{kMax - 2}, 8).validate(), {"cannot be aligned"});
}

TEST(WorkspaceRequirementTest, BytesForEvaluatesAndAlignsUp) {
  EXPECT_EQ(workspace(WorkspaceFixed{100}, 64).bytes_for(7, 9).value(), 128u);
  EXPECT_EQ(workspace(WorkspaceActualSequences{10}, 16).bytes_for(3, 99).value(), 32u);
  EXPECT_EQ(workspace(WorkspaceTokens{256}, 64).bytes_for(4, 100).value(), 25600u);
  EXPECT_EQ(workspace(WorkspaceAffine{5, 10, 1}, 1).bytes_for(2, 3).value(), 28u);
  // Pages reserve the provider bound regardless of sequences and tokens.
  EXPECT_EQ(workspace(WorkspacePages{4096, 8}).bytes_for(1, 1).value(), 32768u);
  EXPECT_EQ(workspace(WorkspacePages{4096, 8}).bytes_for_shape(9, 9, 3).value(), 12288u);
}

TEST(WorkspaceRequirementTest, MinimumBytesIsOneSequenceOneTokenOnePage) {
  EXPECT_EQ(workspace(WorkspaceFixed{100}, 64).minimum_bytes().value(), 128u);
  EXPECT_EQ(workspace(WorkspaceTokens{3}, 4).minimum_bytes().value(), 4u);
  EXPECT_EQ(workspace(WorkspaceAffine{5, 10, 1}, 1).minimum_bytes().value(), 16u);
  EXPECT_EQ(workspace(WorkspacePages{4096, 8}).minimum_bytes().value(), 4096u);
  EXPECT_EQ(workspace(WorkspaceTokens{3}, 4).minimum_bytes().value(),
            workspace(WorkspaceTokens{3}, 4).bytes_for(1, 1).value());
}

TEST(WorkspaceRequirementTest, BytesForIsChecked) {
  expect_plan_error(workspace(WorkspaceTokens{kMax / 2}).bytes_for(1, 3), {"`tokens`", "overflows"});
  expect_plan_error(workspace(WorkspaceAffine{kMax - 4, 1, 1}).bytes_for(3, 3),
                    {"`affine`", "overflows"});
  expect_plan_error(workspace(WorkspaceTokens{8}).bytes_for(1, 0), {"evaluates to 0 bytes"});
  expect_plan_error(workspace(WorkspacePages{64, 4}).bytes_for_shape(1, 1, 5),
                    {"5 pages", "bound is 4 pages"});
  expect_plan_error(workspace(WorkspaceFixed{0}).bytes_for(1, 1), {"bytes > 0"});
}

TEST(WorkspaceRequirementTest, Json) {
  ProviderWorkspaceRequirement scratch = workspace(WorkspaceTokens{256}, 64);
  scratch.storage.accepted_profiles.insert(
      DynamicStorageProfile::parse("fixed_block:4096/paged:4096").value());
  EXPECT_EQ(scratch.to_json(), nlohmann::json::parse(R"({
      "formula":{"tokens":{"bytes_per_token":256}},"alignment_bytes":64,"scope":"invocation",
      "storage":["linear/contiguous","fixed_block:4096/paged:4096"]})"));
  EXPECT_EQ(workspace_formula_to_json(WorkspaceAffine{1, 2, 3}),
            nlohmann::json::parse(R"({"affine":{"fixed":1,"per_sequence":2,"per_token":3}})"));
  EXPECT_EQ(workspace_formula_to_json(WorkspacePages{4, 5}),
            nlohmann::json::parse(R"({"pages":{"bytes_per_page":4,"maximum_pages":5}})"));
  EXPECT_EQ(workspace_formula_to_json(WorkspaceFixed{4}),
            nlohmann::json::parse(R"({"fixed":{"bytes":4}})"));
  EXPECT_EQ(workspace_formula_to_json(WorkspaceActualSequences{4}),
            nlohmann::json::parse(R"({"actual_sequences":{"bytes_per_sequence":4}})"));
}

// --- Shape formulas: a node's own sizes, resolved by its estimator --------

WorkspaceShapeFactor dimension(ValueBindingRole role, uint32_t ordinal, uint32_t axis,
                               uint64_t divisor = 1) {
  return WorkspaceShapeFactor{.source = WorkspaceShapeSource::kDimension, .role = role,
                              .ordinal = ordinal, .axis = axis, .attribute = {},
                              .divisor = divisor};
}

WorkspaceShapeFactor token_rows(uint32_t ordinal) {
  return WorkspaceShapeFactor{.source = WorkspaceShapeSource::kTokenRows,
                              .role = ValueBindingRole::kInput, .ordinal = ordinal, .axis = 0,
                              .attribute = {}, .divisor = 1};
}

WorkspaceShapeFactor attribute(std::string id, uint64_t divisor = 1) {
  return WorkspaceShapeFactor{.source = WorkspaceShapeSource::kAttribute,
                              .role = ValueBindingRole::kInput, .ordinal = 0, .axis = 0,
                              .attribute = std::move(id), .divisor = divisor};
}

// An attention-like node: input 0 is [tokens, dim], input 1 a K cache of
// `rows` rows; attribute n_heads.
std::vector<WorkspaceShapeSlot> slots(uint64_t tokens, uint64_t dim, uint64_t rows) {
  return {WorkspaceShapeSlot{ValueBindingRole::kInput, 0, {tokens, dim}, 0},
          WorkspaceShapeSlot{ValueBindingRole::kInput, 1, {64}, rows},
          WorkspaceShapeSlot{ValueBindingRole::kOutput, 0, {tokens, dim}, 0}};
}

std::map<AttributeId, SemanticValue> heads(uint64_t n) {
  return {{AttributeId::literal("n_heads"), SemanticValue(SemanticUnsigned{n})}};
}

TEST(WorkspaceRequirementTest, ShapeEvaluatesDimensionsTokenRowsAndAttributes) {
  const NodeId node = NodeId::literal("node.attention");
  // 4 × n_heads × rows + 192 × tokens × ceil(dim / 64) + 16
  const WorkspaceShape shape{
      16,
      {WorkspaceShapeTerm{4, {attribute("n_heads"), token_rows(1)}},
       WorkspaceShapeTerm{192, {dimension(ValueBindingRole::kInput, 0, 0),
                                dimension(ValueBindingRole::kInput, 0, 1, 64)}}}};
  ASSERT_TRUE(validate_workspace_formula(shape));
  auto bytes = evaluate_workspace_shape(shape, node, heads(8), slots(128, 1376, 512));
  ASSERT_TRUE(bytes) << bytes.error().to_string();
  EXPECT_EQ(*bytes, 16u + 4u * 8 * 512 + 192u * 128 * 22);  // ceil(1376 / 64) = 22
  // A value that is not a token-scaled state has 0 token rows: the term vanishes.
  auto no_rows = evaluate_workspace_shape(shape, node, heads(8), slots(1, 64, 0));
  ASSERT_TRUE(no_rows);
  EXPECT_EQ(*no_rows, 16u + 192u * 1 * 1);
}

TEST(WorkspaceRequirementTest, ShapeNamesWhatTheNodeLacks) {
  const NodeId node = NodeId::literal("node.attention");
  auto single = [](WorkspaceShapeFactor factor) {
    return WorkspaceShape{0, {WorkspaceShapeTerm{1, {std::move(factor)}}}};
  };
  expect_plan_error(evaluate_workspace_shape(single(dimension(ValueBindingRole::kInput, 3, 0)),
                                             node, heads(8), slots(4, 64, 8)),
                    {"node.attention"});
  expect_plan_error(evaluate_workspace_shape(single(dimension(ValueBindingRole::kInput, 0, 2)),
                                             node, heads(8), slots(4, 64, 8)),
                    {"node.attention"});
  expect_plan_error(evaluate_workspace_shape(single(attribute("n_kv_heads")), node, heads(8),
                                             slots(4, 64, 8)),
                    {"node.attention", "n_kv_heads"});
  const std::map<AttributeId, SemanticValue> text{
      {AttributeId::literal("n_heads"), SemanticValue(SemanticText{"eight"})}};
  expect_plan_error(evaluate_workspace_shape(single(attribute("n_heads")), node, text,
                                             slots(4, 64, 8)),
                    {"node.attention", "n_heads"});
  // Products are checked: no wrap-around.
  const WorkspaceShape huge{0, {WorkspaceShapeTerm{kMax, {attribute("n_heads")}}}};
  expect_plan_error(evaluate_workspace_shape(huge, node, heads(2), slots(4, 64, 8)),
                    {"node.attention"});
}

TEST(WorkspaceRequirementTest, ShapeRulesAndNoEvaluationWithoutANode) {
  expect_plan_error(validate_workspace_formula(WorkspaceShape{8, {}}), {"`shape`", "one term"});
  expect_plan_error(validate_workspace_formula(
                        WorkspaceShape{0, {WorkspaceShapeTerm{0, {attribute("n_heads")}}}}),
                    {"`shape`"});
  expect_plan_error(validate_workspace_formula(
                        WorkspaceShape{0, {WorkspaceShapeTerm{4, {attribute("n_heads", 0)}}}}),
                    {"`shape`"});
  // Only an estimator resolves a Shape formula; the plan builder never sees one.
  const ProviderWorkspaceRequirement shaped =
      workspace(WorkspaceShape{0, {WorkspaceShapeTerm{4, {attribute("n_heads")}}}}, 64);
  ASSERT_TRUE(shaped.validate());
  EXPECT_FALSE(shaped.bytes_for(1, 1));
  EXPECT_EQ(shaped.to_json()["formula"],
            nlohmann::json::parse(R"({"shape":{"fixed":0,"terms":[{"bytes":4,"factors":[
                {"attribute":"n_heads","divisor":1}]}]}})"));
  EXPECT_EQ(workspace_shape_factor_to_json(dimension(ValueBindingRole::kOutput, 0, 1, 64)),
            nlohmann::json::parse(
                R"({"dimension":{"role":"output","ordinal":0,"axis":1},"divisor":64})"));
  EXPECT_EQ(workspace_shape_factor_to_json(token_rows(1)),
            nlohmann::json::parse(R"({"token_rows":{"role":"input","ordinal":1},"divisor":1})"));
}

}  // namespace workspace_requirement_test
}  // namespace ferrite
