#include "ferrite/compiler/runtime_policy.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "ferrite/catalog/storage_profile.h"
#include "ferrite/core/fingerprint.h"
#include "format/format_test_util.h"

namespace ferrite {
namespace runtime_policy_test {

using format_test::FailsWith;

RuntimePolicy valid_policy() {
  return RuntimePolicy{PolicyId::literal("policy.default"),
                       {1, 0},
                       4096,
                       128,
                       3,
                       4096,
                       {DynamicStorageProfile::linear_contiguous()}};
}

TEST(FormatRuntimePolicyTest, ValidPolicyPasses) {
  FERRITE_ASSERT_OK(valid_policy().validate());
  EXPECT_EQ(valid_policy().plannable_bytes(), 4096u - 128u);
  RuntimePolicy zero_reserve = valid_policy();
  zero_reserve.memory_reserve_bytes = 0;
  FERRITE_ASSERT_OK(zero_reserve.validate());
}

TEST(FormatRuntimePolicyTest, ValidationRules) {
  struct Case {
    std::function<void(RuntimePolicy&)> edit;
    std::string field;
  };
  const std::vector<Case> cases = {
      {[](RuntimePolicy& p) { p.version = {0, 9}; }, "policy.policy_version"},
      {[](RuntimePolicy& p) { p.memory_capacity_bytes = 0; p.memory_reserve_bytes = 0; },
       "policy.memory.capacity_bytes"},
      {[](RuntimePolicy& p) { p.memory_reserve_bytes = p.memory_capacity_bytes; },
       "policy.memory.reserve_bytes"},
      {[](RuntimePolicy& p) { p.memory_reserve_bytes = p.memory_capacity_bytes + 1; },
       "policy.memory.reserve_bytes"},
      {[](RuntimePolicy& p) { p.maximum_active_sequences = 0; },
       "policy.memory.maximum_active_sequences"},
      {[](RuntimePolicy& p) { p.maximum_scheduled_tokens = 0; },
       "policy.admission.maximum_scheduled_tokens"},
      {[](RuntimePolicy& p) { p.storage_profile_order.clear(); },
       "policy.memory.storage_profile_order"},
      {[](RuntimePolicy& p) {
         p.storage_profile_order.push_back(DynamicStorageProfile::linear_contiguous());
       },
       "policy.memory.storage_profile_order"},
  };
  for (const auto& c : cases) {
    RuntimePolicy policy = valid_policy();
    c.edit(policy);
    auto result = policy.validate();
    EXPECT_TRUE(FailsWith(result, ErrorCode::kInvalidExecutionPlan, c.field)) << c.field;
    if (!result) EXPECT_EQ(result.error().fields().at("field"), c.field);
  }
}

TEST(FormatRuntimePolicyTest, JsonAndFingerprint) {
  const RuntimePolicy policy = valid_policy();
  const auto j = policy.to_json();
  EXPECT_EQ(j.dump(),
            R"({"admission":{"maximum_scheduled_tokens":4096},"memory":{"capacity_bytes":4096,)"
            R"("maximum_active_sequences":3,"reserve_bytes":128,"storage_profile_order":)"
            R"(["linear/contiguous"]},"policy_id":"policy.default","policy_version":"1.0"})");
  EXPECT_EQ(policy.fingerprint(), canonical_fingerprint(j));
  EXPECT_TRUE(is_canonical_sha256(policy.fingerprint()));
  // Preference order is part of the identity of a policy.
  RuntimePolicy a = policy;
  a.storage_profile_order = {DynamicStorageProfile::linear_contiguous(),
                             *DynamicStorageProfile::parse("fixed_block:4096/contiguous")};
  RuntimePolicy b = a;
  std::reverse(b.storage_profile_order.begin(), b.storage_profile_order.end());
  EXPECT_NE(a.fingerprint(), b.fingerprint());
  RuntimePolicy c = policy;
  c.maximum_scheduled_tokens = 4095;
  EXPECT_NE(c.fingerprint(), policy.fingerprint());
}

TEST(FormatStorageProfileTest, ValidCombinations) {
  auto linear = DynamicStorageProfile::create(LinearArena{}, ContiguousView{});
  FERRITE_ASSERT_OK(linear);
  EXPECT_EQ(*linear, DynamicStorageProfile::linear_contiguous());
  EXPECT_EQ(linear->to_string(), "linear/contiguous");
  auto fixed = DynamicStorageProfile::create(FixedBlockArena{65536}, ContiguousView{});
  FERRITE_ASSERT_OK(fixed);
  EXPECT_EQ(fixed->to_string(), "fixed_block:65536/contiguous");
  auto paged = DynamicStorageProfile::create(FixedBlockArena{65536}, PagedRegionsView{65536});
  FERRITE_ASSERT_OK(paged);
  EXPECT_EQ(paged->to_string(), "fixed_block:65536/paged:65536");
  EXPECT_TRUE(paged->is_paged());
  FERRITE_ASSERT_OK(DynamicStorageProfile::create(FixedBlockArena{1}, PagedRegionsView{1}));
  FERRITE_ASSERT_OK(
      DynamicStorageProfile::create(FixedBlockArena{uint64_t{1} << 63}, ContiguousView{}));
}

TEST(FormatStorageProfileTest, InvalidCombinations) {
  EXPECT_TRUE(FailsWith(DynamicStorageProfile::create(LinearArena{}, PagedRegionsView{4096}),
                        ErrorCode::kInvalidArgument, "requires a fixed-block arena"));
  EXPECT_TRUE(FailsWith(DynamicStorageProfile::create(FixedBlockArena{0}, ContiguousView{}),
                        ErrorCode::kInvalidArgument, "not a non-zero power of two"));
  EXPECT_TRUE(FailsWith(DynamicStorageProfile::create(FixedBlockArena{3000}, ContiguousView{}),
                        ErrorCode::kInvalidArgument, "not a non-zero power of two"));
  EXPECT_TRUE(FailsWith(DynamicStorageProfile::create(FixedBlockArena{4096}, PagedRegionsView{8192}),
                        ErrorCode::kInvalidArgument, "differs from"));
  EXPECT_TRUE(FailsWith(DynamicStorageProfile::create(FixedBlockArena{48}, PagedRegionsView{48}),
                        ErrorCode::kInvalidArgument, "power of two"));
}

TEST(FormatStorageProfileTest, TextParsesAndRoundTrips) {
  for (const char* text : {"linear/contiguous", "fixed_block:65536/contiguous",
                           "fixed_block:65536/paged:65536", "fixed_block:1/paged:1",
                           "fixed_block:9223372036854775808/contiguous"}) {
    auto profile = DynamicStorageProfile::parse(text);
    FERRITE_ASSERT_OK(profile);
    EXPECT_EQ(profile->to_string(), text);
  }
  for (const char* text :
       {"", "linear", "linear/", "/contiguous", "linear/paged:4096", "fixed_block:/contiguous",
        "fixed_block:0/contiguous", "fixed_block:065536/contiguous", "fixed_block:+64/contiguous",
        "fixed_block:64/paged:128", "fixed_block:18446744073709551616/contiguous",
        "fixed_block:64/paged", "Linear/contiguous", "linear/contiguous/", "linear /contiguous",
        "fixed_block:64/paged:64x"}) {
    auto profile = DynamicStorageProfile::parse(text);
    EXPECT_TRUE(FailsWith(profile, ErrorCode::kInvalidArgument,
                          "storage profile `" + std::string(text) + "`"))
        << text;
  }
}

TEST(FormatStorageProfileTest, TotalOrder) {
  std::vector<DynamicStorageProfile> profiles = {
      *DynamicStorageProfile::parse("fixed_block:65536/paged:65536"),
      *DynamicStorageProfile::parse("fixed_block:4096/contiguous"),
      *DynamicStorageProfile::parse("fixed_block:65536/contiguous"),
      DynamicStorageProfile::linear_contiguous(),
      *DynamicStorageProfile::parse("fixed_block:4096/paged:4096"),
  };
  std::sort(profiles.begin(), profiles.end());
  std::vector<std::string> texts;
  for (const auto& p : profiles) texts.push_back(p.to_string());
  EXPECT_EQ(texts, (std::vector<std::string>{"linear/contiguous", "fixed_block:4096/contiguous",
                                             "fixed_block:4096/paged:4096",
                                             "fixed_block:65536/contiguous",
                                             "fixed_block:65536/paged:65536"}));
  for (size_t i = 0; i < profiles.size(); ++i) {
    for (size_t j = 0; j < profiles.size(); ++j) {
      EXPECT_EQ(profiles[i] < profiles[j], i < j);
      EXPECT_EQ(profiles[i] == profiles[j], i == j);
    }
  }
}

// A long profile order (past the pairwise comparison's limit) is checked
// through a set: distinct profiles pass, a repeat anywhere fails.
TEST(FormatRuntimePolicyTest, LongProfileOrdersAreCheckedForRepeatsToo) {
  RuntimePolicy policy = valid_policy();
  for (int shift = 0; shift < 24; ++shift) {
    const uint64_t bytes = uint64_t{4096} << shift;
    auto profile = DynamicStorageProfile::parse(
        "fixed_block:" + std::to_string(bytes) + "/paged:" + std::to_string(bytes));
    ASSERT_TRUE(profile) << profile.error().to_string();
    policy.storage_profile_order.push_back(*profile);
  }
  FERRITE_ASSERT_OK(policy.validate());
  for (size_t repeat : {size_t{0}, size_t{7}, policy.storage_profile_order.size() - 1}) {
    RuntimePolicy repeated = policy;
    repeated.storage_profile_order.push_back(policy.storage_profile_order[repeat]);
    auto result = repeated.validate();
    EXPECT_TRUE(FailsWith(result, ErrorCode::kInvalidExecutionPlan,
                          "policy.memory.storage_profile_order"))
        << repeat;
  }
}

}  // namespace runtime_policy_test
}  // namespace ferrite
