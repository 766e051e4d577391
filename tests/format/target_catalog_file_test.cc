// Catalog files, format_version 2: device, providers and declarative estimators.
#include <gtest/gtest.h>

#include "ferrite/catalog/declarative_estimator.h"
#include "ferrite/core/fingerprint.h"
#include "ferrite/format/catalog_file.h"
#include "format/format_test_util.h"

namespace ferrite {
namespace target_catalog_file_test {

using format_test::FailsAt;
using format_test::FailsWith;
using nlohmann::json;

json example(std::string_view name) {
  return json::parse(format_test::read_source_file("examples/" + std::string(name)));
}

Result<CompilationTarget> read_edited(const std::function<void(json&)>& edit) {
  json doc = example("synthetic.catalog.json");
  edit(doc);
  return read_target_catalog_file_text(doc.dump());
}

TEST(FormatTargetCatalogTest, SyntheticExampleIsTheSpecFixtureTarget) {
  auto target = read_target_catalog_file(format_test::source_path("examples/synthetic.catalog.json"));
  ASSERT_TRUE(target) << target.error().to_string();
  const CapabilityCatalog& catalog = target->catalog;
  EXPECT_EQ(catalog.device().id.str(), "device.reference.0");
  EXPECT_EQ(catalog.device().device_class, DeviceClass::kReference);
  EXPECT_EQ(catalog.device().total_memory_bytes, 1u << 20);
  const auto* provider = catalog.find_provider(OperationId::literal("operation.main"),
                                               ProviderId::literal("provider.operation.reference"));
  ASSERT_NE(provider, nullptr);
  // Derived, never read: operation fingerprint, device id, estimator implementation.
  const OperationDescriptor* op = catalog.operations().find(OperationId::literal("operation.main"));
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(provider->operation_fingerprint, *op->fingerprint());
  EXPECT_EQ(provider->device_id, catalog.device().id);
  const auto* estimator = dynamic_cast<const DeclarativeResourceEstimator*>(
      target->estimators.find(provider->provider_id));
  ASSERT_NE(estimator, nullptr);
  EXPECT_EQ(estimator->descriptor(), *provider);
  EXPECT_EQ(estimator->spec().value_alignment_bytes, 16u);
  ASSERT_TRUE(estimator->spec().scratch.has_value());
  ASSERT_TRUE(estimator->spec().persistent.has_value());
  EXPECT_FALSE(estimator->spec().binding.has_value());
  EXPECT_EQ(provider->resource_estimator_implementation_fingerprint,
            declarative_estimator_implementation_fingerprint(estimator->spec()));
  // Three non-weight slots (input 0, state input 2, output 0), sorted.
  ASSERT_EQ(provider->dynamic_storage_bindings.size(), 3u);
  EXPECT_EQ(provider->dynamic_storage_bindings[1].ordinal, 2u);
}

TEST(FormatTargetCatalogTest, LlamaExampleHasAlternativeProviders) {
  auto target = read_target_catalog_file_text(format_test::read_source_file(
      "examples/llama-decoder.catalog.json"));
  ASSERT_TRUE(target) << target.error().to_string();
  const auto& linear = target->catalog.providers().at(OperationId::literal("operation.linear"));
  ASSERT_EQ(linear.size(), 2u);
  EXPECT_EQ(linear[0].provider_id.str(), "provider.cpu.reference.linear");
  EXPECT_EQ(linear[1].provider_id.str(), "provider.cpu.tiled.linear");
  EXPECT_EQ(target->catalog.operations().operations().size(), 8u);
}

TEST(FormatTargetCatalogTest, EstimateDataChangesTheEstimatorImplementation) {
  auto a = read_edited([](json&) {});
  auto b = read_edited([](json& j) {
    j["providers"][0]["estimator"]["estimate"]["value_alignment_bytes"] = 32;
  });
  ASSERT_TRUE(a && b);
  EXPECT_NE(a->catalog.fingerprint(), b->catalog.fingerprint());
  const auto& pa = a->catalog.providers().begin()->second[0];
  const auto& pb = b->catalog.providers().begin()->second[0];
  EXPECT_NE(pa.resource_estimator_implementation_fingerprint,
            pb.resource_estimator_implementation_fingerprint);
  // Same file twice: identical catalog fingerprints.
  EXPECT_EQ(a->catalog.fingerprint(), read_edited([](json&) {})->catalog.fingerprint());
}

TEST(FormatTargetCatalogTest, VersionOneIsOperationsOnly) {
  json v1 = example("synthetic.catalog.json");
  v1.erase("device");
  v1.erase("providers");
  v1["format_version"] = 1;
  EXPECT_TRUE(FailsWith(read_target_catalog_file_text(v1.dump()), ErrorCode::kSerialization,
                        "compiling needs format_version 2"));
  EXPECT_TRUE(read_catalog_file_text(v1.dump()));
  // A version 2 file still serves `check` (its operations), validated whole.
  EXPECT_TRUE(read_catalog_file_text(example("synthetic.catalog.json").dump()));
  auto broken = example("synthetic.catalog.json");
  broken["device"]["total_memory_bytes"] = 0;
  EXPECT_FALSE(read_catalog_file_text(broken.dump()));
  auto v3 = example("synthetic.catalog.json");
  v3["format_version"] = 3;
  EXPECT_TRUE(FailsWith(read_catalog_file_text(v3.dump()), ErrorCode::kSerialization,
                        "supported: 1 to 2"));
}

TEST(FormatTargetCatalogTest, ShapeErrorsNameTheirPath) {
  EXPECT_TRUE(FailsAt(read_edited([](json& j) { j.erase("device"); }), ErrorCode::kSerialization,
                      "$.device"));
  EXPECT_TRUE(FailsAt(read_edited([](json& j) { j.erase("providers"); }),
                      ErrorCode::kSerialization, "$.providers"));
  EXPECT_TRUE(FailsAt(read_edited([](json& j) { j["estimators"] = json::array(); }),
                      ErrorCode::kSerialization, "$.estimators"));
  EXPECT_TRUE(FailsAt(read_edited([](json& j) { j["device"]["class"] = "quantum"; }),
                      ErrorCode::kSerialization, "$.device.class"));
  EXPECT_TRUE(FailsAt(read_edited([](json& j) {
                        j["device"]["runtime_implementation_fingerprint"] = "ABC";
                      }),
                      ErrorCode::kSerialization, "$.device.runtime_implementation_fingerprint"));
  EXPECT_TRUE(FailsAt(read_edited([](json& j) {
                        j["device"]["dynamic_storage_profiles"][0] = "linear/bogus";
                      }),
                      ErrorCode::kSerialization, "$.device.dynamic_storage_profiles[0]"));
  EXPECT_TRUE(FailsAt(read_edited([](json& j) { j["providers"][0]["storage"][0]["role"] = "both"; }),
                      ErrorCode::kSerialization, "$.providers[0].storage[0].role"));
  EXPECT_TRUE(FailsAt(read_edited([](json& j) { j["providers"][0]["implementation_fingerprint"] = 7; }),
                      ErrorCode::kSerialization, "$.providers[0].implementation_fingerprint"));
  EXPECT_TRUE(FailsAt(read_edited([](json& j) { j["providers"][0]["operation_fingerprint"] = "x"; }),
                      ErrorCode::kSerialization, "$.providers[0].operation_fingerprint"));
  EXPECT_TRUE(FailsAt(read_edited([](json& j) {
                        j["providers"][0]["estimator"]["estimate"]["scratch"]["scope"] = "forever";
                      }),
                      ErrorCode::kSerialization, "$.providers[0].estimator.estimate.scratch.scope"));
  EXPECT_TRUE(FailsAt(read_edited([](json& j) { j["providers"][0]["capabilities"].push_back("capability.compute"); }),
                      ErrorCode::kSerialization, "$.providers[0].capabilities"));
}

TEST(FormatTargetCatalogTest, SemanticRejectionsKeepTheirCode) {
  EXPECT_TRUE(FailsWith(read_edited([](json& j) { j["device"]["total_memory_bytes"] = 0; }),
                        ErrorCode::kInvalidExecutionPlan, "`$.device`"));
  EXPECT_TRUE(FailsWith(read_edited([](json& j) { j["providers"][0]["operation"] = "operation.other"; }),
                        ErrorCode::kUnsupportedOperation, "do not declare"));
  EXPECT_TRUE(FailsWith(read_edited([](json& j) { j["providers"][0]["version"] = "0.1"; }),
                        ErrorCode::kInvalidExecutionPlan, "unstable version"));
  EXPECT_TRUE(FailsWith(read_edited([](json& j) {
                          j["providers"][0]["estimator"]["estimate"]["value_alignment_bytes"] = 3;
                        }),
                        ErrorCode::kInvalidExecutionPlan, "$.providers[0]"));
  // A capability the device does not advertise.
  EXPECT_TRUE(FailsWith(read_edited([](json& j) {
                          j["providers"][0]["capabilities"].push_back("capability.gpu");
                        }),
                        ErrorCode::kUnsupportedOperation, "provider.operation.reference"));
  // The same provider twice for one operation.
  EXPECT_TRUE(FailsWith(read_edited([](json& j) { j["providers"].push_back(j["providers"][0]); }),
                        ErrorCode::kInvalidExecutionPlan, "provider.operation.reference"));
  // An operation nobody implements.
  EXPECT_TRUE(FailsWith(read_edited([](json& j) { j["providers"] = json::array(); }),
                        ErrorCode::kInvalidExecutionPlan, ""));
}

}  // namespace target_catalog_file_test
}  // namespace ferrite
