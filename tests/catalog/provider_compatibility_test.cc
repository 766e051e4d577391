#include "ferrite/catalog/provider_compatibility.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace ferrite {
namespace provider_compatibility_test {

using nlohmann::json;

ProviderId pid(std::string_view id) { return ProviderId::literal(id); }

const DeviceId kDevice = DeviceId::literal("device.reference.0");
const NodeId kNode = NodeId::literal("node.main");
const OperationId kOperation = OperationId::literal("operation.main");

TEST(ProviderCompatibilityTest, DescribesEachReason) {
  EXPECT_EQ(describe_reject_reason(OperationVersionMismatch{{2, 0}, {1, 0}}),
            "operation version 1.0 does not satisfy required version 2.0");
  EXPECT_EQ(describe_reject_reason(ProviderVersionMismatch{{1, 2}, {1, 1}}),
            "provider version 1.1 does not satisfy required version 1.2");
  EXPECT_EQ(describe_reject_reason(MissingCapabilities{{CapabilityId::literal("capability.simd")}}),
            "missing capabilities {capability.simd}");
  EXPECT_EQ(describe_reject_reason(MissingCapabilities{{CapabilityId::literal("capability.b"),
                                                        CapabilityId::literal("capability.a")}}),
            "missing capabilities {capability.a, capability.b}");
  EXPECT_EQ(describe_reject_reason(
                UnsupportedWeightFormats{{WeightFormatId::literal("weight-format.q")}}),
            "unsupported weight formats {weight-format.q}");
  EXPECT_EQ(describe_reject_reason(UnsupportedQuantizationFormats{
                {QuantizationFormatId::literal("quantization.synthetic.int4")}}),
            "unsupported quantization formats {quantization.synthetic.int4}");
}

TEST(ProviderCompatibilityTest, EachReasonHasATaggedJsonForm) {
  EXPECT_EQ(reject_reason_to_json(OperationVersionMismatch{{2, 0}, {1, 0}}),
            json::parse(R"({"operation_version_mismatch":{"required":"2.0","available":"1.0"}})"));
  EXPECT_EQ(reject_reason_to_json(ProviderVersionMismatch{{1, 2}, {1, 1}}),
            json::parse(R"({"provider_version_mismatch":{"required":"1.2","available":"1.1"}})"));
  EXPECT_EQ(
      reject_reason_to_json(MissingCapabilities{{CapabilityId::literal("capability.simd")}}),
      json::parse(R"({"missing_capabilities":{"capabilities":["capability.simd"]}})"));
  EXPECT_EQ(reject_reason_to_json(
                UnsupportedWeightFormats{{WeightFormatId::literal("weight-format.q")}}),
            json::parse(R"({"unsupported_weight_formats":{"formats":["weight-format.q"]}})"));
  EXPECT_EQ(reject_reason_to_json(UnsupportedQuantizationFormats{
                {QuantizationFormatId::literal("quantization.synthetic.int4")}}),
            json::parse(R"({"unsupported_quantization_formats":{"formats":["quantization.synthetic.int4"]}})"));
}

TEST(ProviderCompatibilityTest, ReportJsonListsRejectionsInProviderIdOrder) {
  ProviderCompatibilityReport report;
  report.compatible = {pid("provider.c")};
  report.rejected[pid("provider.b")] = {MissingCapabilities{{CapabilityId::literal("capability.x")}}};
  report.rejected[pid("provider.a")] = {ProviderVersionMismatch{{1, 2}, {1, 1}}};
  const json expected = json::parse(R"({
    "compatible": ["provider.c"],
    "rejected": [
      {"provider_id": "provider.a",
       "reasons": [{"provider_version_mismatch": {"required": "1.2", "available": "1.1"}}]},
      {"provider_id": "provider.b",
       "reasons": [{"missing_capabilities": {"capabilities": ["capability.x"]}}]}]})");
  EXPECT_EQ(report.to_json(), expected);
  EXPECT_EQ(report.rejected_to_json(), expected.at("rejected"));
}

TEST(ProviderCompatibilityTest, RequestRequiresAStableVersion) {
  ProviderCompatibilityRequest request{.operation_id = kOperation, .required_version = {1, 0}};
  EXPECT_TRUE(request.validate().has_value());
  request.required_version = {0, 3};
  auto result = request.validate();
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code(), ErrorCode::kInvalidExecutionPlan);
  EXPECT_NE(result.error().message().find("operation `operation.main`"), std::string::npos);
  EXPECT_NE(result.error().message().find("0.3"), std::string::npos);
  EXPECT_EQ(result.error().fields().at("operation_id"), "operation.main");
}

