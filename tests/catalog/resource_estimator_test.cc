#include "ferrite/catalog/resource_estimator.h"

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ferrite/core/tensor_json.h"

#include "ferrite/catalog/resource_estimate.h"
#include "ferrite/catalog/canonical_encoding.h"
#include "ferrite/core/canonical_encoder.h"
#include "ferrite/core/fingerprint.h"
#include "support/fixtures.h"

namespace ferrite {
namespace resource_estimator_test {

using ::testing::HasSubstr;
using testing::unwrap;

const std::string kImplementation = sha256_hex("estimator implementation");
const std::string kInput = sha256_hex("estimator input");
const std::string kFamily = sha256_hex("prepared family");

OperationProviderDescriptor provider_descriptor() {
  OperationProviderDescriptor descriptor{
      .provider_id = ProviderId::literal("provider.main.reference"),
      .operation_id = OperationId::literal("operation.main"),
      .operation_fingerprint = unwrap(testing::synthetic_operation().fingerprint()),
      .provider_implementation_fingerprint = sha256_hex("provider implementation"),
      .version = {1, 0},
      .device_id = DeviceId::literal("device.cpu"),
      .capabilities = {CapabilityId::literal("capability.compute")},
      .accepted_weight_formats = {},
      .accepted_quantization_formats = {},
      .dynamic_storage_bindings = {{ValueBindingRole::kOutput, 0,
                                    DynamicStorageRequirement::contiguous()}},
      .resource_estimator_id = "estimator.main",
      .resource_estimator_version = {1, 2},
      .resource_estimator_implementation_fingerprint = kImplementation};
  return descriptor;
}

ProviderWorkspaceRequirement workspace(ProviderWorkspaceScope scope,
                                       ProviderWorkspaceSizeFormula formula = WorkspaceFixed{64}) {
  return ProviderWorkspaceRequirement{formula, 16, scope, DynamicStorageRequirement::contiguous()};
}

OperationResourceEstimate good_estimate() {
  return OperationResourceEstimate{
      .estimator_id = "estimator.main",
      .estimator_version = {1, 2},
      .estimator_implementation_fingerprint = kImplementation,
      .claimed_input_fingerprint = kInput,
      .value_alignment_bytes = 64,
      .scratch = workspace(ProviderWorkspaceScope::kInvocation, WorkspaceTokens{128}),
      .binding = std::nullopt,
      .persistent = workspace(ProviderWorkspaceScope::kSequence)};
}

Result<ProviderResourcePlan> plan_from(const OperationResourceEstimate& estimate,
                                       const OperationProviderDescriptor& descriptor =
                                           provider_descriptor(),
                                       const std::string& input = kInput) {
  return ProviderResourcePlan::from_provider_output(descriptor, input, estimate);
}

template <class T>
void expect_plan_error(const Result<T>& result, std::initializer_list<std::string_view> needles) {
  ASSERT_FALSE(result.has_value()) << "expected an error containing " << *needles.begin();
  EXPECT_EQ(result.error().code(), ErrorCode::kInvalidExecutionPlan) << result.error().to_string();
  for (std::string_view needle : needles) {
    EXPECT_THAT(result.error().message(), HasSubstr(std::string(needle)));
  }
}

// ---- ProviderResourcePlan --------------------------------------------------------------

TEST(ProviderResourcePlanTest, CopiesTrustedFieldsFromDescriptor) {
  auto plan = plan_from(good_estimate());
  ASSERT_TRUE(plan) << plan.error().to_string();
  EXPECT_EQ(plan->provider_id(), ProviderId::literal("provider.main.reference"));
  EXPECT_EQ(plan->estimator_id(), "estimator.main");
  EXPECT_EQ(plan->estimator_version(), (ContractVersion{1, 2}));
  EXPECT_EQ(plan->estimator_implementation_fingerprint(), kImplementation);
  EXPECT_EQ(plan->estimator_input_fingerprint(), kInput);
  EXPECT_EQ(plan->value_alignment_bytes(), 64u);
  EXPECT_EQ(plan->scratch(), good_estimate().scratch);
  EXPECT_FALSE(plan->binding().has_value());
  EXPECT_EQ(plan->persistent(), good_estimate().persistent);
  EXPECT_TRUE(is_canonical_sha256(plan->estimate_fingerprint()));
  EXPECT_TRUE(plan->validate_shape());
}

TEST(ProviderResourcePlanTest, RejectsWrongEstimatorId) {
  OperationResourceEstimate estimate = good_estimate();
  estimate.estimator_id = "estimator.other";
  auto plan = plan_from(estimate);
  expect_plan_error(plan, {"provider `provider.main.reference`", "estimator `estimator.other`",
                           "registers estimator `estimator.main`"});
  EXPECT_EQ(plan.error().fields().at("provider_id"), "provider.main.reference");
}

TEST(ProviderResourcePlanTest, RejectsWrongEstimatorVersion) {
  OperationResourceEstimate estimate = good_estimate();
  estimate.estimator_version = {1, 3};
  expect_plan_error(plan_from(estimate), {"provider `provider.main.reference`",
                                          "`estimator.main`", "version 1.3",
                                          "registers version 1.2"});
}

TEST(ProviderResourcePlanTest, RejectsWrongImplementationFingerprint) {
  OperationResourceEstimate estimate = good_estimate();
  estimate.estimator_implementation_fingerprint = sha256_hex("other implementation");
  expect_plan_error(plan_from(estimate), {"provider `provider.main.reference`",
                                          "`estimator.main`", "implementation fingerprint",
                                          kImplementation});
}

TEST(ProviderResourcePlanTest, RejectsWrongInputClaim) {
  OperationResourceEstimate estimate = good_estimate();
  estimate.claimed_input_fingerprint = sha256_hex("stale input");
  expect_plan_error(plan_from(estimate), {"provider `provider.main.reference`",
                                          "claims input fingerprint", "core computed", kInput});
}

TEST(ProviderResourcePlanTest, RejectsNonPowerOfTwoAlignment) {
  OperationResourceEstimate estimate = good_estimate();
  estimate.value_alignment_bytes = 3;
  expect_plan_error(plan_from(estimate), {"provider `provider.main.reference`",
                                          "`estimator.main`", "value_alignment_bytes 3"});
  estimate.value_alignment_bytes = 0;
  expect_plan_error(plan_from(estimate), {"value_alignment_bytes 0"});
}

TEST(ProviderResourcePlanTest, RejectsPlanScopedScratch) {
  OperationResourceEstimate estimate = good_estimate();
  estimate.scratch = workspace(ProviderWorkspaceScope::kPlan);
  expect_plan_error(plan_from(estimate), {"provider `provider.main.reference`",
                                          "scratch workspace with scope `plan`",
                                          "must be invocation"});
}

TEST(ProviderResourcePlanTest, RejectsNonInvocationBinding) {
  OperationResourceEstimate estimate = good_estimate();
  estimate.binding = workspace(ProviderWorkspaceScope::kStep);
  expect_plan_error(plan_from(estimate), {"binding workspace with scope `step`"});
}

TEST(ProviderResourcePlanTest, RejectsInvocationPersistent) {
  OperationResourceEstimate estimate = good_estimate();
  estimate.persistent = workspace(ProviderWorkspaceScope::kInvocation);
  expect_plan_error(plan_from(estimate), {"persistent workspace with scope `invocation`"});
}

// An estimate handed over (moved) gives the plan a copied one gives, and is
// checked the same way: a mismatched estimator is refused either way.
TEST(ProviderResourcePlanTest, AMovedEstimateGivesTheCopiedEstimatesPlan) {
  const OperationResourceEstimate estimate = good_estimate();
  auto copied = plan_from(estimate);
  ASSERT_TRUE(copied) << copied.error().to_string();
  auto moved = ProviderResourcePlan::from_provider_output(provider_descriptor(), kInput,
                                                          good_estimate());
  ASSERT_TRUE(moved) << moved.error().to_string();
  EXPECT_EQ(*moved, *copied);
  EXPECT_EQ(moved->estimate_fingerprint(), copied->estimate_fingerprint());
  ASSERT_TRUE(moved->scratch().has_value());
  EXPECT_EQ(*moved->scratch(), *estimate.scratch);
  OperationResourceEstimate other = good_estimate();
  other.estimator_id = "estimator.other";
  expect_plan_error(ProviderResourcePlan::from_provider_output(provider_descriptor(), kInput,
                                                               std::move(other)),
                    {"estimator `estimator.other`", "registers estimator `estimator.main`"});
}

// A plan re-issued with another input fingerprint is the plan its estimate
// echoing that fingerprint gives, estimate fingerprint included (it covers
// the input fingerprint); the original keeps its own.
TEST(ProviderResourcePlanTest, AReissuedPlanIsTheEstimatesPlanForTheNewInput) {
  const std::string other_input = sha256_hex("other input");
  auto original = plan_from(good_estimate());
  ASSERT_TRUE(original) << original.error().to_string();
  const std::string original_estimate = original->estimate_fingerprint();
  OperationResourceEstimate echoing = good_estimate();
  echoing.claimed_input_fingerprint = other_input;
  auto expected = plan_from(echoing, provider_descriptor(), other_input);
  ASSERT_TRUE(expected) << expected.error().to_string();
  const ProviderResourcePlan reissued = original->with_input_fingerprint(other_input);
  EXPECT_EQ(reissued, *expected);
  EXPECT_EQ(reissued.estimator_input_fingerprint(), other_input);
  EXPECT_EQ(reissued.estimate_fingerprint(), expected->estimate_fingerprint());
  EXPECT_NE(reissued.estimate_fingerprint(), original_estimate);
  EXPECT_EQ(original->estimate_fingerprint(), original_estimate);
  EXPECT_EQ(original->estimator_input_fingerprint(), kInput);
  EXPECT_TRUE(reissued.validate_fields());
  // A plan without workspaces keeps no estimate fingerprint: derived each time.
  OperationResourceEstimate bare = good_estimate();
  bare.scratch.reset();
  bare.persistent.reset();
  auto plain = plan_from(bare);
  ASSERT_TRUE(plain) << plain.error().to_string();
  bare.claimed_input_fingerprint = other_input;
  auto plain_expected = plan_from(bare, provider_descriptor(), other_input);
  ASSERT_TRUE(plain_expected) << plain_expected.error().to_string();
  EXPECT_EQ(plain->with_input_fingerprint(other_input).estimate_fingerprint(),
            plain_expected->estimate_fingerprint());
}

// A plan's workspaces are kept apart and shared by its copies; plans still
// compare them by value: made apart from equal estimates they are equal, and
// a workspace that differs, or one that only one plan has, makes them differ.
TEST(ProviderResourcePlanTest, PlansCompareTheirWorkspacesByValue) {
  const ProviderResourcePlan first = unwrap(plan_from(good_estimate()));
  const ProviderResourcePlan second = unwrap(plan_from(good_estimate()));
  EXPECT_EQ(first, second);
  const ProviderResourcePlan copy = first;  // NOLINT(performance-unnecessary-copy-initialization)
  EXPECT_EQ(copy, first);
  EXPECT_EQ(&*copy.scratch(), &*first.scratch());  // shared, not copied
  OperationResourceEstimate wider = good_estimate();
  wider.scratch = workspace(ProviderWorkspaceScope::kInvocation, WorkspaceTokens{256});
  EXPECT_NE(unwrap(plan_from(wider)), first);
  OperationResourceEstimate with_binding = good_estimate();
  with_binding.binding = workspace(ProviderWorkspaceScope::kInvocation);
  EXPECT_NE(unwrap(plan_from(with_binding)), first);
  OperationResourceEstimate bare = good_estimate();
  bare.scratch.reset();
  bare.persistent.reset();
  const ProviderResourcePlan plain = unwrap(plan_from(bare));
  EXPECT_FALSE(plain.scratch().has_value());
  EXPECT_FALSE(plain.binding().has_value());
  EXPECT_FALSE(plain.persistent().has_value());
  EXPECT_NE(plain, first);
  EXPECT_EQ(plain, unwrap(plan_from(bare)));
  EXPECT_EQ(plain.to_json()["scratch"], nlohmann::json());
}

TEST(ProviderResourcePlanTest, RejectsInvalidWorkspace) {
  OperationResourceEstimate estimate = good_estimate();
  estimate.scratch = workspace(ProviderWorkspaceScope::kInvocation, WorkspaceTokens{0});
  expect_plan_error(plan_from(estimate), {"invalid scratch workspace", "bytes_per_token > 0"});
}

TEST(ProviderResourcePlanTest, RejectsNonPortableEstimatorId) {
  OperationProviderDescriptor descriptor = provider_descriptor();
  descriptor.resource_estimator_id = "estimator main";
  OperationResourceEstimate estimate = good_estimate();
  estimate.estimator_id = "estimator main";
  expect_plan_error(plan_from(estimate, descriptor), {"invalid estimator id", "non-portable"});
  descriptor.resource_estimator_id = std::string(161, 'e');
  estimate.estimator_id = descriptor.resource_estimator_id;
  expect_plan_error(plan_from(estimate, descriptor), {"invalid estimator id", "160"});
}

TEST(ProviderResourcePlanTest, RejectsUnstableEstimatorVersion) {
  OperationProviderDescriptor descriptor = provider_descriptor();
  descriptor.resource_estimator_version = {0, 9};
  OperationResourceEstimate estimate = good_estimate();
  estimate.estimator_version = {0, 9};
  expect_plan_error(plan_from(estimate, descriptor), {"`estimator.main`", "unstable", "0.9"});
}

TEST(ProviderResourcePlanTest, RejectsNonCanonicalImplementationFingerprint) {
  OperationProviderDescriptor descriptor = provider_descriptor();
  descriptor.resource_estimator_implementation_fingerprint = "ABC";
  OperationResourceEstimate estimate = good_estimate();
  estimate.estimator_implementation_fingerprint = "ABC";
  expect_plan_error(plan_from(estimate, descriptor),
                    {"implementation fingerprint `ABC`", "canonical sha256"});
}

// Plans of one estimator share its checked text (a plan copies no string);
// a descriptor with the same estimator id but other fields gets its own,
// checked again, and a bad one is refused whatever came before it.
TEST(ProviderResourcePlanTest, PlansOfOneEstimatorShareItsCheckedText) {
  const ProviderResourcePlan first = unwrap(plan_from(good_estimate()));
  const ProviderResourcePlan second = unwrap(plan_from(good_estimate()));
  EXPECT_EQ(&first.estimator_id(), &second.estimator_id());
  EXPECT_EQ(first, second);

  OperationProviderDescriptor descriptor = provider_descriptor();
  descriptor.resource_estimator_implementation_fingerprint = sha256_hex("estimator.main.v2");
  OperationResourceEstimate estimate = good_estimate();
  estimate.estimator_implementation_fingerprint =
      descriptor.resource_estimator_implementation_fingerprint;
  const ProviderResourcePlan other = unwrap(plan_from(estimate, descriptor));
  EXPECT_EQ(other.estimator_id(), first.estimator_id());
  EXPECT_EQ(other.estimator_implementation_fingerprint(), sha256_hex("estimator.main.v2"));
  EXPECT_NE(other, first);

  descriptor.resource_estimator_implementation_fingerprint = "ABC";
  estimate.estimator_implementation_fingerprint = "ABC";
  expect_plan_error(plan_from(estimate, descriptor),
                    {"implementation fingerprint `ABC`", "canonical sha256"});
  descriptor.resource_estimator_version = {0, 9};
  descriptor.resource_estimator_implementation_fingerprint =
      first.estimator_implementation_fingerprint();
  estimate = good_estimate();
  estimate.estimator_version = {0, 9};
  expect_plan_error(plan_from(estimate, descriptor), {"unstable", "0.9"});

  const ProviderResourcePlan again = unwrap(plan_from(good_estimate()));
  EXPECT_EQ(again, first);
  EXPECT_EQ(again.estimator_implementation_fingerprint(),
            first.estimator_implementation_fingerprint());
}

TEST(ProviderResourcePlanTest, RejectsNonCanonicalInputFingerprint) {
  OperationResourceEstimate estimate = good_estimate();
  estimate.claimed_input_fingerprint = "not-a-sha";
  expect_plan_error(plan_from(estimate, provider_descriptor(), "not-a-sha"),
                    {"input fingerprint `not-a-sha`", "canonical sha256"});
}

TEST(ProviderResourcePlanTest, EstimateFingerprintIsStableAndCoversEveryField) {
  const ProviderResourcePlan base = unwrap(plan_from(good_estimate()));
  EXPECT_EQ(base, unwrap(plan_from(good_estimate())));
  EXPECT_EQ(base.estimate_fingerprint(), unwrap(plan_from(good_estimate())).estimate_fingerprint());

  // The fingerprint is the canonical fingerprint of the JSON without itself.
  nlohmann::json material = base.to_json();
  EXPECT_EQ(material["estimate_fingerprint"], base.estimate_fingerprint());
  material.erase("estimate_fingerprint");
  EXPECT_EQ(canonical_fingerprint(material), base.estimate_fingerprint());

  using Mutation = std::function<void(OperationProviderDescriptor&, OperationResourceEstimate&,
                                      std::string&)>;
  const std::vector<std::pair<std::string, Mutation>> mutations = {
      {"provider_id",
       [](auto& d, auto&, auto&) { d.provider_id = ProviderId::literal("provider.other"); }},
      {"estimator_id",
       [](auto& d, auto& e, auto&) { d.resource_estimator_id = e.estimator_id = "estimator.b"; }},
      {"estimator_version",
       [](auto& d, auto& e, auto&) {
         d.resource_estimator_version = e.estimator_version = {1, 3};
       }},
      {"estimator_implementation_fingerprint",
       [](auto& d, auto& e, auto&) {
         d.resource_estimator_implementation_fingerprint =
             e.estimator_implementation_fingerprint = sha256_hex("implementation b");
       }},
      {"estimator_input_fingerprint",
       [](auto&, auto& e, auto& input) {
         e.claimed_input_fingerprint = input = sha256_hex("input b");
       }},
      {"value_alignment_bytes", [](auto&, auto& e, auto&) { e.value_alignment_bytes = 128; }},
      {"scratch formula",
       [](auto&, auto& e, auto&) {
         e.scratch = workspace(ProviderWorkspaceScope::kInvocation, WorkspaceTokens{129});
       }},
      {"scratch absent", [](auto&, auto& e, auto&) { e.scratch = std::nullopt; }},
      {"scratch alignment", [](auto&, auto& e, auto&) { e.scratch->alignment_bytes = 32; }},
      {"scratch storage",
       [](auto&, auto& e, auto&) {
         e.scratch->storage.accepted_profiles.insert(
             unwrap(DynamicStorageProfile::parse("fixed_block:4096/contiguous")));
       }},
      {"binding",
       [](auto&, auto& e, auto&) { e.binding = workspace(ProviderWorkspaceScope::kInvocation); }},
      {"persistent scope",
       [](auto&, auto& e, auto&) { e.persistent->scope = ProviderWorkspaceScope::kRequest; }},
      {"persistent absent", [](auto&, auto& e, auto&) { e.persistent = std::nullopt; }},
  };
  std::set<std::string> seen{base.estimate_fingerprint()};
  for (const auto& [name, mutate] : mutations) {
    OperationProviderDescriptor descriptor = provider_descriptor();
    OperationResourceEstimate estimate = good_estimate();
    std::string input = kInput;
    mutate(descriptor, estimate, input);
    auto plan = plan_from(estimate, descriptor, input);
    ASSERT_TRUE(plan) << name << ": " << plan.error().to_string();
    EXPECT_TRUE(seen.insert(plan->estimate_fingerprint()).second)
        << "fingerprint did not change with " << name;
    EXPECT_TRUE(plan->validate_shape()) << name;
  }
}

// The estimate fingerprint (streamed) is the canonical digest of the plan's
// JSON without that member, for plans with and without each workspace.
TEST(ProviderResourcePlanTest, EstimateFingerprintIsTheDigestOfItsFields) {
  std::vector<OperationResourceEstimate> estimates{good_estimate()};
  estimates.push_back(good_estimate());
  estimates.back().scratch = std::nullopt;
  estimates.back().persistent = std::nullopt;
  estimates.push_back(good_estimate());
  estimates.back().binding = workspace(ProviderWorkspaceScope::kInvocation, WorkspaceTokens{7});
  for (const OperationResourceEstimate& estimate : estimates) {
    const ProviderResourcePlan plan = unwrap(plan_from(estimate));
    nlohmann::json material = plan.to_json();
    material.erase("estimate_fingerprint");
    EXPECT_EQ(plan.estimate_fingerprint(), sha256_hex(canonical_json(material)));
    EXPECT_TRUE(plan.validate_shape());
  }
}

TEST(ProviderResourcePlanTest, Json) {
  const ProviderResourcePlan plan = unwrap(plan_from(good_estimate()));
  const nlohmann::json json = plan.to_json();
  EXPECT_EQ(json["provider_id"], "provider.main.reference");
  EXPECT_EQ(json["estimator_id"], "estimator.main");
  EXPECT_EQ(json["estimator_version"], "1.2");
  EXPECT_EQ(json["estimator_implementation_fingerprint"], kImplementation);
  EXPECT_EQ(json["estimator_input_fingerprint"], kInput);
  EXPECT_EQ(json["value_alignment_bytes"], 64);
  EXPECT_EQ(json["scratch"], good_estimate().scratch->to_json());
  EXPECT_TRUE(json["binding"].is_null());
  EXPECT_EQ(json["persistent"], good_estimate().persistent->to_json());
  EXPECT_EQ(json.size(), 10u);
}

// ---- estimator input fingerprint -------------------------------------------------------

ResolvedTensorSpec tensor(ElementType type = ElementType::kF32) {
  return unwrap(ResolvedTensorSpec::create({4}, type, ContiguousLayout{}));
}

// The synthetic node's bindings: input, weight, state, output. `input_offset` moves the input.
std::vector<ResolvedValueBinding> node_values(uint64_t input_offset = 0) {
  const ResourceId arena = ResourceId::literal("resource.activations");
  const ResourceId weights = ResourceId::literal("resource.weights");
  const ResourceId state = ResourceId::literal("resource.state");
  std::vector<ResolvedValueBinding> values;
  values.push_back(unwrap(ResolvedValueBinding::create(
      testing::value("value.input"), ValueBindingRole::kInput, 0, tensor(), TensorAccess::kRead,
      NoAlias{}, BufferUsage::kActivations, std::nullopt,
      unwrap(ResolvedValueStorage::single(arena, input_offset, 16, ElementType::kF32)))));
  values.push_back(unwrap(ResolvedValueBinding::create(
      testing::value("value.weight"), ValueBindingRole::kInput, 1, tensor(), TensorAccess::kRead,
      NoAlias{}, BufferUsage::kWeights,
      unwrap(ResolvedWeightBinding::from_schema(testing::dense_weight_schema(),
                                                WeightId::literal("weight.matrix"))),
      unwrap(ResolvedValueStorage::composite({ResolvedStorageComponent{
          WeightId::literal("weight.component"), weights, 0, 16, ElementType::kF32}})))));
  values.push_back(unwrap(ResolvedValueBinding::create(
      testing::value("value.state"), ValueBindingRole::kInput, 2, tensor(ElementType::kU8),
      TensorAccess::kRead, NoAlias{}, BufferUsage::kState, std::nullopt,
      unwrap(ResolvedValueStorage::single(state, 0, 4, ElementType::kU8)))));
  values.push_back(unwrap(ResolvedValueBinding::create(
      testing::value("value.output"), ValueBindingRole::kOutput, 0, tensor(),
      TensorAccess::kWrite, NoAlias{}, BufferUsage::kActivations, std::nullopt,
      unwrap(ResolvedValueStorage::single(arena, 64, 16, ElementType::kF32)))));
  return values;
}

struct InputArgs {
  std::string family = kFamily;
  std::string operation = unwrap(testing::synthetic_operation().fingerprint());
  NodeId node = NodeId::literal("node.main");
  OperationId operation_id = OperationId::literal("operation.main");
  ContractVersion version{1, 0};
  std::map<AttributeId, SemanticValue> attributes;
  ProviderId provider = ProviderId::literal("provider.main.reference");
  std::vector<ResolvedValueBinding> values = node_values();
  std::set<CapabilityId> capabilities{CapabilityId::literal("capability.compute")};
  std::set<WeightFormatId> weight_formats;
  std::set<QuantizationFormatId> quantization_formats;

