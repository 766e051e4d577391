#include "ferrite/catalog/declarative_estimator.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ferrite/core/fingerprint.h"
#include "support/fixtures.h"

namespace ferrite {
namespace declarative_estimator_test {

using ::testing::HasSubstr;
using testing::unwrap;
using nlohmann::json;

const json kExample = json::parse(R"({
  "value_alignment_bytes": 64,
  "scratch": {"formula": {"tokens": {"bytes_per_token": 256}}, "alignment_bytes": 64,
              "scope": "invocation", "storage": ["linear/contiguous"]},
  "binding": {"formula": {"affine": {"fixed": 16, "per_sequence": 0, "per_token": 8}},
              "alignment_bytes": 16, "scope": "invocation",
              "storage": ["linear/contiguous", "fixed_block:4096/contiguous"]},
  "persistent": {"formula": {"pages": {"bytes_per_page": 4096, "maximum_pages": 32}},
                 "alignment_bytes": 4096, "scope": "sequence",
                 "storage": ["fixed_block:4096/paged:4096"]}
})");

DeclarativeEstimateSpec example_spec() { return unwrap(DeclarativeEstimateSpec::read(kExample, "$")); }

OperationProviderDescriptor descriptor_for(const DeclarativeEstimateSpec& spec) {
  return OperationProviderDescriptor{
      .provider_id = ProviderId::literal("provider.main.remote"),
      .operation_id = OperationId::literal("operation.main"),
      .operation_fingerprint = unwrap(testing::synthetic_operation().fingerprint()),
      .provider_implementation_fingerprint = sha256_hex("remote kernel"),
      .version = {1, 0},
      .device_id = DeviceId::literal("device.remote"),
      .capabilities = {CapabilityId::literal("capability.compute")},
      .accepted_weight_formats = {},
      .accepted_quantization_formats = {},
      .dynamic_storage_bindings = {{ValueBindingRole::kOutput, 0,
                                    DynamicStorageRequirement::contiguous()}},
      .resource_estimator_id = "estimator.declarative",
      .resource_estimator_version = {1, 0},
      .resource_estimator_implementation_fingerprint =
          declarative_estimator_implementation_fingerprint(spec)};
}

OperationResourceEstimateRequest request_for(const OperationDescriptor* operation,
                                             std::string provider = "provider.main.remote") {
  return OperationResourceEstimateRequest{
      .node_id = NodeId::literal("node.main"),
      .operation = operation,
      .attributes = {},
      .provider_id = ProviderId::literal(provider),
      .values = {},
      .required_capabilities = {},
      .required_weight_formats = {},
      .required_quantization_formats = {},
      .input_fingerprint = sha256_hex("input")};
}

// Reads `doc` at "$.estimator" and expects an error with `code` naming `path`.
void expect_read_error(const json& doc, ErrorCode code, std::string_view path,
                       std::initializer_list<std::string_view> needles = {}) {
  auto spec = DeclarativeEstimateSpec::read(doc, "$.estimator");
  ASSERT_FALSE(spec) << "expected an error at " << path;
  EXPECT_EQ(spec.error().code(), code) << spec.error().to_string();
  EXPECT_THAT(spec.error().message(), HasSubstr("`" + std::string(path)))
      << spec.error().to_string();
  ASSERT_TRUE(spec.error().fields().contains("path")) << spec.error().to_string();
  EXPECT_EQ(spec.error().fields().at("path"), path);
  for (std::string_view needle : needles) {
    EXPECT_THAT(spec.error().message(), HasSubstr(std::string(needle)));
  }
}

json with(json doc, const json::json_pointer& pointer, json value) {
  doc[pointer] = std::move(value);
  return doc;
}

json without(json doc, const json::json_pointer& pointer) {
  doc[pointer.parent_pointer()].erase(pointer.back());
  return doc;
}

TEST(DeclarativeEstimatorTest, ReadsEveryField) {
  const DeclarativeEstimateSpec spec = example_spec();
  EXPECT_EQ(spec.value_alignment_bytes, 64u);
  ASSERT_TRUE(spec.scratch);
  EXPECT_EQ(spec.scratch->formula, ProviderWorkspaceSizeFormula(WorkspaceTokens{256}));
  EXPECT_EQ(spec.scratch->alignment_bytes, 64u);
  EXPECT_EQ(spec.scratch->scope, ProviderWorkspaceScope::kInvocation);
  EXPECT_EQ(spec.scratch->storage, DynamicStorageRequirement::contiguous());
  ASSERT_TRUE(spec.binding);
  EXPECT_EQ(spec.binding->formula, ProviderWorkspaceSizeFormula(WorkspaceAffine{16, 0, 8}));
  EXPECT_EQ(spec.binding->storage.accepted_profiles.size(), 2u);
  ASSERT_TRUE(spec.persistent);
  EXPECT_EQ(spec.persistent->formula, ProviderWorkspaceSizeFormula(WorkspacePages{4096, 32}));
  EXPECT_EQ(spec.persistent->scope, ProviderWorkspaceScope::kSequence);
  EXPECT_TRUE(spec.validate());
}

TEST(DeclarativeEstimatorTest, RoundTripsThroughJson) {
  const DeclarativeEstimateSpec spec = example_spec();
  EXPECT_EQ(spec.to_json(), kExample);
  EXPECT_EQ(unwrap(DeclarativeEstimateSpec::read(spec.to_json(), "$")), spec);

  const json minimal = json::parse(R"({"value_alignment_bytes": 16})");
  const DeclarativeEstimateSpec bare = unwrap(DeclarativeEstimateSpec::read(minimal, "$"));
  EXPECT_FALSE(bare.scratch || bare.binding || bare.persistent);
  EXPECT_EQ(bare.to_json(), minimal);

  for (const json& formula : {json::parse(R"({"fixed":{"bytes":8}})"),
                              json::parse(R"({"actual_sequences":{"bytes_per_sequence":8}})")}) {
    const json doc = with(minimal, "/binding"_json_pointer,
                          json{{"formula", formula},
                               {"alignment_bytes", 8},
                               {"scope", "invocation"},
                               {"storage", json::array({"linear/contiguous"})}});
    auto read = DeclarativeEstimateSpec::read(doc, "$");
    ASSERT_TRUE(read) << read.error().to_string();
    EXPECT_EQ(read->to_json(), doc);
  }
}

// A node-shaped scratch (what the CPU providers declare) reads strictly and
// round-trips; a factor of an unknown source is refused at its path.
TEST(DeclarativeEstimatorTest, ShapeFormulasRoundTripAndAreReadStrictly) {
  const json doc = json::parse(R"({"value_alignment_bytes": 64,
      "scratch": {"formula": {"shape": {"fixed": 0, "terms": [
                    {"bytes": 4, "factors": [{"attribute": "n_heads", "divisor": 1},
                                             {"token_rows": {"role": "input", "ordinal": 1},
                                              "divisor": 1}]},
                    {"bytes": 192, "factors": [
                      {"dimension": {"role": "input", "ordinal": 0, "axis": 1},
                       "divisor": 64}]}]}},
                  "alignment_bytes": 64, "scope": "invocation",
                  "storage": ["linear/contiguous"]}})");
  auto read = DeclarativeEstimateSpec::read(doc, "$");
  ASSERT_TRUE(read) << read.error().to_string();
  ASSERT_TRUE(read->scratch);
  const auto* shape = std::get_if<WorkspaceShape>(&read->scratch->formula);
  ASSERT_NE(shape, nullptr);
  ASSERT_EQ(shape->terms.size(), 2u);
  EXPECT_EQ(shape->terms[1].factors[0].divisor, 64u);
  EXPECT_EQ(shape->terms[0].factors[1].source, WorkspaceShapeSource::kTokenRows);
  EXPECT_EQ(read->to_json(), doc);

