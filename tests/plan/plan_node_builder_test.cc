// State hazards (spec §8.4 step 9, §12.5 case 29) at the tracker level.
#include "ferrite/plan/plan_node_builder.h"

#include <gtest/gtest.h>

#include "support/fixtures.h"

namespace ferrite {
namespace plan_node_builder_test {

using testing::unwrap;
using testing::value;

// Each value's first producer and last consumer by its rank: in → a → b → c,
// `a` read again by the last node, weight w read by node 1; inputs and
// weights have no producer, the program's output no consumer.
TEST(PlanBuildValueNodesTest, FirstProducerAndLastConsumerByRank) {
  const ModelProgram program = testing::three_node_chain();
  const ValueNodes nodes = unwrap(value_nodes(program));
  ASSERT_EQ(nodes.producer.size(), program.values_in_id_order().size());
  ASSERT_EQ(nodes.last_consumer.size(), program.values_in_id_order().size());
  const auto rank = [&](const char* id) { return program.find_value(value(id))->rank; };
  constexpr uint32_t kNone = ValueNodes::kNone;
  EXPECT_EQ(nodes.producer[rank("value.in")], kNone);
  EXPECT_EQ(nodes.producer[rank("value.w")], kNone);
  EXPECT_EQ(nodes.producer[rank("value.a")], 0u);
  EXPECT_EQ(nodes.producer[rank("value.b")], 1u);
  EXPECT_EQ(nodes.producer[rank("value.c")], 2u);
  EXPECT_EQ(nodes.last_consumer[rank("value.in")], 0u);
  EXPECT_EQ(nodes.last_consumer[rank("value.a")], 2u);
  EXPECT_EQ(nodes.last_consumer[rank("value.w")], 1u);
  EXPECT_EQ(nodes.last_consumer[rank("value.b")], 2u);
  EXPECT_EQ(nodes.last_consumer[rank("value.c")], kNone);
}

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
