#include "ferrite/catalog/provider_descriptor.h"

#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "ferrite/core/fingerprint.h"

namespace ferrite {
namespace provider_descriptor_test {

DynamicStorageProfile paged64() { return *DynamicStorageProfile::parse("fixed_block:64/paged:64"); }

OperationProviderDescriptor make_provider() {
  return OperationProviderDescriptor{
      .provider_id = ProviderId::literal("provider.main.simd"),
      .operation_id = OperationId::literal("operation.main"),
      .operation_fingerprint = sha256_hex("operation"),
      .provider_implementation_fingerprint = sha256_hex("provider"),
      .version = {1, 0},
      .device_id = DeviceId::literal("device.gpu.0"),
      .capabilities = {CapabilityId::literal("capability.compute")},
      .accepted_weight_formats = {WeightFormatId::literal("weight-format.dense")},
      .accepted_quantization_formats = {},
      .dynamic_storage_bindings = {{ValueBindingRole::kInput, 0,
                                    DynamicStorageRequirement::contiguous()},
                                   {ValueBindingRole::kOutput, 0,
                                    DynamicStorageRequirement{{paged64()}}}},
      .resource_estimator_id = "estimator.main",
      .resource_estimator_version = {1, 0},
      .resource_estimator_implementation_fingerprint = sha256_hex("estimator")};
}

void expect_provider_error(const Result<void>& result, std::string_view needle,
                           ErrorCode code = ErrorCode::kInvalidExecutionPlan) {
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code(), code);
  const std::string& message = result.error().message();
  EXPECT_NE(message.find("provider `provider.main.simd` of operation `operation.main`"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find(needle), std::string::npos) << message;
  EXPECT_EQ(result.error().fields().at("provider_id"), "provider.main.simd");
  EXPECT_EQ(result.error().fields().at("operation_id"), "operation.main");
}

TEST(ProviderDescriptorTest, ValidProviderValidates) {
  EXPECT_TRUE(make_provider().validate().has_value());
}

TEST(ProviderDescriptorTest, UnstableVersionIsRejected) {
  auto provider = make_provider();
  provider.version = {0, 4};
  expect_provider_error(provider.validate(), "unstable version 0.4");
}

TEST(ProviderDescriptorTest, EachFingerprintMustBeCanonical) {
  {
    auto provider = make_provider();
    provider.operation_fingerprint = "not-a-sha";
    expect_provider_error(provider.validate(), "operation fingerprint `not-a-sha`");
  }
  {
    auto provider = make_provider();
    provider.provider_implementation_fingerprint = sha256_hex("x").substr(1);
    expect_provider_error(provider.validate(), "provider implementation fingerprint");
  }
  {
    auto provider = make_provider();
    provider.resource_estimator_implementation_fingerprint = "";
    expect_provider_error(provider.validate(), "resource estimator implementation fingerprint");
  }
}

TEST(ProviderDescriptorTest, EstimatorIdMustBePortableIdentity) {
  for (const std::string& bad :
       {std::string(), std::string("estimator main"), std::string(161, 'e')}) {
    auto provider = make_provider();
    provider.resource_estimator_id = bad;
    expect_provider_error(provider.validate(), "resource estimator identity",
                          ErrorCode::kInvalidIdentity);
  }
  auto provider = make_provider();
  provider.resource_estimator_id = std::string(160, 'e');
  EXPECT_TRUE(provider.validate().has_value());
}

TEST(ProviderDescriptorTest, UnstableEstimatorVersionIsRejected) {
  auto provider = make_provider();
  provider.resource_estimator_version = {0, 1};
  expect_provider_error(provider.validate(), "resource estimator `estimator.main` with unstable");
}

TEST(ProviderDescriptorTest, StorageBindingsMustBeNonEmpty) {
  auto provider = make_provider();
  provider.dynamic_storage_bindings.clear();
  expect_provider_error(provider.validate(), "declares no dynamic storage bindings");
}

TEST(ProviderDescriptorTest, StorageRequirementMustAcceptAProfile) {
  auto provider = make_provider();
  provider.dynamic_storage_bindings[1].storage.accepted_profiles.clear();
  expect_provider_error(provider.validate(), "output[0] accepts no storage profile");
}

TEST(ProviderDescriptorTest, UnsortedBindingsAreRejectedUntilNormalized) {
  auto provider = make_provider();
  std::swap(provider.dynamic_storage_bindings[0], provider.dynamic_storage_bindings[1]);
  expect_provider_error(provider.validate(), "input[0] is out of (role, ordinal) order");
  provider.normalize();
  EXPECT_TRUE(provider.validate().has_value());
  EXPECT_EQ(provider, make_provider());
}

TEST(ProviderDescriptorTest, NormalizeOrdersByRoleThenOrdinal) {
  auto provider = make_provider();
  provider.dynamic_storage_bindings = {
      {ValueBindingRole::kOutput, 0, DynamicStorageRequirement::contiguous()},
      {ValueBindingRole::kInput, 2, DynamicStorageRequirement::contiguous()},
      {ValueBindingRole::kInput, 1, DynamicStorageRequirement::contiguous()}};
  provider.normalize();
  ASSERT_EQ(provider.dynamic_storage_bindings.size(), 3u);
  EXPECT_EQ(provider.dynamic_storage_bindings[0].role, ValueBindingRole::kInput);
  EXPECT_EQ(provider.dynamic_storage_bindings[0].ordinal, 1u);
  EXPECT_EQ(provider.dynamic_storage_bindings[1].ordinal, 2u);
  EXPECT_EQ(provider.dynamic_storage_bindings[2].role, ValueBindingRole::kOutput);
  EXPECT_TRUE(provider.validate().has_value());
}

TEST(ProviderDescriptorTest, DuplicateBindingIsRejectedEvenAfterNormalize) {
  auto provider = make_provider();
  provider.dynamic_storage_bindings.push_back(
      {ValueBindingRole::kInput, 0, DynamicStorageRequirement{{paged64()}}});
  provider.normalize();
  expect_provider_error(provider.validate(), "declares dynamic storage binding input[0] twice");
}

TEST(ProviderDescriptorTest, DynamicStorageForFindsTheSlot) {
  const auto provider = make_provider();
  const auto* input = provider.dynamic_storage_for(ValueBindingRole::kInput, 0);
  ASSERT_NE(input, nullptr);
  EXPECT_TRUE(input->accepts(DynamicStorageProfile::linear_contiguous()));
  EXPECT_FALSE(input->accepts(paged64()));
  const auto* output = provider.dynamic_storage_for(ValueBindingRole::kOutput, 0);
  ASSERT_NE(output, nullptr);
  EXPECT_TRUE(output->accepts(paged64()));
  EXPECT_FALSE(output->accepts(DynamicStorageProfile::linear_contiguous()));
  EXPECT_EQ(provider.dynamic_storage_for(ValueBindingRole::kInput, 1), nullptr);
  EXPECT_EQ(provider.dynamic_storage_for(ValueBindingRole::kOutput, 7), nullptr);
}

TEST(ProviderDescriptorTest, ContiguousRequirementIsLinearContiguousOnly) {
  const auto contiguous = DynamicStorageRequirement::contiguous();
  ASSERT_EQ(contiguous.accepted_profiles.size(), 1u);
  EXPECT_TRUE(contiguous.accepts(DynamicStorageProfile::linear_contiguous()));
  EXPECT_EQ(contiguous.to_json(), (nlohmann::json{{"accepted_profiles", {"linear/contiguous"}}}));
}

TEST(ProviderDescriptorTest, RoleWireNamesRoundTrip) {
  EXPECT_EQ(value_binding_role_name(ValueBindingRole::kInput), "input");
  EXPECT_EQ(value_binding_role_name(ValueBindingRole::kOutput), "output");
  EXPECT_EQ(*parse_value_binding_role("input"), ValueBindingRole::kInput);
  EXPECT_EQ(*parse_value_binding_role("output"), ValueBindingRole::kOutput);
  auto bad = parse_value_binding_role("weights");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("`weights`"), std::string::npos);
}

TEST(ProviderDescriptorTest, ToJsonNamesEveryField) {
  const nlohmann::json j = make_provider().to_json();
  EXPECT_EQ(j.at("provider_id"), "provider.main.simd");
  EXPECT_EQ(j.at("operation_id"), "operation.main");
  EXPECT_EQ(j.at("version"), "1.0");
  EXPECT_EQ(j.at("device_id"), "device.gpu.0");
  EXPECT_EQ(j.at("capabilities"), nlohmann::json({"capability.compute"}));
  EXPECT_EQ(j.at("accepted_weight_formats"), nlohmann::json({"weight-format.dense"}));
  EXPECT_EQ(j.at("accepted_quantization_formats"), nlohmann::json::array());
  EXPECT_EQ(j.at("dynamic_storage_bindings")[1],
            (nlohmann::json{{"role", "output"},
                            {"ordinal", 0},
                            {"storage", {{"accepted_profiles", {"fixed_block:64/paged:64"}}}}}));
  EXPECT_EQ(j.at("resource_estimator_id"), "estimator.main");
  EXPECT_EQ(j.at("resource_estimator_version"), "1.0");
  EXPECT_EQ(j.size(), 13u);
}

}  // namespace provider_descriptor_test
}  // namespace ferrite
