// ExecutionPlan::build through ProgramPlanCompiler::compile on the reference
// fixture: identity, determinism, capacity, retention (spec §8, §9, §12.5 27).
#include "ferrite/plan/execution_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plan/plan_test_support.h"

namespace ferrite {
namespace execution_plan_test {

using ::testing::HasSubstr;
using plan_testing::PlanHarness;

TEST(ExecutionPlanTest, SyntheticFixtureCompilesIntoOneNodePlan) {
  PlanHarness h;
  auto compiled = h.compile();
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  const ExecutionPlan& plan = compiled->plan();
  EXPECT_TRUE(plan.plan_id().starts_with("plan/sha256/"));
  EXPECT_EQ(plan.plan_id(), "plan/sha256/" + plan.plan_hash());
  ASSERT_EQ(plan.nodes().size(), 1u);
  const PlanNode& node = plan.nodes()[0];
  EXPECT_EQ(node.id.str(), "node.main");
  EXPECT_EQ(node.provider_id.str(), "provider.operation.reference");
  EXPECT_EQ(node.selection_reason, PlanSelectionReason::kDeterministicCompatible);
  EXPECT_TRUE(node.dependencies.empty());
  ASSERT_EQ(node.state_effects.size(), 1u);
  EXPECT_EQ(node.state_effects[0].state_id.str(), "state.cache");
  EXPECT_TRUE(node.scratch_resource.has_value());
  EXPECT_TRUE(node.persistent_resource.has_value());
  EXPECT_FALSE(node.binding_resource.has_value());
  EXPECT_EQ(plan.to_json()["payload"]["schema"], std::string(kPlanSchema));
  EXPECT_EQ(plan_payload_hash(plan.to_json()["payload"]), plan.plan_hash());
  EXPECT_GT(plan.memory().static_bytes, 0u);
  EXPECT_LE(plan.memory().static_bytes + plan.memory().minimum_runnable_bytes,
            plan.memory().usable_capacity_bytes);
}

TEST(ExecutionPlanTest, TwoCompilesGiveIdenticalTextAndHash) {
  PlanHarness h;
  auto a = h.compile();
  auto b = h.compile();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->plan().canonical_text(), b->plan().canonical_text());
  EXPECT_EQ(a->plan().plan_hash(), b->plan().plan_hash());
  EXPECT_EQ(a->plan(), b->plan());
}

TEST(ExecutionPlanTest, TinyCapacityReportsTheMinimumRunnableBytes) {
  PlanHarness h;
  h.runtime_policy = plan_testing::policy(256);
  auto compiled = h.compile();
  ASSERT_FALSE(compiled);
  EXPECT_THAT(compiled.error().message(), HasSubstr("minimum runnable plan requires "));
  EXPECT_THAT(compiled.error().message(), HasSubstr("exceeding usable capacity 128"));
}

// Spec §6.1: a workspace formula is bound to the policy — the maximum active
// sequences and the node's scheduled tokens (the policy's ceiling, bounded by
// the extent of the node's token axis) — while the minimum runnable bytes
// count it at 1 sequence and 1 token.
TEST(ExecutionPlanTest, WorkspacesAreSizedForThePolicysSequencesAndTokens) {
  auto scratch_of = [](const ExecutionPlan& plan) -> const PlanResourceSummary* {
    for (const auto& r : plan.memory().resources) {
      if (r.usage == BufferUsage::kScratch) return &r;
    }
    return nullptr;
  };
  struct Case {
    bool token_work;          // the node's work scales with value.input's 4 tokens
    uint64_t policy_tokens;   // maximum_scheduled_tokens
    uint64_t expected_bytes;  // 8 + 16 × 3 sequences + 4 × tokens, aligned to 16
  };
  for (const Case& c : {Case{false, 4096, 64},  // fixed work: the largest token extent, 1
                        Case{true, 4096, 80},   // 4 tokens (the input's extent)
                        Case{true, 2, 64}}) {   // the policy's 2 tokens
    PlanHarness h;
    h.estimators = testing::unwrap(EstimatorRegistry::create({std::make_shared<plan_testing::CountingEstimator>(
        plan_testing::provider("provider.operation.reference", h.op),
        plan_testing::Behaviour::kAffineScratch)}));
    h.runtime_policy.maximum_scheduled_tokens = c.policy_tokens;
    if (c.token_work) {
      ProgramNode node = testing::synthetic_node();
      node.work = WorkTokens{testing::value("value.input"), 0};
      h.family = testing::unwrap(PreparedModelFamily::create(
          ModelFamilyId::literal("family.synthetic"), nlohmann::json{{"width", 4}},
          testing::dense_weight_schema(),
          testing::unwrap(ModelProgram::create(ModelFamilyId::literal("family.synthetic"),
                                      {testing::value("value.input")},
                                      {ProgramBlock{"block.main", {node}}},
                                      {testing::synthetic_state()}, {testing::synthetic_weight()},
                                      {testing::value("value.output")}))));
    }
    auto compiled = h.compile();
    ASSERT_TRUE(compiled) << compiled.error().to_string();
    const PlanResourceSummary* scratch = scratch_of(compiled->plan());
    ASSERT_NE(scratch, nullptr);
    EXPECT_EQ(scratch->kind, PlanResourceKind::kWorkspace);
    EXPECT_EQ(scratch->size_bytes, c.expected_bytes)
        << "token work " << c.token_work << ", policy tokens " << c.policy_tokens;
  }
}

TEST(ExecutionPlanTest, RetainsTheProgramOutput) {
  PlanHarness h;
  ASSERT_TRUE(h.options.retain_completion_value(testing::value("value.output")));
  auto compiled = h.compile();
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  const auto& kept = compiled->plan().retained_completion_values();
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].value_id.str(), "value.output");
  EXPECT_EQ(kept[0].producer_node_id.str(), "node.main");
  EXPECT_EQ(kept[0].output_ordinal, 0u);
  // Retention is part of the plan identity.
  PlanHarness plain;
  EXPECT_NE(plain.compile()->plan().plan_hash(), compiled->plan().plan_hash());
}

TEST(ExecutionPlanTest, RetentionOfANonOutputIsRejected) {
  PlanHarness h;
  h.options.retain_completion_value(testing::value("value.input"));
  auto compiled = h.compile();
  ASSERT_FALSE(compiled);
  EXPECT_THAT(compiled.error().message(), HasSubstr("semantic node output"));
}

}  // namespace execution_plan_test
}  // namespace ferrite
