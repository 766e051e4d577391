#include "ferrite/catalog/capability_catalog.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "ferrite/core/fingerprint.h"
#include "support/fixtures.h"

namespace ferrite {
namespace capability_catalog_test {

using ferrite::testing::synthetic_operation;
using ferrite::testing::unwrap;

constexpr std::string_view kDeviceId = "device.reference.0";

CapabilityId cap(std::string_view id) { return CapabilityId::literal(id); }
ProviderId pid(std::string_view id) { return ProviderId::literal(id); }
OperationId oid(std::string_view id) { return OperationId::literal(id); }
NodeId nid(std::string_view id) { return NodeId::literal(id); }

DeviceDescriptor make_device() {
  return DeviceDescriptor{
      .id = DeviceId::literal(kDeviceId),
      .device_class = DeviceClass::kReference,
      .ordinal = 0,
      .total_memory_bytes = uint64_t{1} << 30,
      .runtime_implementation_fingerprint = sha256_hex("runtime.reference"),
      .capabilities = {cap("capability.compute"), cap("capability.simd")},
      .dynamic_storage_profiles = {DynamicStorageProfile::linear_contiguous()}};
}

OperationProviderDescriptor make_provider(const OperationDescriptor& op, std::string_view id,
                                          ContractVersion version = {1, 0}) {
  return OperationProviderDescriptor{
      .provider_id = pid(id),
      .operation_id = op.id,
      .operation_fingerprint = unwrap(op.fingerprint()),
      .provider_implementation_fingerprint = sha256_hex(id),
      .version = version,
      .device_id = DeviceId::literal(kDeviceId),
      .capabilities = {cap("capability.compute")},
      .accepted_weight_formats = {WeightFormatId::literal("weight-format.dense")},
      .accepted_quantization_formats = {},
      .dynamic_storage_bindings = {{ValueBindingRole::kOutput, 0,
                                    DynamicStorageRequirement::contiguous()}},
      .resource_estimator_id = "estimator.reference",
      .resource_estimator_version = {1, 0},
      .resource_estimator_implementation_fingerprint = sha256_hex("estimator.reference")};
}

Result<CapabilityCatalog> make_catalog(std::vector<OperationDescriptor> operations,
                                       std::vector<OperationProviderDescriptor> providers,
                                       DeviceDescriptor device = make_device()) {
  return CapabilityCatalog::create(std::move(device),
                                   unwrap(OperationCatalog::create(std::move(operations))),
                                   std::move(providers));
}

CapabilityCatalog synthetic_catalog() {
  const auto op = synthetic_operation();
  return unwrap(make_catalog({op}, {make_provider(op, "provider.main.reference")}));
}

template <class T>
void expect_error(const Result<T>& result, ErrorCode code,
                  const std::vector<std::string_view>& needles) {
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code(), code) << result.error().to_string();
  for (std::string_view needle : needles) {
    EXPECT_NE(result.error().message().find(needle), std::string::npos)
        << "missing `" << needle << "` in: " << result.error().message();
  }
}

// ---- construction rules -------------------------------------------------

TEST(CapabilityCatalogTest, SyntheticCatalogIsCreated) {
  const CapabilityCatalog catalog = synthetic_catalog();
  EXPECT_EQ(catalog.device(), make_device());
  EXPECT_EQ(catalog.operations().operations().size(), 1u);
  ASSERT_EQ(catalog.providers().size(), 1u);
  EXPECT_EQ(catalog.providers().at(oid("operation.main")).size(), 1u);
}

// Copies share one immutable table; look-ups by id (hashed by the id's
// interned address) answer the same from a copy that outlives its source,
// and equality compares contents, not the shared tables.
TEST(CapabilityCatalogTest, CopiesOutliveTheirSourceAndCompareByContent) {
  std::optional<CapabilityCatalog> source = synthetic_catalog();
  const CapabilityCatalog copy = *source;
  const CapabilityCatalog rebuilt = synthetic_catalog();
  EXPECT_EQ(copy, *source);
  EXPECT_EQ(copy, rebuilt);  // separate tables, equal contents
  source.reset();
  const OperationId op = oid("operation.main");
  ASSERT_NE(copy.operations().find(op), nullptr);
  EXPECT_EQ(copy.operations().find(op)->id, op);
  const OperationProviderDescriptor* provider =
      copy.find_provider(op, pid("provider.main.reference"));
  ASSERT_NE(provider, nullptr);
  EXPECT_EQ(provider->provider_id, pid("provider.main.reference"));
  EXPECT_EQ(copy.find_provider(op, pid("provider.absent")), nullptr);
  EXPECT_EQ(copy.find_provider(oid("operation.absent"), pid("provider.main.reference")), nullptr);
  ASSERT_NE(copy.operation_fingerprint(op), nullptr);
  EXPECT_EQ(*copy.operation_fingerprint(op), unwrap(copy.operations().find(op)->fingerprint()));
  EXPECT_EQ(copy.operation_fingerprint(oid("operation.absent")), nullptr);
  EXPECT_EQ(copy.operations().find(oid("operation.absent")), nullptr);
  ASSERT_TRUE(copy.providers_for(op));
  EXPECT_EQ((*copy.providers_for(op))->size(), 1u);

  // A catalog that differs in a provider row is unequal.
  const auto operation = synthetic_operation();
  const CapabilityCatalog other = unwrap(
      make_catalog({operation}, {make_provider(operation, "provider.main.reference", {1, 1})}));
  EXPECT_NE(copy, other);
  EXPECT_EQ(copy.operations(), other.operations());
}

TEST(CapabilityCatalogTest, InvalidDeviceIsRejected) {
  const auto op = synthetic_operation();
  DeviceDescriptor device = make_device();
  device.total_memory_bytes = 0;
  auto result = make_catalog({op}, {make_provider(op, "provider.main.reference")}, device);
  expect_error(result, ErrorCode::kInvalidExecutionPlan, {"device `device.reference.0`"});
  EXPECT_EQ(result.error().fields().at("device_id"), "device.reference.0");
}

TEST(CapabilityCatalogTest, EmptyProviderListIsRejected) {
  auto result = make_catalog({synthetic_operation()}, {});
  expect_error(result, ErrorCode::kInvalidExecutionPlan,
               {"device `device.reference.0`", "has no providers"});
}

TEST(CapabilityCatalogTest, TooManyProviderRowsAreRejected) {
  const auto op = synthetic_operation();
  std::vector<OperationProviderDescriptor> providers(kMaxCatalogProviders + 1,
                                                     make_provider(op, "provider.main.reference"));
  auto result = make_catalog({op}, std::move(providers));
  expect_error(result, ErrorCode::kInvalidExecutionPlan,
               {"device `device.reference.0`", "16385 provider rows", "16384"});
}

TEST(CapabilityCatalogTest, DeviceMustAdvertiseOperationCapabilities) {
  const auto op = synthetic_operation();
  DeviceDescriptor device = make_device();
  device.capabilities = {cap("capability.simd")};
  auto result = make_catalog({op}, {make_provider(op, "provider.main.reference")}, device);
  expect_error(result, ErrorCode::kUnsupportedOperation,
               {"operation `operation.main`", "device `device.reference.0`",
                "does not advertise required capabilities {capability.compute}"});
  EXPECT_EQ(result.error().fields().at("operation_id"), "operation.main");
  EXPECT_EQ(result.error().fields().at("device_id"), "device.reference.0");
}

TEST(CapabilityCatalogTest, InvalidProviderIsRejected) {
  const auto op = synthetic_operation();
  auto provider = make_provider(op, "provider.main.broken");
  provider.provider_implementation_fingerprint = "deadbeef";
  auto result = make_catalog({op}, {provider});
  expect_error(result, ErrorCode::kInvalidExecutionPlan,
               {"provider `provider.main.broken`", "`deadbeef`"});
  EXPECT_EQ(result.error().fields().at("provider_id"), "provider.main.broken");
  EXPECT_EQ(result.error().fields().at("device_id"), "device.reference.0");
}

TEST(CapabilityCatalogTest, ProviderOfUnknownOperationIsRejected) {
  const auto op = synthetic_operation();
  const auto ghost = synthetic_operation("operation.ghost");
  auto result = make_catalog(
      {op}, {make_provider(op, "provider.main.reference"), make_provider(ghost, "provider.ghost")});
  expect_error(result, ErrorCode::kUnsupportedOperation,
               {"provider `provider.ghost`", "operation `operation.ghost`",
                "operation descriptor is not registered"});
  EXPECT_EQ(result.error().fields().at("provider_id"), "provider.ghost");
  EXPECT_EQ(result.error().fields().at("operation_id"), "operation.ghost");
}

TEST(CapabilityCatalogTest, OperationWithoutProviderIsRejected) {
  const auto op = synthetic_operation();
  const auto orphan = synthetic_operation("operation.orphan");
  auto result = make_catalog({op, orphan}, {make_provider(op, "provider.main.reference")});
  expect_error(result, ErrorCode::kUnsupportedOperation,
               {"operation `operation.orphan`", "no provider is registered"});
  EXPECT_EQ(result.error().fields().at("operation_id"), "operation.orphan");
}

TEST(CapabilityCatalogTest, OperationFingerprintMismatchIsRejected) {
  const auto op = synthetic_operation();
  auto changed = op;
  changed.resources.minimum_value_alignment_bytes = 64;
  auto provider = make_provider(changed, "provider.main.stale");
  auto result = make_catalog({op}, {provider});
  expect_error(result, ErrorCode::kUnsupportedOperation,
               {"provider `provider.main.stale`", "operation `operation.main`",
                "operation fingerprint " + unwrap(changed.fingerprint())});
  EXPECT_EQ(result.error().fields().at("provider_id"), "provider.main.stale");
}

TEST(CapabilityCatalogTest, ProviderOfAnotherDeviceIsRejected) {
  const auto op = synthetic_operation();
  auto provider = make_provider(op, "provider.main.gpu");
  provider.device_id = DeviceId::literal("device.gpu.1");
  auto result = make_catalog({op}, {provider});
  expect_error(result, ErrorCode::kUnsupportedOperation,
               {"provider `provider.main.gpu`", "device `device.reference.0`",
                "targets device `device.gpu.1`"});
  EXPECT_EQ(result.error().fields().at("provider_id"), "provider.main.gpu");
}

TEST(CapabilityCatalogTest, ProviderVersionMustSatisfyOperationVersion) {
  const auto op = synthetic_operation();
  auto result = make_catalog({op}, {make_provider(op, "provider.main.next", {2, 0})});
  expect_error(result, ErrorCode::kIncompatibleOperationVersion,
               {"provider `provider.main.next`", "operation `operation.main`", "version 2.0",
                "operation version 1.0"});
  EXPECT_EQ(result.error().fields().at("required_version"), "1.0");
  EXPECT_EQ(result.error().fields().at("available_version"), "2.0");
  EXPECT_EQ(result.error().fields().at("provider_id"), "provider.main.next");
}

TEST(CapabilityCatalogTest, ProviderVersionMustSatisfyProviderMinimum) {
  auto op = synthetic_operation();
  op.provider.minimum_version = {1, 2};
  auto result = make_catalog({op}, {make_provider(op, "provider.main.old", {1, 1})});
  expect_error(result, ErrorCode::kIncompatibleOperationVersion,
               {"provider `provider.main.old`", "version 1.1",
                "provider minimum version 1.2"});
  EXPECT_EQ(result.error().fields().at("required_version"), "1.2");
  EXPECT_EQ(result.error().fields().at("available_version"), "1.1");
}

TEST(CapabilityCatalogTest, ProviderCapabilitiesMustBeOnTheDevice) {
  const auto op = synthetic_operation();
  auto provider = make_provider(op, "provider.main.tensor_core");
  provider.capabilities.insert(cap("capability.tensor_core"));
  auto result = make_catalog({op}, {provider});
  expect_error(result, ErrorCode::kUnsupportedOperation,
               {"provider `provider.main.tensor_core`",
                "needs capabilities {capability.tensor_core} the device does not advertise"});
}

TEST(CapabilityCatalogTest, ProviderMustHaveOperationRequiredCapabilities) {
  const auto op = synthetic_operation();
  auto provider = make_provider(op, "provider.main.bare");
  provider.capabilities = {cap("capability.simd")};
  auto result = make_catalog({op}, {provider});
  expect_error(result, ErrorCode::kUnsupportedOperation,
               {"provider `provider.main.bare`", "operation `operation.main`",
                "lacks the operation's required capabilities {capability.compute}"});
}

TEST(CapabilityCatalogTest, DuplicateProviderIdWithinAnOperationIsRejected) {
  const auto op = synthetic_operation();
  auto result = make_catalog({op}, {make_provider(op, "provider.main.twice", {1, 1}),
                                    make_provider(op, "provider.main.twice", {1, 0})});
  expect_error(result, ErrorCode::kInvalidExecutionPlan,
               {"provider `provider.main.twice` is registered twice", "operation `operation.main`",
                "versions 1.0 and 1.1"});
  EXPECT_EQ(result.error().fields().at("provider_id"), "provider.main.twice");
}

TEST(CapabilityCatalogTest, SameProviderIdUnderTwoOperationsIsAllowed) {
  const auto a = synthetic_operation("operation.a");
  const auto b = synthetic_operation("operation.b");
  auto result = make_catalog({a, b}, {make_provider(a, "provider.shared"),
                                      make_provider(b, "provider.shared")});
  ASSERT_TRUE(result.has_value()) << result.error().to_string();
}

TEST(CapabilityCatalogTest, RowsAreSortedByProviderIdAndBindingsNormalized) {
  const auto op = synthetic_operation();
  auto z = make_provider(op, "provider.z");
  z.dynamic_storage_bindings = {
      {ValueBindingRole::kOutput, 0, DynamicStorageRequirement::contiguous()},
      {ValueBindingRole::kInput, 0, DynamicStorageRequirement::contiguous()}};
  auto catalog = unwrap(make_catalog(
      {op}, {z, make_provider(op, "provider.a"), make_provider(op, "provider.m", {1, 3})}));
  const auto& row = catalog.providers().at(oid("operation.main"));
  ASSERT_EQ(row.size(), 3u);
  EXPECT_EQ(row[0].provider_id, pid("provider.a"));
  EXPECT_EQ(row[1].provider_id, pid("provider.m"));
  EXPECT_EQ(row[2].provider_id, pid("provider.z"));
  EXPECT_EQ(row[2].dynamic_storage_bindings[0].role, ValueBindingRole::kInput);
}

// ---- accessors ----------------------------------------------------------

TEST(CapabilityCatalogTest, OperationForNodeNamesNodeOperationAndDevice) {
  const CapabilityCatalog catalog = synthetic_catalog();
  auto found = catalog.operation_for_node(nid("node.main"), oid("operation.main"));
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ((*found)->id, oid("operation.main"));

  auto missing = catalog.operation_for_node(nid("node.extension"),
                                            oid("operation.extension.scale_bias"));
  expect_error(missing, ErrorCode::kUnsupportedOperation,
               {"device `device.reference.0`", "node `node.extension`",
                "operation `operation.extension.scale_bias`",
                "operation descriptor is not registered"});
  EXPECT_EQ(missing.error().fields().at("node_id"), "node.extension");
  EXPECT_EQ(missing.error().fields().at("operation_id"), "operation.extension.scale_bias");
  EXPECT_EQ(missing.error().fields().at("device_id"), "device.reference.0");
}

TEST(CapabilityCatalogTest, ProvidersForReturnsTheRowOrNoProviderError) {
  const CapabilityCatalog catalog = synthetic_catalog();
  auto row = catalog.providers_for(oid("operation.main"));
  ASSERT_TRUE(row.has_value());
  ASSERT_EQ((*row)->size(), 1u);
  EXPECT_EQ((**row)[0].provider_id, pid("provider.main.reference"));

  auto missing = catalog.providers_for(oid("operation.other"));
  expect_error(missing, ErrorCode::kUnsupportedOperation,
               {"operation `operation.other`", "no provider is registered"});
  EXPECT_EQ(missing.error().fields().at("device_id"), "device.reference.0");

  auto for_node = catalog.providers_for_node(nid("node.x"), oid("operation.other"));
  expect_error(for_node, ErrorCode::kUnsupportedOperation,
               {"node `node.x`", "operation `operation.other`", "device `device.reference.0`",
                "no provider is registered"});
  EXPECT_EQ(for_node.error().fields().at("node_id"), "node.x");
  EXPECT_EQ(for_node.error().fields().at("operation_id"), "operation.other");
  EXPECT_EQ(for_node.error().fields().at("device_id"), "device.reference.0");
}

TEST(CapabilityCatalogTest, FindProvider) {
  const CapabilityCatalog catalog = synthetic_catalog();
  const auto* provider = catalog.find_provider(oid("operation.main"), pid("provider.main.reference"));
  ASSERT_NE(provider, nullptr);
  EXPECT_EQ(provider->version, (ContractVersion{1, 0}));
  EXPECT_EQ(catalog.find_provider(oid("operation.main"), pid("provider.other")), nullptr);
  EXPECT_EQ(catalog.find_provider(oid("operation.other"), pid("provider.main.reference")), nullptr);
}

TEST(CapabilityCatalogTest, ToJsonHoldsDeviceOperationsAndProviders) {
  const CapabilityCatalog catalog = synthetic_catalog();
  const nlohmann::json j = catalog.to_json();
  EXPECT_EQ(j.at("device"), make_device().to_json());
  EXPECT_EQ(j.at("operations"), catalog.operations().to_json().at("operations"));
  ASSERT_EQ(j.at("providers").size(), 1u);
  EXPECT_EQ(j.at("providers")[0].at("provider_id"), "provider.main.reference");
  EXPECT_EQ(catalog.fingerprint(), canonical_fingerprint(j));
}

TEST(CapabilityCatalogTest, FingerprintIsStableAcrossCopiesAndTracksTheDevice) {
  const CapabilityCatalog catalog = synthetic_catalog();
  const CapabilityCatalog copy = catalog;  // NOLINT(performance-unnecessary-copy-initialization)
  EXPECT_TRUE(is_canonical_sha256(catalog.fingerprint()));
  EXPECT_EQ(copy.fingerprint(), catalog.fingerprint());
  EXPECT_EQ(synthetic_catalog().fingerprint(), catalog.fingerprint());
  EXPECT_EQ(copy, catalog);

  const auto op = synthetic_operation();
  DeviceDescriptor bigger = make_device();
  bigger.total_memory_bytes *= 2;
  auto changed = unwrap(make_catalog({op}, {make_provider(op, "provider.main.reference")}, bigger));
  EXPECT_NE(changed.fingerprint(), catalog.fingerprint());

  auto other_provider = unwrap(make_catalog({op}, {make_provider(op, "provider.main.other")}));
  EXPECT_NE(other_provider.fingerprint(), catalog.fingerprint());
}

// ---- provider compatibility ---------------------------------------------

ProviderCompatibilityRequest request_for(std::string_view op, ContractVersion version = {1, 0}) {
  return ProviderCompatibilityRequest{.operation_id = oid(op), .required_version = version};
}

TEST(CompatibilityTest, AllProvidersCompatibleInCatalogOrder) {
  const auto op = synthetic_operation();
  auto catalog = unwrap(make_catalog({op}, {make_provider(op, "provider.c"),
                                            make_provider(op, "provider.a"),
                                            make_provider(op, "provider.b", {1, 2})}));
  const auto report = catalog.provider_compatibility(request_for("operation.main"));
  EXPECT_EQ(report.compatible,
            (std::vector<ProviderId>{pid("provider.a"), pid("provider.b"), pid("provider.c")}));
  EXPECT_TRUE(report.rejected.empty());
}

TEST(CompatibilityTest, UnknownOperationGivesAnEmptyReport) {
  const auto report = synthetic_catalog().provider_compatibility(request_for("operation.other"));
  EXPECT_TRUE(report.compatible.empty());
  EXPECT_TRUE(report.rejected.empty());
}

TEST(CompatibilityTest, OperationVersionMismatchAlone) {
  // The operation is 1.0, the provider 1.2; the node needs 1.1: only the
  // operation's own version falls short.
  const auto op = synthetic_operation();
  auto catalog = unwrap(make_catalog({op}, {make_provider(op, "provider.a", {1, 2})}));
  const auto report = catalog.provider_compatibility(request_for("operation.main", {1, 1}));
  EXPECT_TRUE(report.compatible.empty());
  ASSERT_EQ(report.rejected.size(), 1u);
  EXPECT_EQ(report.rejected.at(pid("provider.a")),
            (std::vector<ProviderCompatibilityRejectReason>{
                OperationVersionMismatch{{1, 1}, {1, 0}}}));
}

TEST(CompatibilityTest, MajorMismatchReportsOperationAndProviderVersions) {
  const auto op = synthetic_operation();
  auto catalog = unwrap(make_catalog({op}, {make_provider(op, "provider.a", {1, 2})}));
  const auto report = catalog.provider_compatibility(request_for("operation.main", {2, 0}));
  EXPECT_EQ(report.rejected.at(pid("provider.a")),
            (std::vector<ProviderCompatibilityRejectReason>{
                OperationVersionMismatch{{2, 0}, {1, 0}}, ProviderVersionMismatch{{2, 0}, {1, 2}}}));
}

TEST(CompatibilityTest, MissingCapabilitiesAlone) {
  const auto op = synthetic_operation();
  auto simd = make_provider(op, "provider.simd");
  simd.capabilities.insert(cap("capability.simd"));
  auto catalog = unwrap(make_catalog({op}, {make_provider(op, "provider.plain"), simd}));
  auto request = request_for("operation.main");
  request.required_capabilities = {cap("capability.simd"), cap("capability.compute")};
  const auto report = catalog.provider_compatibility(request);
  EXPECT_EQ(report.compatible, (std::vector<ProviderId>{pid("provider.simd")}));
  EXPECT_EQ(report.rejected.at(pid("provider.plain")),
            (std::vector<ProviderCompatibilityRejectReason>{
                MissingCapabilities{{cap("capability.simd")}}}));
}

TEST(CompatibilityTest, UnsupportedWeightFormatsAlone) {
  const auto op = synthetic_operation();
  auto catalog = unwrap(make_catalog({op}, {make_provider(op, "provider.a")}));
  auto request = request_for("operation.main");
  request.required_weight_formats = {WeightFormatId::literal("weight-format.dense"),
                                     WeightFormatId::literal("weight-format.gptq")};
  const auto report = catalog.provider_compatibility(request);
  EXPECT_EQ(report.rejected.at(pid("provider.a")),
            (std::vector<ProviderCompatibilityRejectReason>{
                UnsupportedWeightFormats{{WeightFormatId::literal("weight-format.gptq")}}}));
}

TEST(CompatibilityTest, UnsupportedQuantizationFormatsAlone) {
  const auto op = synthetic_operation();
  auto catalog = unwrap(make_catalog({op}, {make_provider(op, "provider.a")}));
  auto request = request_for("operation.main");
  request.required_quantization_formats = {QuantizationFormatId::literal("quantization.q4")};
  const auto report = catalog.provider_compatibility(request);
  EXPECT_EQ(report.rejected.at(pid("provider.a")),
            (std::vector<ProviderCompatibilityRejectReason>{
                UnsupportedQuantizationFormats{{QuantizationFormatId::literal("quantization.q4")}}}));
}

TEST(CompatibilityTest, ReasonsAccumulateInSpecOrder) {
  const auto op = synthetic_operation();
  auto catalog = unwrap(make_catalog({op}, {make_provider(op, "provider.a")}));
  ProviderCompatibilityRequest request{
      .operation_id = oid("operation.main"),
      .required_version = {3, 0},
      .required_capabilities = {cap("capability.simd")},
      .required_weight_formats = {WeightFormatId::literal("weight-format.q")},
      .required_quantization_formats = {QuantizationFormatId::literal("quantization.q")}};
  const auto report = catalog.provider_compatibility(request);
  const auto& reasons = report.rejected.at(pid("provider.a"));
  ASSERT_EQ(reasons.size(), 5u);
  EXPECT_TRUE(std::holds_alternative<OperationVersionMismatch>(reasons[0]));
  EXPECT_TRUE(std::holds_alternative<ProviderVersionMismatch>(reasons[1]));
  EXPECT_TRUE(std::holds_alternative<MissingCapabilities>(reasons[2]));
  EXPECT_TRUE(std::holds_alternative<UnsupportedWeightFormats>(reasons[3]));
  EXPECT_TRUE(std::holds_alternative<UnsupportedQuantizationFormats>(reasons[4]));
}

TEST(CompatibilityTest, MixedReportKeepsCatalogOrderInBothLists) {
  const auto op = synthetic_operation();
  auto d = make_provider(op, "provider.d");
  d.accepted_quantization_formats = {QuantizationFormatId::literal("quantization.q4")};
  auto b = make_provider(op, "provider.b");
  b.accepted_quantization_formats = {QuantizationFormatId::literal("quantization.q4")};
  auto catalog = unwrap(make_catalog(
      {op}, {d, make_provider(op, "provider.c"), b, make_provider(op, "provider.a")}));
  auto request = request_for("operation.main");
  request.required_quantization_formats = {QuantizationFormatId::literal("quantization.q4")};
  const auto report = catalog.provider_compatibility(request);
  EXPECT_EQ(report.compatible, (std::vector<ProviderId>{pid("provider.b"), pid("provider.d")}));
  ASSERT_EQ(report.rejected.size(), 2u);
  EXPECT_EQ(report.rejected.begin()->first, pid("provider.a"));
  EXPECT_EQ(report.rejected.rbegin()->first, pid("provider.c"));
}

// ---- require_compatible_for_node ----------------------------------------

TEST(CompatibilityTest, RequireReturnsCompatibleProviders) {
  const auto op = synthetic_operation();
  auto catalog = unwrap(
      make_catalog({op}, {make_provider(op, "provider.b"), make_provider(op, "provider.a")}));
  auto result = catalog.require_compatible_for_node(nid("node.main"), request_for("operation.main"));
  ASSERT_TRUE(result.has_value()) << result.error().to_string();
  EXPECT_EQ(*result, (std::vector<ProviderId>{pid("provider.a"), pid("provider.b")}));
}

// Spec §12.3 case 15(a): the catalog lacks the node's operation.
TEST(CompatibilityTest, RequireForMissingOperationIsUnsupported) {
  auto result = synthetic_catalog().require_compatible_for_node(
      nid("node.extension"), request_for("operation.extension.scale_bias"));
  expect_error(result, ErrorCode::kUnsupportedOperation,
               {"node `node.extension`", "operation `operation.extension.scale_bias`"});
  EXPECT_EQ(result.error().fields().at("node_id"), "node.extension");
  EXPECT_EQ(result.error().fields().at("operation_id"), "operation.extension.scale_bias");
  EXPECT_EQ(result.error().fields().at("device_id"), "device.reference.0");
}

// Spec §12.3 case 15(b): the node requires v2.0, the catalog has v1.0.
TEST(CompatibilityTest, RequireForNewerNodeVersionIsIncompatibleOperationVersion) {
  const auto op = synthetic_operation("operation.extension.scale_bias");
  auto catalog = unwrap(make_catalog({op}, {make_provider(op, "provider.extension.reference")}));
  auto result = catalog.require_compatible_for_node(
      nid("node.extension"), request_for("operation.extension.scale_bias", {2, 0}));
  ASSERT_FALSE(result.has_value());
  const Status& error = result.error();
  EXPECT_EQ(error.code(), ErrorCode::kIncompatibleOperationVersion);
  EXPECT_EQ(error.message(),
            "node `node.extension` requires operation `operation.extension.scale_bias` version "
            "2.0, available 1.0");
  EXPECT_EQ(error.fields().at("node_id"), "node.extension");
  EXPECT_EQ(error.fields().at("operation_id"), "operation.extension.scale_bias");
  EXPECT_EQ(error.fields().at("required_version"), "2.0");
  EXPECT_EQ(error.fields().at("available_version"), "1.0");
}

TEST(CompatibilityTest, RequireForQuantizedWeightsOnDenseProviderIsUnsupported) {
  const auto op = synthetic_operation();
  auto catalog = unwrap(make_catalog({op}, {make_provider(op, "provider.main.dense")}));
  auto request = request_for("operation.main");
  request.required_weight_formats = {WeightFormatId::literal("weight-format.synthetic.quantized")};
  request.required_quantization_formats = {
      QuantizationFormatId::literal("quantization.synthetic.int4")};
  auto result = catalog.require_compatible_for_node(nid("node.main"), request);
  expect_error(result, ErrorCode::kUnsupportedOperation,
               {"node `node.main`", "operation `operation.main`", "device `device.reference.0`",
                "all providers were rejected: ", "provider.main.dense",
                "weight-format.synthetic.quantized", "quantization.synthetic.int4"});
  EXPECT_EQ(result.error().fields().at("node_id"), "node.main");
  EXPECT_EQ(result.error().fields().at("operation_id"), "operation.main");
  EXPECT_EQ(result.error().fields().at("device_id"), "device.reference.0");
}

TEST(CompatibilityTest, RequireForMissingCapabilityIsUnsupported) {
  const auto op = synthetic_operation();
  auto catalog = unwrap(make_catalog({op}, {make_provider(op, "provider.main.plain")}));
  auto request = request_for("operation.main");
  request.required_capabilities = {cap("capability.simd")};
  auto result = catalog.require_compatible_for_node(nid("node.main"), request);
  expect_error(result, ErrorCode::kUnsupportedOperation,
               {R"("missing_capabilities":{"capabilities":["capability.simd"]})"});
}

TEST(CompatibilityTest, RequireRejectsUnstableRequestVersion) {
  auto result = synthetic_catalog().require_compatible_for_node(
      nid("node.main"), request_for("operation.main", {0, 1}));
  expect_error(result, ErrorCode::kInvalidExecutionPlan,
               {"node `node.main`", "operation `operation.main`", "unstable required version 0.1"});
  EXPECT_EQ(result.error().fields().at("node_id"), "node.main");
}

}  // namespace capability_catalog_test
}  // namespace ferrite
