// verify_plan_json: wire round trip, schema first, hash, and semantic rebuild
// against every forged scalar (spec §8.7, §12.5 case 27).
#include "ferrite/plan/plan_verify.h"

#include <functional>

#include <fmt/format.h>
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

TEST(PlanVerifyTest, AnySpellingOfTheCanonicalPlanVerifies) {
  PlanHarness h;
  const json plan = h.compile()->plan().to_json();
  for (const std::string& text : {plan.dump(2), "\n " + plan.dump() + "\n\n", plan.dump(0, '\t')}) {
    auto r = h.verify(text);
    EXPECT_TRUE(r) << r.error().to_string();
  }
}

// A plan whose document tree the parsed-size cap refuses is read row by row:
// its hash is checked, and a difference from the rebuild is named by the
// path at the first differing canonical byte.
TEST(PlanVerifyTest, PlansBeyondTheDocumentCapAreReadRowByRow) {
  PlanHarness h;
  auto compiled = h.compile();
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  json plan = compiled->plan().to_json();
  json& nodes = plan["payload"]["nodes"];
  const size_t original = nodes.size();
  const json extra = nodes[0];
  while (nodes.size() < original + 24'000) nodes.push_back(extra);
  const std::string text = rehash(plan);
  plan = json();
  ASSERT_FALSE(parse_strict_json(text, kMaxPlanFileBytes)) << "the case must be over the cap";
  auto wire = read_plan_wire(text);
  ASSERT_TRUE(wire) << wire.error().to_string();
  const JsonCursor rows(wire->document()["payload"]["nodes"], "$.payload.nodes");
  EXPECT_EQ(*element_count(rows, &*wire), original + 24'000);
  auto same = compare_plan_wire(compiled->plan(), *wire, text);
  ASSERT_FALSE(same);
  EXPECT_EQ(same.error().code(), ErrorCode::kInvalidExecutionPlan);
  const std::string at = fmt::format("$.payload.nodes[{}]", original);
  EXPECT_THAT(same.error().message(), HasSubstr(at + " (canonical byte "));
  EXPECT_EQ(same.error().fields().at("json_path"), at);
  // Tampering is still caught before anything is compared.
  std::string tampered = text;
  const size_t provider = tampered.rfind("\"provider_id\":\"");
  ASSERT_NE(provider, std::string::npos);
  tampered[provider + 16] = 'X';
  auto stale = read_plan_wire(tampered);
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error().code(), ErrorCode::kPlanHashMismatch);
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
