// Spec §8.8: a plan binds only to the catalog it was compiled for.
#include "ferrite/plan/executable_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plan/plan_test_support.h"

namespace ferrite {
namespace executable_plan_test {

using ::testing::HasSubstr;

TEST(ExecutablePlanTest, BindsToItsOwnCatalogOnly) {
  plan_testing::PlanHarness h;
  auto compiled = h.compile();
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  auto bound = ExecutablePlan::create(compiled->plan(), h.catalog);
  ASSERT_TRUE(bound) << bound.error().to_string();
  EXPECT_EQ(bound->device().id.str(), "device.reference.0");
  EXPECT_EQ(bound->execution_plan(), compiled->plan());

  // Another device runtime: the catalog fingerprint and the runtime differ.
  DeviceDescriptor other = plan_testing::device();
  other.runtime_implementation_fingerprint = sha256_hex("another runtime");
  auto other_catalog = CapabilityCatalog::create(other, h.catalog.operations(),
                                                 h.catalog.providers().begin()->second);
  ASSERT_TRUE(other_catalog) << other_catalog.error().to_string();
  auto refused = ExecutablePlan::create(compiled->plan(), *other_catalog);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), ErrorCode::kInvalidExecutionPlan);
  EXPECT_THAT(refused.error().message(),
              HasSubstr("executable plan differs from its device capability catalog: "
                        "device_runtime_implementation_fingerprint"));
}

}  // namespace executable_plan_test
}  // namespace ferrite
