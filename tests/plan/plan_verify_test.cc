// verify_plan_json: wire round trip, schema first, hash, and semantic rebuild
// against every forged scalar (spec §8.7, §12.5 case 27).
#include "ferrite/plan/plan_verify.h"

#include <functional>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plan/plan_test_support.h"

namespace ferrite {
namespace plan_verify_test {

using ::testing::HasSubstr;
using nlohmann::json;
using plan_testing::PlanHarness;

std::string rehash(json plan) {
  plan["plan_hash"] = plan_payload_hash(plan["payload"]);
  return plan.dump();
}

// Calls `visit` with a pointer to every scalar leaf under `node`.
void for_each_leaf(const json& node, const json::json_pointer& at,
                   const std::function<void(const json::json_pointer&)>& visit) {
  if (node.is_object()) {
    for (auto it = node.begin(); it != node.end(); ++it) for_each_leaf(it.value(), at / it.key(), visit);
  } else if (node.is_array()) {
    for (size_t i = 0; i < node.size(); ++i) for_each_leaf(node[i], at / i, visit);
  } else {
    visit(at);
  }
}

json forged(const json& leaf) {
  if (leaf.is_string()) return leaf.get<std::string>() + "x";
  if (leaf.is_boolean()) return !leaf.get<bool>();
  if (leaf.is_number_unsigned()) return leaf.get<uint64_t>() + 1;
  if (leaf.is_number_integer()) return leaf.get<int64_t>() + 1;
  if (leaf.is_number_float()) return leaf.get<double>() + 1.0;
  return "forged";  // null
}

TEST(PlanWireTest, RoundTripVerifies) {
  PlanHarness h;
  auto compiled = h.compile();
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  auto ok = h.verify(compiled->plan().to_json().dump());
  EXPECT_TRUE(ok) << ok.error().to_string();
}

TEST(PlanWireTest, SchemaIsCheckedBeforeAnythingElse) {
  PlanHarness h;
  json plan = h.compile()->plan().to_json();
  plan["payload"]["schema"] = "ferrite.plan()/0";
  plan["payload"]["nodes"] = "garbage";  // never looked at
  auto r = h.verify(plan.dump());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kUnsupportedPlanSchema);
}

TEST(PlanWireTest, StaleHashIsAHashMismatch) {
  PlanHarness h;
  json plan = h.compile()->plan().to_json();
  plan["payload"]["maximum_scheduled_tokens"] = 1;
  auto r = h.verify(plan.dump());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kPlanHashMismatch);
}

TEST(PlanWireTest, OversizedAndMalformedTextIsRejected) {
  PlanHarness h;
  EXPECT_EQ(h.verify("{").error().code(), ErrorCode::kSerialization);
  EXPECT_EQ(h.verify(std::string(kMaxPlanFileBytes + 1, ' ')).error().code(),
            ErrorCode::kSerialization);
}

TEST(PlanVerifyTest, RebuildNamesTheFirstDifferingPath) {
  PlanHarness h;
  json plan = h.compile()->plan().to_json();
  plan["payload"]["nodes"][0]["provider_id"] = "provider.operation.forged";
  auto r = h.verify(rehash(plan));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidExecutionPlan);
  EXPECT_THAT(r.error().message(), HasSubstr("$.payload.nodes[0].provider_id"));
}

TEST(PlanVerifyTest, EverySelfRehashedScalarChangeIsRejected) {
  PlanHarness h;
  const json plan = h.compile()->plan().to_json();
  size_t leaves = 0;
  for_each_leaf(plan["payload"], json::json_pointer("/payload"), [&](const json::json_pointer& at) {
    ++leaves;
    json copy = plan;
    copy[at] = forged(copy[at]);
    auto r = h.verify(rehash(copy));
    EXPECT_FALSE(r) << "accepted a forged " << at.to_string();
  });
  EXPECT_GT(leaves, 50u);
}

}  // namespace plan_verify_test
}  // namespace ferrite