  json unknown = doc;
  unknown["scratch"]["formula"]["shape"]["terms"][0]["factors"][0] =
      json::parse(R"({"heads": "n_heads", "divisor": 1})");
  auto refused = DeclarativeEstimateSpec::read(unknown, "$");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), ErrorCode::kSerialization);
  EXPECT_THAT(refused.error().message(), HasSubstr("$.scratch.formula.shape.terms[0].factors[0]"));
}

TEST(DeclarativeEstimatorTest, ImplementationFingerprintIsTheDataFingerprint) {
  const DeclarativeEstimateSpec spec = example_spec();
  const std::string fingerprint = declarative_estimator_implementation_fingerprint(spec);
  EXPECT_TRUE(is_canonical_sha256(fingerprint));
  EXPECT_EQ(fingerprint, canonical_fingerprint(kExample));
  DeclarativeEstimateSpec changed = spec;
  changed.scratch->formula = WorkspaceTokens{257};
  EXPECT_NE(declarative_estimator_implementation_fingerprint(changed), fingerprint);
  changed = spec;
  changed.value_alignment_bytes = 128;
  EXPECT_NE(declarative_estimator_implementation_fingerprint(changed), fingerprint);
}

TEST(DeclarativeEstimatorTest, StrictReaderRejectsUnknownFields) {
  expect_read_error(with(kExample, "/extra"_json_pointer, 1), ErrorCode::kSerialization,
                    "$.estimator.extra", {"unknown field"});
  expect_read_error(with(kExample, "/scratch/reuse"_json_pointer, "overwrite"),
                    ErrorCode::kSerialization, "$.estimator.scratch.reuse", {"unknown field"});
  expect_read_error(with(kExample, "/scratch/formula/tokens/bytes"_json_pointer, 1),
                    ErrorCode::kSerialization, "$.estimator.scratch.formula.tokens.bytes",
                    {"unknown field"});
  expect_read_error(with(kExample, "/scratch/formula"_json_pointer,
                         json::parse(R"({"buckets":{"bytes":1}})")),
                    ErrorCode::kSerialization, "$.estimator.scratch.formula.buckets",
                    {"unknown field"});
}

