// State hazards (spec §8.4 step 9, §12.5 case 29) at the tracker level.
#include "ferrite/plan/plan_node_builder.h"

#include <gtest/gtest.h>

namespace ferrite {
namespace plan_node_builder_test {

TEST(PlanBuildHazardTest, ReadReadWriteReadWriteReadChain) {
  StateHazards hazards;
  const StateId state = StateId::literal("state.cache");
  EXPECT_EQ(hazards.record(state, 0, TensorAccess::kRead), (std::set<size_t>{}));
  EXPECT_EQ(hazards.record(state, 1, TensorAccess::kReadWrite), (std::set<size_t>{0}));
  EXPECT_EQ(hazards.record(state, 2, TensorAccess::kReadWrite), (std::set<size_t>{1}));
  EXPECT_EQ(hazards.record(state, 3, TensorAccess::kRead), (std::set<size_t>{2}));
}

TEST(PlanBuildHazardTest, ReadersStayIndependentAndAWriterWaitsForAll) {
  StateHazards hazards;
  const StateId state = StateId::literal("state.cache");
  EXPECT_TRUE(hazards.record(state, 0, TensorAccess::kRead).empty());
  EXPECT_TRUE(hazards.record(state, 1, TensorAccess::kRead).empty());
  EXPECT_EQ(hazards.record(state, 2, TensorAccess::kWrite), (std::set<size_t>{0, 1}));
  EXPECT_EQ(hazards.record(state, 3, TensorAccess::kWrite), (std::set<size_t>{2}));
  EXPECT_TRUE(hazards.record(StateId::literal("state.other"), 4, TensorAccess::kWrite).empty());
}

TEST(PlanBuildNodeTest, PlanNodeJsonNamesSelectionAndAliases) {
  PlanExactAlias alias{ProgramValueId::literal("value.out"), 0, ProgramValueId::literal("value.in"),
                       1, PlanAliasKind::kMust};
  EXPECT_EQ(alias.to_json()["kind"], "must");
  EXPECT_EQ(plan_selection_reason_name(PlanSelectionReason::kFallbackFromPreferred),
            "fallback_from_preferred");
}

}  // namespace plan_node_builder_test
}  // namespace ferrite
