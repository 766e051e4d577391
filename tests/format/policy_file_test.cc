#include "ferrite/format/policy_file.h"

#include <gtest/gtest.h>

#include "format/format_test_util.h"

namespace ferrite {
namespace policy_file_test {

using format_test::FailsAt;
using format_test::FailsWith;
using nlohmann::json;

json synthetic_json() {
  return json::parse(format_test::read_source_file("examples/synthetic.policy.json"));
}

Result<RuntimePolicy> read_edited(const std::function<void(json&)>& edit) {
  json doc = synthetic_json();
  edit(doc);
  return read_policy_file_text(doc.dump());
}

TEST(FormatPolicyFileTest, SyntheticExampleReads) {
  auto policy = read_policy_file(format_test::source_path("examples/synthetic.policy.json"));
  FERRITE_ASSERT_OK(policy);
  EXPECT_EQ(policy->id.str(), "policy.synthetic");
  EXPECT_EQ(policy->version, (ContractVersion{1, 0}));
  EXPECT_EQ(policy->memory_capacity_bytes, 4096u);
  EXPECT_EQ(policy->memory_reserve_bytes, 128u);
  EXPECT_EQ(policy->maximum_active_sequences, 3u);
  EXPECT_EQ(policy->maximum_scheduled_tokens, 4096u);
  EXPECT_EQ(policy->storage_profile_order,
            std::vector<DynamicStorageProfile>{DynamicStorageProfile::linear_contiguous()});
  EXPECT_EQ(policy_file_to_json(*policy), synthetic_json());
}

TEST(FormatPolicyFileTest, RoundTripsEveryProfileKind) {
  RuntimePolicy policy{PolicyId::literal("policy.default"),
                       {1, 2},
                       uint64_t{1} << 40,
                       uint64_t{1} << 20,
                       64,
                       8192,
                       {*DynamicStorageProfile::parse("fixed_block:65536/paged:65536"),
                        DynamicStorageProfile::linear_contiguous(),
                        *DynamicStorageProfile::parse("fixed_block:65536/contiguous")}};
  FERRITE_ASSERT_OK(policy.validate());
  auto read = read_policy_file_json(policy_file_to_json(policy));
  FERRITE_ASSERT_OK(read);
  EXPECT_EQ(*read, policy);
  EXPECT_EQ(read->fingerprint(), policy.fingerprint());
  auto body = read_runtime_policy(JsonCursor(policy.to_json()));
  FERRITE_ASSERT_OK(body);
  EXPECT_EQ(*body, policy);
  // The body alone has no envelope keys.
  json with_format = policy.to_json();
  with_format["format"] = "ferrite.policy";
  EXPECT_TRUE(FailsAt(read_runtime_policy(JsonCursor(with_format)), ErrorCode::kSerialization,
                      "$.format"));
}

TEST(FormatPolicyFileTest, ShapeErrorsNamePaths) {
  EXPECT_TRUE(FailsAt(read_edited([](json& j) { j["memory"]["storage_profile_order"][0] = "paged"; }),
                      ErrorCode::kSerialization, "$.memory.storage_profile_order[0]"));
  EXPECT_TRUE(FailsAt(read_edited([](json& j) {
                        j["memory"]["storage_profile_order"] = {"linear/contiguous",
                                                                "fixed_block:100/contiguous"};
                      }),
                      ErrorCode::kSerialization, "$.memory.storage_profile_order[1]"));
  EXPECT_TRUE(FailsAt(read_edited([](json& j) { j["memory"]["capacity_bytes"] = -1; }),
                      ErrorCode::kSerialization, "$.memory.capacity_bytes"));
  EXPECT_TRUE(FailsAt(read_edited([](json& j) { j["memory"].erase("reserve_bytes"); }),
                      ErrorCode::kSerialization, "$.memory.reserve_bytes"));
  EXPECT_TRUE(FailsAt(read_edited([](json& j) { j["admission"]["maximum_tokens"] = 1; }),
                      ErrorCode::kSerialization, "$.admission.maximum_tokens"));
  EXPECT_TRUE(FailsAt(read_edited([](json& j) { j["policy_id"] = "policy default"; }),
                      ErrorCode::kSerialization, "$.policy_id"));
  EXPECT_TRUE(FailsAt(read_edited([](json& j) { j["policy_version"] = 1; }),
                      ErrorCode::kSerialization, "$.policy_version"));
  EXPECT_TRUE(FailsAt(read_edited([](json& j) { j["format"] = "ferrite.program"; }),
                      ErrorCode::kSerialization, "$.format"));
  EXPECT_TRUE(FailsAt(read_policy_file_text(R"({"format":"ferrite.policy","format_version":1,"memory":{"capacity_bytes":0.5}})"),
                      ErrorCode::kSerialization, "$.memory.capacity_bytes"));
}

TEST(FormatPolicyFileTest, ValidationRejectionsPassThrough) {
  EXPECT_TRUE(FailsWith(read_edited([](json& j) { j["memory"]["reserve_bytes"] = 4096; }),
                        ErrorCode::kInvalidExecutionPlan, "policy.memory.reserve_bytes"));
  EXPECT_TRUE(FailsWith(read_edited([](json& j) { j["memory"]["storage_profile_order"] = json::array(); }),
                        ErrorCode::kInvalidExecutionPlan, "policy.memory.storage_profile_order"));
  EXPECT_TRUE(FailsWith(read_edited([](json& j) { j["policy_version"] = "0.3"; }),
                        ErrorCode::kInvalidExecutionPlan, "policy.policy_version"));
}

}  // namespace policy_file_test
}  // namespace ferrite