TEST(DeclarativeEstimatorTest, StrictReaderRejectsTwoFormulaKinds) {
  expect_read_error(with(kExample, "/scratch/formula/fixed"_json_pointer, json{{"bytes", 8}}),
                    ErrorCode::kSerialization, "$.estimator.scratch.formula",
                    {"exactly one of the keys"});
}

TEST(DeclarativeEstimatorTest, StrictReaderRejectsMissingFields) {
  expect_read_error(without(kExample, "/value_alignment_bytes"_json_pointer),
                    ErrorCode::kSerialization, "$.estimator.value_alignment_bytes",
                    {"missing required field"});
  expect_read_error(without(kExample, "/scratch/alignment_bytes"_json_pointer),
                    ErrorCode::kSerialization, "$.estimator.scratch.alignment_bytes",
                    {"missing required field"});
  expect_read_error(without(kExample, "/binding/formula/affine/per_token"_json_pointer),
                    ErrorCode::kSerialization, "$.estimator.binding.formula.affine.per_token",
                    {"missing required field"});
}

TEST(DeclarativeEstimatorTest, StrictReaderRejectsWrongTypes) {
  expect_read_error(json::array(), ErrorCode::kSerialization, "$.estimator", {"an object"});
  expect_read_error(with(kExample, "/value_alignment_bytes"_json_pointer, "64"),
                    ErrorCode::kSerialization, "$.estimator.value_alignment_bytes",
                    {"unsigned integer", "string"});
  expect_read_error(with(kExample, "/scratch/formula/tokens/bytes_per_token"_json_pointer, -1),
                    ErrorCode::kSerialization, "$.estimator.scratch.formula.tokens.bytes_per_token",
                    {"unsigned integer"});
  expect_read_error(with(kExample, "/persistent"_json_pointer, nullptr), ErrorCode::kSerialization,
                    "$.estimator.persistent", {"an object", "null"});
  expect_read_error(with(kExample, "/scratch/storage"_json_pointer, "linear/contiguous"),
                    ErrorCode::kSerialization, "$.estimator.scratch.storage", {"array"});
  expect_read_error(with(kExample, "/scratch/scope"_json_pointer, 3), ErrorCode::kSerialization,
                    "$.estimator.scratch.scope", {"string"});
}