TEST(ProviderCompatibilityTest, RequireReturnsCompatibleProviders) {
  ProviderCompatibilityReport report;
  report.compatible = {pid("provider.a"), pid("provider.b")};
  report.rejected[pid("provider.c")] = {OperationVersionMismatch{{2, 0}, {1, 0}}};
  auto result = report.require_compatible_for_node(kDevice, kNode, kOperation);
  ASSERT_TRUE(result.has_value()) << result.error().to_string();
  EXPECT_EQ(*result, (std::vector<ProviderId>{pid("provider.a"), pid("provider.b")}));
}

TEST(ProviderCompatibilityTest, RequireSelectsOperationVersionMismatchFirst) {
  ProviderCompatibilityReport report;
  report.rejected[pid("provider.a")] = {
      MissingCapabilities{{CapabilityId::literal("capability.simd")}}};
  report.rejected[pid("provider.b")] = {OperationVersionMismatch{{2, 0}, {1, 0}},
                                        ProviderVersionMismatch{{2, 0}, {1, 1}}};
  auto result = report.require_compatible_for_node(kDevice, kNode, kOperation);
  ASSERT_FALSE(result.has_value());
  const Status& error = result.error();
  EXPECT_EQ(error.code(), ErrorCode::kIncompatibleOperationVersion);
  EXPECT_EQ(error.message(),
            "node `node.main` requires operation `operation.main` version 2.0, available 1.0");
  EXPECT_EQ(error.fields().at("node_id"), "node.main");
  EXPECT_EQ(error.fields().at("operation_id"), "operation.main");
  EXPECT_EQ(error.fields().at("required_version"), "2.0");
  EXPECT_EQ(error.fields().at("available_version"), "1.0");
}

// Unreachable through a valid catalog (see the header), so exercised on a
// hand-built report.
TEST(ProviderCompatibilityTest, RequireReportsGreatestProviderVersionWhenEveryProviderIsTooOld) {
  ProviderCompatibilityReport report;
  report.rejected[pid("provider.a")] = {ProviderVersionMismatch{{1, 5}, {1, 3}}};
  report.rejected[pid("provider.b")] = {
      ProviderVersionMismatch{{1, 5}, {1, 4}},
      MissingCapabilities{{CapabilityId::literal("capability.simd")}}};
  report.rejected[pid("provider.c")] = {ProviderVersionMismatch{{1, 5}, {1, 1}}};
  auto result = report.require_compatible_for_node(kDevice, kNode, kOperation);
  ASSERT_FALSE(result.has_value());
  const Status& error = result.error();
  EXPECT_EQ(error.code(), ErrorCode::kIncompatibleOperationVersion);
  EXPECT_EQ(error.message(),
            "node `node.main` requires operation `operation.main` version 1.5, available 1.4 "
            "(greatest provider version)");
  EXPECT_EQ(error.fields().at("required_version"), "1.5");
  EXPECT_EQ(error.fields().at("available_version"), "1.4");
  EXPECT_EQ(error.fields().at("node_id"), "node.main");
}

TEST(ProviderCompatibilityTest, RequireFallsBackToUnsupportedWhenSomeRejectionIsNotAVersion) {
  ProviderCompatibilityReport report;
  report.rejected[pid("provider.a")] = {ProviderVersionMismatch{{1, 5}, {1, 3}}};
  report.rejected[pid("provider.b")] = {
      UnsupportedQuantizationFormats{{QuantizationFormatId::literal("quantization.synthetic.int4")}}};
  auto result = report.require_compatible_for_node(kDevice, kNode, kOperation);
  ASSERT_FALSE(result.has_value());
  const Status& error = result.error();
  EXPECT_EQ(error.code(), ErrorCode::kUnsupportedOperation);
  EXPECT_EQ(error.message(),
            "node `node.main` operation `operation.main` is unsupported on device "
            "`device.reference.0`: all providers were rejected: " +
                report.rejected_to_json().dump());
  EXPECT_NE(error.message().find("quantization.synthetic.int4"), std::string::npos);
  EXPECT_EQ(error.fields().at("node_id"), "node.main");
  EXPECT_EQ(error.fields().at("operation_id"), "operation.main");
  EXPECT_EQ(error.fields().at("device_id"), "device.reference.0");
}

}  // namespace provider_compatibility_test
}  // namespace ferrite