  Result<std::string> fingerprint() const {
    return estimator_input_fingerprint(family, operation, node, operation_id, version, attributes,
                                       provider, values, capabilities, weight_formats,
                                       quantization_formats);
  }
};

TEST(EstimatorInputTest, FingerprintIsCanonicalAndDeterministic) {
  auto a = InputArgs{}.fingerprint();
  ASSERT_TRUE(a) << a.error().to_string();
  EXPECT_TRUE(is_canonical_sha256(*a));
  EXPECT_EQ(*a, InputArgs{}.fingerprint().value());
}

TEST(EstimatorInputTest, ChangesWhenAStorageOffsetChanges) {
  InputArgs moved;
  moved.values = node_values(32);
  EXPECT_NE(InputArgs{}.fingerprint().value(), moved.fingerprint().value());
}

// One change to each input of an estimator input, by name.
using InputMutation = std::function<void(InputArgs&)>;
std::vector<std::pair<std::string, InputMutation>> input_mutations() {
  return {
      {"family", [](InputArgs& a) { a.family = sha256_hex("family b"); }},
      {"operation fingerprint", [](InputArgs& a) { a.operation = sha256_hex("operation b"); }},
      {"node", [](InputArgs& a) { a.node = NodeId::literal("node.other"); }},
      {"operation id", [](InputArgs& a) { a.operation_id = OperationId::literal("operation.b"); }},
      {"version", [](InputArgs& a) { a.version = {1, 1}; }},
      {"attributes",
       [](InputArgs& a) { a.attributes[AttributeId::literal("attr.eps")] = SemanticUnsigned{1}; }},
      {"provider", [](InputArgs& a) { a.provider = ProviderId::literal("provider.b"); }},
      {"values", [](InputArgs& a) { a.values.pop_back(); }},
      {"capabilities",
       [](InputArgs& a) { a.capabilities.insert(CapabilityId::literal("capability.b")); }},
      {"weight formats",
       [](InputArgs& a) { a.weight_formats.insert(WeightFormatId::literal("format.b")); }},
      {"quantization formats",
       [](InputArgs& a) {
         a.quantization_formats.insert(QuantizationFormatId::literal("quant.b"));
       }},
  };
}

TEST(EstimatorInputTest, ChangesWithEveryInput) {
  const auto mutations = input_mutations();
  std::set<std::string> seen{InputArgs{}.fingerprint().value()};
  for (const auto& [name, mutate] : mutations) {
    InputArgs args;
    mutate(args);
    auto fingerprint = args.fingerprint();
    ASSERT_TRUE(fingerprint) << name << ": " << fingerprint.error().to_string();
    EXPECT_TRUE(seen.insert(*fingerprint).second) << "fingerprint did not change with " << name;
  }
}

// The streamed fingerprint hashes exactly the bytes of the document it
// replaced (estimator_input_material), on varied inputs: attributes of every
// semantic kind (text needing escapes and non-ASCII), a weight contract,
// composite storage, extra capabilities and formats, other offsets.
TEST(EstimatorInputTest, StreamedFingerprintEqualsTheCanonicalMaterialDigest) {
  using Mutation = std::function<void(InputArgs&)>;
  const std::vector<std::pair<std::string, Mutation>> variants = {
      {"default", [](InputArgs&) {}},
      {"attributes",
       [](InputArgs& a) {
         a.attributes[AttributeId::literal("attr.b")] = SemanticBool{true};
         a.attributes[AttributeId::literal("attr.i")] = SemanticInteger{-7};
         a.attributes[AttributeId::literal("attr.u")] = SemanticUnsigned{UINT64_MAX};
         a.attributes[AttributeId::literal("attr.t")] = SemanticText{"quote\" \\ tab\t caf\xc3\xa9"};
         a.attributes[AttributeId::literal("attr.v")] = SemanticIntegers{{-1, 0, 1}};
       }},
      {"offsets", [](InputArgs& a) { a.values = node_values(4096); }},
      {"no values", [](InputArgs& a) { a.values.clear(); }},
      {"sets",
       [](InputArgs& a) {
         a.capabilities.insert(CapabilityId::literal("capability.b"));
         a.weight_formats.insert(WeightFormatId::literal("format.b"));
         a.quantization_formats.insert(QuantizationFormatId::literal("quant.a"));
         a.quantization_formats.insert(QuantizationFormatId::literal("quant.b"));
       }},
      {"version", [](InputArgs& a) { a.version = {3, 14}; }},
  };
  for (const auto& [name, mutate] : variants) {
    InputArgs a;
    mutate(a);
    const nlohmann::json material = estimator_input_material(
        a.family, a.operation, a.node, a.operation_id, a.version, a.attributes, a.provider,
        a.values, a.capabilities, a.weight_formats, a.quantization_formats);
    auto streamed = a.fingerprint();
    ASSERT_TRUE(streamed) << name << ": " << streamed.error().to_string();
    EXPECT_EQ(*streamed, sha256_hex(canonical_json(material))) << name;
    for (const ResolvedValueBinding& binding : a.values) {
      CanonicalText text;
      encode_canonical(binding, text);
      EXPECT_EQ(text.text(), canonical_json(binding.to_json())) << name << " " << binding.describe();
      CanonicalText storage;
      encode_canonical(binding.storage(), storage);
      EXPECT_EQ(storage.text(), canonical_json(binding.storage().to_json())) << name;
    }
  }
}

// One node's input, encoded once, gives each provider the fingerprint of the
// whole document with that provider's id — and hashes nothing until a digest
// is read; the core's trust check accepts an echo of its handle unhashed.
TEST(EstimatorInputTest, NodeInputGivesEachProviderItsDeferredFingerprint) {
  InputArgs a;
  a.attributes[AttributeId::literal("attr.t")] = SemanticText{"quote\" \\ caf\xc3\xa9"};
  auto input = NodeEstimatorInput::encode(a.family, a.operation, a.node, a.operation_id,
                                          a.version, a.attributes,
                                          encode_canonical_values(a.values), a.capabilities,
                                          a.weight_formats, a.quantization_formats);
  ASSERT_TRUE(input) << input.error().to_string();
  // The same input keeping the bindings, encoded only when a digest is read.
  auto shared = NodeEstimatorInput::encode_sharing_values(
      a.family, a.operation, a.node, a.operation_id, a.version, a.attributes,
      std::make_shared<const std::vector<ResolvedValueBinding>>(a.values), {},
      a.capabilities, a.weight_formats, a.quantization_formats);
  ASSERT_TRUE(shared) << shared.error().to_string();
  for (const char* provider : {"provider.main.reference", "provider.b", "provider.zz.last"}) {
    InputArgs b = a;
    b.provider = ProviderId::literal(provider);
    DeferredSha256 digest = (*input)->fingerprint_for(b.provider);
    DeferredSha256 from_shared = (*shared)->fingerprint_for(b.provider);
    EXPECT_FALSE(digest.computed()) << provider;
    EXPECT_FALSE(from_shared.computed()) << provider;
    const nlohmann::json material = estimator_input_material(
        b.family, b.operation, b.node, b.operation_id, b.version, b.attributes, b.provider,
        b.values, b.capabilities, b.weight_formats, b.quantization_formats);
    EXPECT_EQ(digest.hex(), sha256_hex(canonical_json(material))) << provider;
    EXPECT_EQ(digest.hex(), b.fingerprint().value()) << provider;
    EXPECT_EQ(from_shared.hex(), digest.hex()) << provider;
  }
  EXPECT_FALSE(NodeEstimatorInput::encode_sharing_values(
      a.family, a.operation, a.node, a.operation_id, a.version, a.attributes, nullptr, {},
      a.capabilities, a.weight_formats, a.quantization_formats));

  // A later round lends the earlier one's head only when every head input is
  // the same: each variant's digest is the one computed from scratch.
  auto later_rounds = input_mutations();
  later_rounds.emplace_back("only the values moved",
                            [](InputArgs& b) { b.values = node_values(4096); });
  for (const auto& [name, mutate] : later_rounds) {
    InputArgs b = a;
    mutate(b);
    auto later = NodeEstimatorInput::encode_sharing_values(
        b.family, b.operation, b.node, b.operation_id, b.version, b.attributes,
        std::make_shared<const std::vector<ResolvedValueBinding>>(b.values), {},
        b.capabilities, b.weight_formats, b.quantization_formats, shared->get());
    ASSERT_TRUE(later) << name << ": " << later.error().to_string();
    EXPECT_EQ((*later)->fingerprint_for(b.provider).hex(), b.fingerprint().value()) << name;
  }

  OperationResourceEstimate estimate = good_estimate();
  const DeferredSha256 core = (*input)->fingerprint_for(a.provider);
  estimate.claimed_input_fingerprint = core;  // the estimator's echo: a copy of the handle
  auto plan = ProviderResourcePlan::from_provider_output(provider_descriptor(), core, estimate);
  ASSERT_TRUE(plan) << plan.error().to_string();
  EXPECT_FALSE(plan->estimator_input_digest().computed());
  EXPECT_EQ(plan->estimator_input_fingerprint(), a.fingerprint().value());
  EXPECT_TRUE(core.computed());  // read through the plan: the one shared digest
}

// A later round whose bindings only moved in storage takes the earlier
// input's head as it is: the digest is the one computed from scratch for
// the moved bindings. Anything but such bindings gets no input.
TEST(EstimatorInputTest, MovedValuesKeepTheHeadAndGiveTheDigestFromScratch) {
  InputArgs a;
  auto earlier = NodeEstimatorInput::encode_sharing_values(
      a.family, a.operation, a.node, a.operation_id, a.version, a.attributes,
      std::make_shared<const std::vector<ResolvedValueBinding>>(a.values), {},
      a.capabilities, a.weight_formats, a.quantization_formats);
  ASSERT_TRUE(earlier) << earlier.error().to_string();
  // The input moved; the weight binding is the very same (one shared contract).
  InputArgs b = a;
  b.values[0] = node_values(4096)[0];
  auto moved = NodeEstimatorInput::with_moved_values(
      **earlier, std::make_shared<const std::vector<ResolvedValueBinding>>(b.values));
  ASSERT_NE(moved, nullptr);
  EXPECT_EQ(moved->fingerprint_for(b.provider).hex(), b.fingerprint().value());
  EXPECT_NE(moved->fingerprint_for(b.provider).hex(), a.fingerprint().value());
  EXPECT_EQ((*earlier)->fingerprint_for(a.provider).hex(), a.fingerprint().value());

  // Another weight contract (equal, not the same), fewer values, none, or an
  // earlier input that holds its values encoded: no input.
  EXPECT_EQ(NodeEstimatorInput::with_moved_values(
                **earlier, std::make_shared<const std::vector<ResolvedValueBinding>>(
                               node_values(4096))),
            nullptr);
  std::vector<ResolvedValueBinding> fewer = b.values;
  fewer.pop_back();
  EXPECT_EQ(NodeEstimatorInput::with_moved_values(
                **earlier, std::make_shared<const std::vector<ResolvedValueBinding>>(fewer)),
            nullptr);
  EXPECT_EQ(NodeEstimatorInput::with_moved_values(**earlier, nullptr), nullptr);
  auto encoded = NodeEstimatorInput::encode(a.family, a.operation, a.node, a.operation_id,
                                            a.version, a.attributes,
                                            encode_canonical_values(a.values), a.capabilities,
                                            a.weight_formats, a.quantization_formats);
  ASSERT_TRUE(encoded) << encoded.error().to_string();
  EXPECT_EQ(NodeEstimatorInput::with_moved_values(
                **encoded, std::make_shared<const std::vector<ResolvedValueBinding>>(b.values)),
            nullptr);
}

// The hand-written encoders of tensors and alias policies write the bytes of
// the documents they replace, for every layout and alias kind.
TEST(EstimatorInputTest, StreamedTensorsAndAliasesEqualTheirDocuments) {
  const std::vector<ResolvedTensorLayout> layouts = {
      ContiguousLayout{}, StridedLayout{{64, 4}},
      BlockedLayout{{4, 4}, {1, 0}, BlockedPaddingExact{}},
      BlockedLayout{{4, 5}, {0, 1}, BlockedPaddingZeroFill{{8, 20}}}};
  for (const ResolvedTensorLayout& layout : layouts) {
    auto tensor = ResolvedTensorSpec::create({8, 16}, ElementType::kF16, layout);
    ASSERT_TRUE(tensor) << tensor.error().to_string();
    CanonicalText text;
    encode_canonical(*tensor, text);
    EXPECT_EQ(text.text(), canonical_json(tensor_spec_to_json(*tensor)));
  }
  for (const AliasPolicy& alias : {AliasPolicy{NoAlias{}}, AliasPolicy{MayAlias{3}},
                                   AliasPolicy{MustAlias{0}}}) {
    CanonicalText text;
    encode_canonical(alias, text);
    EXPECT_EQ(text.text(), canonical_json(alias_policy_to_json(alias)));
  }
}

// Workspace requirements, streamed into every estimate fingerprint, write the
// bytes of their documents for every formula kind, scope and profile set.
TEST(EstimatorInputTest, StreamedWorkspaceRequirementsEqualTheirDocuments) {
  auto paged = DynamicStorageProfile::parse("fixed_block:65536/paged:65536");
  ASSERT_TRUE(paged) << paged.error().to_string();
  const std::vector<ProviderWorkspaceSizeFormula> formulas = {
      WorkspaceFixed{4096}, WorkspaceActualSequences{128}, WorkspaceTokens{8192},
      WorkspaceAffine{1, 2, 3}, WorkspacePages{65536, 17}};
  for (const auto& formula : formulas) {
    for (auto scope : {ProviderWorkspaceScope::kInvocation, ProviderWorkspaceScope::kSequence}) {
      ProviderWorkspaceRequirement workspace{
          .formula = formula,
          .alignment_bytes = 64,
          .scope = scope,
          .storage = {{DynamicStorageProfile::linear_contiguous(), *paged}}};
      CanonicalText text;
      encode_canonical(workspace, text);
      EXPECT_EQ(text.text(), canonical_json(workspace.to_json()));
    }
  }
}

TEST(EstimatorInputTest, RejectsNonCanonicalFamilyFingerprint) {
  InputArgs args;
  args.family = std::string(64, 'A');
  expect_plan_error(args.fingerprint(),
                    {"node `node.main`", "provider `provider.main.reference`",
                     "prepared family fingerprint", "canonical sha256"});
}

TEST(EstimatorInputTest, RejectsNonCanonicalOperationFingerprint) {
  InputArgs args;
  args.operation = "deadbeef";
  expect_plan_error(args.fingerprint(),
                    {"node `node.main`", "operation `operation.main`", "`deadbeef`"});
}

// ---- estimate request ------------------------------------------------------------------

OperationResourceEstimateRequest make_request(const OperationDescriptor* operation) {
  // The request borrows its bindings: they live as long as the test program.
  static const std::vector<ResolvedValueBinding> kValues = node_values();
  return OperationResourceEstimateRequest{
      .node_id = NodeId::literal("node.main"),
      .operation = operation,
      .attributes = {},
      .provider_id = ProviderId::literal("provider.main.reference"),
      .values = kValues,
      .required_capabilities = {CapabilityId::literal("capability.compute")},
      .required_weight_formats = {},
      .required_quantization_formats = {},
      .input_fingerprint = InputArgs{}.fingerprint().value()};
}

TEST(EstimateRequestTest, ValidRequest) {
  const OperationDescriptor operation = testing::synthetic_operation();
  auto valid = make_request(&operation).validate();
  EXPECT_TRUE(valid) << valid.error().to_string();
}

TEST(EstimateRequestTest, RequiresOperation) {
  expect_plan_error(make_request(nullptr).validate(), {"node `node.main`", "no operation"});
}

TEST(EstimateRequestTest, RequiresOneBindingPerSlotInOrder) {
  const OperationDescriptor operation = testing::synthetic_operation();
  OperationResourceEstimateRequest request = make_request(&operation);
  request.values = request.values.first(request.values.size() - 1);
  expect_plan_error(request.validate(),
                    {"node `node.main`", "3 value bindings", "`operation.main`", "3 inputs"});
  request = make_request(&operation);
  std::vector<ResolvedValueBinding> swapped(request.values.begin(), request.values.end());
  std::swap(swapped[0], swapped[3]);
  request.values = swapped;
  expect_plan_error(request.validate(), {"node `node.main`", "output[0] `value.output`",
                                         "slot 0 is input[0]"});
}

TEST(EstimateRequestTest, RequiresCanonicalInputFingerprint) {
  const OperationDescriptor operation = testing::synthetic_operation();
  OperationResourceEstimateRequest request = make_request(&operation);
  request.input_fingerprint = "abc";
  expect_plan_error(request.validate(), {"node `node.main`", "input fingerprint `abc`"});
}

TEST(EstimateRequestTest, ValidatesAttributes) {
  const OperationDescriptor operation = testing::synthetic_operation();
  OperationResourceEstimateRequest request = make_request(&operation);
  request.attributes[AttributeId::literal("attr.unknown")] = SemanticBool{true};
  auto valid = request.validate();
  ASSERT_FALSE(valid);
  EXPECT_THAT(valid.error().message(), HasSubstr("node.main"));
}

}  // namespace resource_estimator_test
}  // namespace ferrite