TEST(DeclarativeEstimatorTest, StrictReaderRejectsUnknownNames) {
  expect_read_error(with(kExample, "/scratch/scope"_json_pointer, "forever"),
                    ErrorCode::kSerialization, "$.estimator.scratch.scope",
                    {"not a valid workspace scope", "`forever`"});
  expect_read_error(with(kExample, "/binding/storage/1"_json_pointer, "paged"),
                    ErrorCode::kSerialization, "$.estimator.binding.storage[1]",
                    {"not a valid dynamic storage profile", "`paged`"});
  expect_read_error(with(kExample, "/binding/storage/1"_json_pointer, "linear/contiguous"),
                    ErrorCode::kSerialization, "$.estimator.binding.storage[1]",
                    {"repeats storage profile `linear/contiguous`"});
}

TEST(DeclarativeEstimatorTest, ReaderRejectsSemanticViolationsWithPath) {
  expect_read_error(with(kExample, "/value_alignment_bytes"_json_pointer, 3),
                    ErrorCode::kInvalidExecutionPlan, "$.estimator.value_alignment_bytes",
                    {"value_alignment_bytes 3"});
  expect_read_error(with(kExample, "/scratch/scope"_json_pointer, "plan"),
                    ErrorCode::kInvalidExecutionPlan, "$.estimator.scratch",
                    {"scratch workspace has scope `plan`"});
  expect_read_error(with(kExample, "/persistent/scope"_json_pointer, "invocation"),
                    ErrorCode::kInvalidExecutionPlan, "$.estimator.persistent",
                    {"persistent workspace has scope `invocation`"});
  expect_read_error(with(kExample, "/scratch/formula/tokens/bytes_per_token"_json_pointer, 0),
                    ErrorCode::kInvalidExecutionPlan, "$.estimator.scratch",
                    {"bytes_per_token > 0"});
  expect_read_error(with(kExample, "/scratch/alignment_bytes"_json_pointer, 48),
                    ErrorCode::kInvalidExecutionPlan, "$.estimator.scratch", {"alignment 48"});
  expect_read_error(with(kExample, "/scratch/storage"_json_pointer, json::array()),
                    ErrorCode::kInvalidExecutionPlan, "$.estimator.scratch",
                    {"accepts no dynamic storage profile"});
}

TEST(DeclarativeEstimatorTest, CreateRequiresMatchingImplementationFingerprint) {
  const DeclarativeEstimateSpec spec = example_spec();
  OperationProviderDescriptor descriptor = descriptor_for(spec);
  EXPECT_TRUE(DeclarativeResourceEstimator::create(descriptor, spec));
  descriptor.resource_estimator_implementation_fingerprint = sha256_hex("old data");
  auto estimator = DeclarativeResourceEstimator::create(descriptor, spec);
  ASSERT_FALSE(estimator);
  EXPECT_EQ(estimator.error().code(), ErrorCode::kInvalidExecutionPlan);
  EXPECT_THAT(estimator.error().message(), HasSubstr("provider `provider.main.remote`"));
  EXPECT_THAT(estimator.error().message(), HasSubstr("estimator `estimator.declarative`"));
  EXPECT_THAT(estimator.error().message(),
              HasSubstr(declarative_estimator_implementation_fingerprint(spec)));
}

