// ExecutionWeightPlan::component_positions: the execution schema's
// physical_component_refs, found once per tensor when the plan is made.
#include "ferrite/compiler/weight_materializer.h"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "support/fixtures.h"

namespace ferrite {
namespace execution_weight_plan_test {

using testing::unwrap;

std::vector<uint32_t> positions_of(const WeightSchema& schema,
                                   const std::vector<const WeightComponentSpec*>& refs) {
  std::vector<uint32_t> out;
  for (const WeightComponentSpec* component : refs) {
    out.push_back(static_cast<uint32_t>(component - schema.components.data()));
  }
  return out;
}

TEST(ExecutionWeightPlanTest, ComponentPositionsAreThePhysicalComponentRefsOfEveryTensor) {
  const PreparedModelFamily family = testing::synthetic_family();
  const ExecutionWeightPlan plan = unwrap(WeightMaterializerRegistry::identity_only().select(
      family, WeightMaterializerSelection{}));
  const WeightSchema& schema = plan.schema();
  ASSERT_FALSE(schema.tensors.empty());
  for (const WeightTensorSpec& tensor : schema.tensors) {
    const std::vector<uint32_t>* positions = plan.component_positions(tensor.id);
    ASSERT_NE(positions, nullptr) << tensor.id.str();
    EXPECT_EQ(*positions, positions_of(schema, unwrap(schema.physical_component_refs(tensor.id))))
        << tensor.id.str();
  }
  // No tensor, no positions (the schema's own call names the error).
  EXPECT_EQ(plan.component_positions(WeightId::literal("weight.absent")), nullptr);
  EXPECT_FALSE(schema.physical_component_refs(WeightId::literal("weight.absent")));
}

TEST(ExecutionWeightPlanTest, ACopyAnswersForItsOwnSchema) {
  const PreparedModelFamily family = testing::synthetic_family();
  const ExecutionWeightPlan plan = unwrap(WeightMaterializerRegistry::identity_only().select(
      family, WeightMaterializerSelection{}));
  const ExecutionWeightPlan copy = plan;  // NOLINT(performance-unnecessary-copy-initialization)
  ASSERT_NE(&copy.schema(), &plan.schema());
  for (const WeightTensorSpec& tensor : copy.schema().tensors) {
    const std::vector<uint32_t>* positions = copy.component_positions(tensor.id);
    ASSERT_NE(positions, nullptr);
    // Positions index the copy's own components, the ones its refs point at.
    EXPECT_EQ(*positions, positions_of(copy.schema(),
                                       unwrap(copy.schema().physical_component_refs(tensor.id))));
  }
}

}  // namespace execution_weight_plan_test
}  // namespace ferrite
