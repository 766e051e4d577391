#include "ferrite/catalog/device_descriptor.h"

#include <cctype>
#include <string>

#include <gtest/gtest.h>

#include "ferrite/core/fingerprint.h"

namespace ferrite {
namespace device_descriptor_test {

DeviceDescriptor make_device() {
  return DeviceDescriptor{
      .id = DeviceId::literal("device.gpu.0"),
      .device_class = DeviceClass::kAccelerator,
      .ordinal = 3,
      .total_memory_bytes = 1024,
      .runtime_implementation_fingerprint = sha256_hex("runtime"),
      .capabilities = {CapabilityId::literal("capability.simd"),
                       CapabilityId::literal("capability.compute")},
      .dynamic_storage_profiles = {DynamicStorageProfile::linear_contiguous()}};
}

void expect_device_error(const Result<void>& result, std::string_view needle) {
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code(), ErrorCode::kInvalidExecutionPlan);
  EXPECT_NE(result.error().message().find("device `device.gpu.0`"), std::string::npos)
      << result.error().message();
  EXPECT_NE(result.error().message().find(needle), std::string::npos) << result.error().message();
  EXPECT_EQ(result.error().fields().at("device_id"), "device.gpu.0");
}

TEST(DeviceDescriptorTest, ValidDeviceValidates) {
  EXPECT_TRUE(make_device().validate().has_value());
}

TEST(DeviceDescriptorTest, EmptyCapabilitiesAreAllowed) {
  DeviceDescriptor device = make_device();
  device.capabilities.clear();
  EXPECT_TRUE(device.validate().has_value());
}

TEST(DeviceDescriptorTest, ZeroMemoryIsRejected) {
  DeviceDescriptor device = make_device();
  device.total_memory_bytes = 0;
  expect_device_error(device.validate(), "zero total memory");
}

TEST(DeviceDescriptorTest, NonCanonicalRuntimeFingerprintIsRejected) {
  DeviceDescriptor device = make_device();
  std::string upper = sha256_hex("runtime");
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const std::string& bad : {std::string(), std::string("abc"), upper}) {
    device.runtime_implementation_fingerprint = bad;
    expect_device_error(device.validate(), "runtime implementation fingerprint");
  }
}

TEST(DeviceDescriptorTest, EmptyStorageProfilesAreRejected) {
  DeviceDescriptor device = make_device();
  device.dynamic_storage_profiles.clear();
  expect_device_error(device.validate(), "dynamic storage profile");
}

TEST(DeviceDescriptorTest, ClassWireNamesRoundTrip) {
  for (DeviceClass c : {DeviceClass::kHost, DeviceClass::kAccelerator, DeviceClass::kReference}) {
    auto parsed = parse_device_class(device_class_name(c));
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(*parsed, c);
  }
  EXPECT_EQ(device_class_name(DeviceClass::kHost), "host");
  EXPECT_EQ(device_class_name(DeviceClass::kAccelerator), "accelerator");
  EXPECT_EQ(device_class_name(DeviceClass::kReference), "reference");
  auto bad = parse_device_class("gpu");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.error().message().find("`gpu`"), std::string::npos);
}

TEST(DeviceDescriptorTest, ToJsonIsCanonicalAndSorted) {
  DeviceDescriptor device = make_device();
  device.dynamic_storage_profiles.insert(*DynamicStorageProfile::parse("fixed_block:64/paged:64"));
  const nlohmann::json expected = {
      {"id", "device.gpu.0"},
      {"class", "accelerator"},
      {"ordinal", 3},
      {"total_memory_bytes", 1024},
      {"runtime_implementation_fingerprint", sha256_hex("runtime")},
      {"capabilities", {"capability.compute", "capability.simd"}},
      {"dynamic_storage_profiles", {"linear/contiguous", "fixed_block:64/paged:64"}}};
  EXPECT_EQ(device.to_json(), expected);
}

}  // namespace device_descriptor_test
}  // namespace ferrite