TEST(DeclarativeEstimatorTest, CreateRejectsInvalidSpec) {
  DeclarativeEstimateSpec spec = example_spec();
  spec.value_alignment_bytes = 3;
  auto estimator = DeclarativeResourceEstimator::create(descriptor_for(spec), spec);
  ASSERT_FALSE(estimator);
  EXPECT_THAT(estimator.error().message(), HasSubstr("provider `provider.main.remote`"));
  EXPECT_THAT(estimator.error().message(), HasSubstr("value_alignment_bytes 3"));
}

TEST(DeclarativeEstimatorTest, CreateRejectsInvalidDescriptor) {
  const DeclarativeEstimateSpec spec = example_spec();
  OperationProviderDescriptor descriptor = descriptor_for(spec);
  descriptor.resource_estimator_version = {0, 1};
  EXPECT_FALSE(DeclarativeResourceEstimator::create(descriptor, spec));
}

TEST(DeclarativeEstimatorTest, EstimateEchoesIdentityAndInput) {
  const DeclarativeEstimateSpec spec = example_spec();
  const DeclarativeResourceEstimator estimator =
      unwrap(DeclarativeResourceEstimator::create(descriptor_for(spec), spec));
  const OperationDescriptor operation = testing::synthetic_operation();
  const OperationResourceEstimateRequest request = request_for(&operation);
  const OperationResourceEstimator& as_interface = estimator;
  auto estimate = as_interface.estimate_resources(request);
  ASSERT_TRUE(estimate) << estimate.error().to_string();
  EXPECT_EQ(estimate->estimator_id, "estimator.declarative");
  EXPECT_EQ(estimate->estimator_version, (ContractVersion{1, 0}));
  EXPECT_EQ(estimate->estimator_implementation_fingerprint,
            declarative_estimator_implementation_fingerprint(spec));
  EXPECT_EQ(estimate->claimed_input_fingerprint, request.input_fingerprint);
  EXPECT_EQ(estimate->value_alignment_bytes, 64u);
  EXPECT_EQ(estimate->scratch, spec.scratch);
  EXPECT_EQ(estimate->binding, spec.binding);
  EXPECT_EQ(estimate->persistent, spec.persistent);

  // The core accepts the echoed estimate as a trusted plan.
  auto plan = ProviderResourcePlan::from_provider_output(as_interface.descriptor(),
                                                         request.input_fingerprint, *estimate);
  ASSERT_TRUE(plan) << plan.error().to_string();
  EXPECT_EQ(plan->value_alignment_bytes(), 64u);
  EXPECT_EQ(plan->persistent()->bytes_for(8, 1024).value(), 4096u * 32u);
}

TEST(DeclarativeEstimatorTest, EstimateRejectsForeignRequests) {
  const DeclarativeEstimateSpec spec = example_spec();
  const DeclarativeResourceEstimator estimator =
      unwrap(DeclarativeResourceEstimator::create(descriptor_for(spec), spec));
  const OperationDescriptor operation = testing::synthetic_operation();
  auto foreign = estimator.estimate_resources(request_for(&operation, "provider.other"));
  ASSERT_FALSE(foreign);
  EXPECT_THAT(foreign.error().message(), HasSubstr("`provider.main.remote`"));
  EXPECT_THAT(foreign.error().message(), HasSubstr("`provider.other`"));
  EXPECT_THAT(foreign.error().message(), HasSubstr("node `node.main`"));

  const OperationDescriptor other = testing::synthetic_operation("operation.other");
  auto wrong_operation = estimator.estimate_resources(request_for(&other));
  ASSERT_FALSE(wrong_operation);
  EXPECT_THAT(wrong_operation.error().message(), HasSubstr("`operation.other`"));
  EXPECT_FALSE(estimator.estimate_resources(request_for(nullptr)));
}

}  // namespace declarative_estimator_test
}  // namespace ferrite
