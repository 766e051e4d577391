// The remaining spec §12 acceptance cases for the plan compiler, end to end
// through ProgramPlanCompiler::compile / resolve / verify_plan_json:
// 6 (retention, readback, wire), 11-15 (extension drill), 16-21 (retain-all,
// weight materializers, measured approvals), 23 (estimator registry), 24 and
// 26 (provider preference and joint selection on compiled plans), 28 (alias
// graph) and 29 (state hazards on a compiled multi-node plan).
// Cases 1-2 live in tests/compiler/tensor_inference_test.cc; the others in
// the sibling tests of this folder.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ferrite/compiler/joint_selection.h"
#include "ferrite/compiler/value_placement.h"
#include "ferrite/core/fingerprint.h"
#include "ferrite/plan/plan_verify.h"
#include "plan/plan_test_support.h"

namespace ferrite {
namespace compiler_acceptance_test {

using ::testing::HasSubstr;
using nlohmann::json;
using plan_testing::CountingEstimator;
using plan_testing::PlanHarness;
using testing::contract;
using testing::dense;
using testing::node_id;
using testing::storage_at;
using testing::unwrap;
using testing::value;

// --- Builders for the small programs and catalogs these cases need ----------

// A one-output F32[4] operation with `inputs` F32[4] inputs and the synthetic
// operation's resources (so CountingEstimator's estimate fits it).
OperationDescriptor f32_operation(std::string_view id, size_t inputs, AliasPolicy alias = NoAlias{}) {
  OperationDescriptor op = testing::synthetic_operation(id);
  op.inputs.assign(inputs, contract({DimensionExact{4}}, {ElementType::kF32}));
  op.outputs = {contract({DimensionExact{4}}, {ElementType::kF32}, TensorAccess::kWrite, alias)};
  return op;
}

// Contiguous dynamic storage for every slot of `op` (weight slots are ignored
// by resolution, so declaring them is harmless).
std::vector<ProviderStorageBindingRequirement> all_slots(const OperationDescriptor& op) {
  std::vector<ProviderStorageBindingRequirement> slots;
  for (uint32_t i = 0; i < op.inputs.size(); ++i) {
    slots.push_back({ValueBindingRole::kInput, i, DynamicStorageRequirement::contiguous()});
  }
  for (uint32_t i = 0; i < op.outputs.size(); ++i) {
    slots.push_back({ValueBindingRole::kOutput, i, DynamicStorageRequirement::contiguous()});
  }
  return slots;
}

// A catalog with one provider per operation, each with its counting estimator.
struct Backend {
  CapabilityCatalog catalog;
  EstimatorRegistry estimators;
  std::map<std::string, std::shared_ptr<CountingEstimator>> counters;  // by provider id

  int calls(const std::string& provider) const { return counters.at(provider)->calls; }
  int total_calls() const {
    int total = 0;
    for (const auto& [id, c] : counters) total += c->calls;
    return total;
  }
};

Backend backend(const std::vector<std::pair<OperationDescriptor, std::string>>& ops,
                DeviceDescriptor dev = plan_testing::device()) {
  std::vector<OperationDescriptor> descriptors;
  std::vector<OperationProviderDescriptor> providers;
  std::vector<std::shared_ptr<const OperationResourceEstimator>> list;
  std::map<std::string, std::shared_ptr<CountingEstimator>> counters;
  for (const auto& [op, provider_id] : ops) {
    descriptors.push_back(op);
    auto p = plan_testing::provider(provider_id, op, all_slots(op));
    p.device_id = dev.id;
    providers.push_back(p);
    auto counter = std::make_shared<CountingEstimator>(p);
    counters.emplace(provider_id, counter);
    list.push_back(counter);
  }
  return Backend{unwrap(CapabilityCatalog::create(std::move(dev),
                                                  unwrap(OperationCatalog::create(descriptors)),
                                                  providers)),
                 unwrap(EstimatorRegistry::create(list)), std::move(counters)};
}

ProgramNode make_node(std::string_view id, std::string_view op, std::vector<ProgramValueId> inputs,
                      std::vector<ProgramValueId> outputs) {
  return ProgramNode{.id = node_id(id),
                     .operation_id = OperationId::literal(op),
                     .required_version = {1, 0},
                     .work = WorkFixed{},
                     .inputs = std::move(inputs),
                     .outputs = std::move(outputs),
                     .attributes = {}};
}

PreparedModelFamily family_of(std::vector<ProgramNode> nodes, std::vector<StateSpec> states,
                              std::vector<WeightReference> weights,
                              std::vector<ProgramValueId> outputs,
                              WeightSchema schema = testing::dense_weight_schema()) {
  const auto id = ModelFamilyId::literal("family.synthetic");
  auto program = unwrap(ModelProgram::create(id, {value("value.input")},
                                             {ProgramBlock{"block.main", std::move(nodes)}},
                                             std::move(states), std::move(weights),
                                             std::move(outputs)));
  return unwrap(PreparedModelFamily::create(id, json{{"width", 4}}, std::move(schema),
                                            std::move(program)));
}

Result<ProgramPlanCompilation> compile(const PreparedModelFamily& family, const Backend& b,
                                       const ProgramPlanCompileOptions& options =
                                           testing::synthetic_options(),
                                       const WeightMaterializerRegistry& materializers =
                                           WeightMaterializerRegistry::identity_only()) {
  return ProgramPlanCompiler::compile(family, b.catalog, plan_testing::policy(), b.estimators,
                                      materializers, options);
}

std::string rehash(json plan) {
  plan["plan_hash"] = plan_payload_hash(plan["payload"]);
  return plan.dump();
}

const ResolvedValueBinding& binding_of(const PlanNode& node, std::string_view value_id) {
  for (const auto& b : node.values) {
    if (b.value_id().str() == value_id) return b;
  }
  ADD_FAILURE() << "node " << node.id.str() << " does not bind " << value_id;
  std::abort();
}

// --- Case 6: completion retention of `value.output` ---------------------------

TEST(CompilerAcceptanceTest, Case6RetentionBindsOneTypedOutputAndRequiresTheWirePolicy) {
  PlanHarness h;
  ASSERT_TRUE(h.options.retain_completion_value(value("value.output")));
  auto compiled = h.compile();
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  const ExecutionPlan& plan = compiled->plan();

  // The checkpoint: producer node.main, ordinal 0, the output's own resource and tensor.
  ASSERT_EQ(plan.retained_completion_values().size(), 1u);
  const RetainedCompletionValue& kept = plan.retained_completion_values()[0];
  EXPECT_EQ(kept.producer_node_id.str(), "node.main");
  EXPECT_EQ(kept.output_ordinal, 0u);
  EXPECT_EQ(kept.tensor.dimensions(), std::vector<uint64_t>{4});
  EXPECT_EQ(kept.tensor.element_type(), ElementType::kF32);
  const ResolvedValueBinding& output = binding_of(plan.nodes()[0], "value.output");
  EXPECT_EQ(kept.resource_id, output.storage().components()[0].resource_id);
  // Packed activations: the output's offset in its arena (0 in the seed's layout).
  const uint64_t output_offset = output.storage().components()[0].offset_bytes;
  EXPECT_EQ(kept.logical_offset_bytes, output_offset);
  EXPECT_EQ(plan.to_json()["payload"]["retained_completion_values"][0]["resource_id"],
            kept.resource_id.str());

  // Readback of F32×4 reads the whole retained range of the same node/resource.
  auto f32x4 = unwrap(ResolvedTensorSpec::create({4}, ElementType::kF32, ContiguousLayout{}));
  auto read = kept.readback_request(f32x4);
  ASSERT_TRUE(read) << read.error().to_string();
  EXPECT_EQ(read->producer_node_id.str(), "node.main");
  EXPECT_EQ(read->resource_id, kept.resource_id);
  EXPECT_EQ(read->offset_bytes, output_offset);
  EXPECT_EQ(read->length_bytes, 16u);

  // Work-shaped readback for one sequence of 2 tokens: node.main has Fixed
  // work, so the producer wrote all 4 elements.
  auto work = kept.readback_for_work(plan.nodes()[0].work, 2);
  ASSERT_TRUE(work) << work.error().to_string();
  EXPECT_EQ(work->tensor.dimensions(), std::vector<uint64_t>{4});
  EXPECT_EQ(work->length_bytes / element_type_size_bytes(work->tensor.element_type()), 4u);

  auto u8x4 = unwrap(ResolvedTensorSpec::create({4}, ElementType::kU8, ContiguousLayout{}));
  auto wrong_type = kept.readback_request(u8x4);
  ASSERT_FALSE(wrong_type);
  EXPECT_EQ(wrong_type.error().code(), ErrorCode::kInvalidExecutionPlan);
  EXPECT_THAT(wrong_type.error().message(), HasSubstr("element type differs"));

  auto f32x5 = unwrap(ResolvedTensorSpec::create({5}, ElementType::kF32, ContiguousLayout{}));
  auto too_big = kept.readback_request(f32x5);
  ASSERT_FALSE(too_big);
  EXPECT_THAT(too_big.error().message(), HasSubstr("exceeds retained activation capacity"));

  // Wire round trip: the retention spec is a trusted input of verification.
  const std::string wire = plan.to_json().dump();
  PlanHarness without;  // same inputs, no retention
  auto r = without.verify(wire);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidExecutionPlan);
  EXPECT_THAT(r.error().message(), HasSubstr("$.payload"));
  auto ok = h.verify(wire);
  EXPECT_TRUE(ok) << ok.error().to_string();
  auto rebuilt = h.compile();
  ASSERT_TRUE(rebuilt);
  EXPECT_EQ(rebuilt->plan(), plan);

  // A self-rehashed wire with a forged retained resource id is rejected by rebuild.
  json forged = plan.to_json();
  forged["payload"]["retained_completion_values"][0]["resource_id"] =
      binding_of(plan.nodes()[0], "value.state").storage().components()[0].resource_id.str();
  auto f = h.verify(rehash(forged));
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().code(), ErrorCode::kInvalidExecutionPlan);
  EXPECT_EQ(f.error().fields().at("json_path"),
            "$.payload.retained_completion_values[0].resource_id");
}

TEST(CompilerAcceptanceTest, Case6WorkShapedReadbackCutsTheTokenAxis) {
  RetainedCompletionValue kept{
      value("value.hidden"), node_id("node.main"), 0,
      ResourceId::literal("resource/activation/sha256/0"), 0,
      unwrap(ResolvedTensorSpec::create({1, 8, 4}, ElementType::kF32, ContiguousLayout{}))};
  auto two = kept.readback_for_work(WorkTokens{value("value.hidden"), 1}, 2);
  ASSERT_TRUE(two) << two.error().to_string();
  EXPECT_EQ(two->tensor.dimensions(), (std::vector<uint64_t>{1, 2, 4}));
  EXPECT_EQ(two->length_bytes, 32u);
  EXPECT_FALSE(kept.readback_for_work(WorkTokens{value("value.hidden"), 1}, 9));   // > capacity
  EXPECT_FALSE(kept.readback_for_work(WorkTokens{value("value.hidden"), 2}, 2));   // not a prefix
  EXPECT_FALSE(kept.readback_for_work(WorkTokens{value("value.tokens"), 0}, 1));   // other value
}

// --- Extension drill (cases 11-14) --------------------------------------------

TEST(CompilerAcceptanceTest, Case11SecondDenseWeightInsteadOfStateIsAdditive) {
  WeightSchema schema = testing::dense_weight_schema();
  schema.components.push_back(WeightComponentSpec{.id = WeightId::literal("weight.mask.component"),
                                                  .role = WeightComponentRole::kValues,
                                                  .external_names = {"mask"},
                                                  .dimensions = {4},
                                                  .encoding = DenseEncoding{ElementType::kU8},
                                                  .required = true});
  schema.tensors.push_back(WeightTensorSpec{
      .id = WeightId::literal("weight.mask"),
      .dimensions = {4},
      .logical_element_type = ElementType::kU8,
      .physical_layout = DenseLayout{WeightId::literal("weight.mask.component")},
      .required = true});
  auto family = family_of(
      {make_node("node.main", "operation.main",
                 {value("value.input"), value("value.weight"), value("value.mask")},
                 {value("value.output")})},
      {},
      {testing::synthetic_weight(),
       WeightReference{WeightId::literal("weight.mask"), value("value.mask"),
                       dense({4}, ElementType::kU8)}},
      {value("value.output")}, schema);
  auto b = backend({{testing::synthetic_operation(), "provider.operation.reference"}});
  auto compiled = compile(family, b);
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  ASSERT_EQ(compiled->plan().nodes().size(), 1u);
  const PlanNode& node = compiled->plan().nodes()[0];
  EXPECT_TRUE(node.state_effects.empty());
  EXPECT_EQ(node.provider_id.str(), "provider.operation.reference");
  const ResolvedValueBinding& mask = binding_of(node, "value.mask");
  EXPECT_EQ(mask.usage(), BufferUsage::kWeights);
  ASSERT_TRUE(mask.weight());
  EXPECT_EQ(mask.weight()->weight_id.str(), "weight.mask");
}

TEST(CompilerAcceptanceTest, Case12RecurrentFamilyReusesTheSequenceStateContract) {
  StateSpec recurrent{StateId::literal("state.recurrent"), value("value.recurrent"),
                      dense({4}, ElementType::kU8), StateLifetime::kSequence,
                      StateCapacityFixedPerScope{}, StateInitialization::kZero};
  auto family = family_of(
      {make_node("node.main", "operation.main",
                 {value("value.input"), value("value.weight"), value("value.recurrent")},
                 {value("value.output")})},
      {recurrent}, {testing::synthetic_weight()}, {value("value.output")});
  auto b = backend({{testing::synthetic_operation(), "provider.operation.reference"}});
  auto compiled = compile(family, b);
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  const PlanNode& node = compiled->plan().nodes()[0];
  ASSERT_EQ(node.state_effects.size(), 1u);
  EXPECT_EQ(node.state_effects[0].state_id.str(), "state.recurrent");
  EXPECT_EQ(node.state_effects[0].access, TensorAccess::kRead);
  EXPECT_EQ(node.state_effects[0].lifetime, StateLifetime::kSequence);
  EXPECT_EQ(node.state_effects[0].resource_ids,
            std::vector<ResourceId>{
                binding_of(node, "value.recurrent").storage().components()[0].resource_id});
}

// A token-scaled state (one row per token) is sized for its maximum tokens;
// the minimum runnable figure counts one row; an allocation beyond the usable
// capacity is refused before anything runs.
PreparedModelFamily token_scaled_family(uint64_t maximum_tokens) {
  StateSpec rows{StateId::literal("state.rows"), value("value.rows"), dense({4}, ElementType::kU8),
                 StateLifetime::kSequence, StateCapacityTokenScaled{4, maximum_tokens},
                 StateInitialization::kZero};
  return family_of({make_node("node.main", "operation.main",
                              {value("value.input"), value("value.weight"), value("value.rows")},
                              {value("value.output")})},
                   {rows}, {testing::synthetic_weight()}, {value("value.output")});
}

TEST(CompilerAcceptanceTest, TokenScaledStateIsSizedForItsMaximumTokens) {
  auto b = backend({{testing::synthetic_operation(), "provider.operation.reference"}});
  auto compiled = compile(token_scaled_family(100), b);
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  const PlanNode& node = compiled->plan().nodes()[0];
  const ResourceId& id = binding_of(node, "value.rows").storage().components()[0].resource_id;
  const auto& memory = compiled->plan().memory();
  uint64_t total = 0;
  const PlanResourceSummary* state = nullptr;
  for (const auto& r : memory.resources) {
    total += r.size_bytes;
    if (r.resource_id == id) state = &r;
  }
  ASSERT_NE(state, nullptr);
  EXPECT_EQ(state->kind, PlanResourceKind::kState);
  ASSERT_TRUE(state->token_scaled.has_value());
  EXPECT_EQ(state->token_scaled->bytes_per_token, 4u);
  EXPECT_EQ(state->token_scaled->maximum_tokens, 100u);
  EXPECT_EQ(state->size_bytes, 400u);  // 100 rows of 4 B, a multiple of the alignment 16
  EXPECT_EQ(memory.allocated_bytes, total);
  // One row (rounded to the alignment) counts towards the minimum runnable bytes.
  EXPECT_EQ(memory.static_bytes + memory.minimum_runnable_bytes, total - 400 + 16);
  const auto wire = compiled->plan().to_json();
  bool recorded = false;
  for (const auto& r : wire["payload"]["memory"]["resources"]) {
    if (r["resource_id"] == id.str()) {
      recorded = r["token_scaled"] == nlohmann::json{{"bytes_per_token", 4},
                                                     {"maximum_tokens", 100}};
    }
  }
  EXPECT_TRUE(recorded);
}

TEST(CompilerAcceptanceTest, TokenScaledStateBeyondTheUsableCapacityIsRefused) {
  auto b = backend({{testing::synthetic_operation(), "provider.operation.reference"}});
  auto compiled = compile(token_scaled_family(1 << 20), b);
  ASSERT_FALSE(compiled);
  EXPECT_THAT(compiled.error().message(), HasSubstr("token-scaled states at their maximum tokens"));
}

TEST(CompilerAcceptanceTest, Case13NovelOperationIsAdditiveToCatalogAndProviders) {
  // The seed's oracle graph (the novel operation's reference oracle) is not
  // modelled in Ferrite; the catalog/provider/estimator part is.
  const auto novel = testing::synthetic_operation("operation.extension.scale_bias");
  auto b = backend({{testing::synthetic_operation(), "provider.operation.reference"},
                    {novel, "provider.extension.scale_bias.reference"}});
  auto family = family_of(
      {make_node("node.extension", "operation.extension.scale_bias",
                 {value("value.input"), value("value.weight"), value("value.state")},
                 {value("value.output")})},
      {testing::synthetic_state()}, {testing::synthetic_weight()}, {value("value.output")});
  auto compiled = compile(family, b);
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  ASSERT_EQ(compiled->plan().nodes().size(), 1u);
  const PlanNode& node = compiled->plan().nodes()[0];
  EXPECT_EQ(node.id.str(), "node.extension");
  EXPECT_EQ(node.operation_id.str(), "operation.extension.scale_bias");
  EXPECT_EQ(node.operation_version, (ContractVersion{1, 0}));
  const std::string* operation_fingerprint =
      compiled->plan().operation_fingerprint(node.operation_id);
  ASSERT_NE(operation_fingerprint, nullptr);
  EXPECT_EQ(*operation_fingerprint, unwrap(novel.fingerprint()));
  EXPECT_EQ(node.provider_id.str(), "provider.extension.scale_bias.reference");
  EXPECT_GE(b.calls("provider.extension.scale_bias.reference"), 1);
  EXPECT_EQ(b.calls("provider.operation.reference"), 0);  // the existing op is untouched
}

TEST(CompilerAcceptanceTest, Case14ReferenceBackendReusesTheSamePreparedProgram) {
  DeviceDescriptor accelerator = plan_testing::device();
  accelerator.id = DeviceId::literal("device.accelerator.0");
  accelerator.device_class = DeviceClass::kAccelerator;
  accelerator.runtime_implementation_fingerprint = sha256_hex("accelerator-runtime");
  auto fast = backend({{testing::synthetic_operation(), "provider.operation.accelerated"}},
                      accelerator);
  auto reference = backend({{testing::synthetic_operation(), "provider.operation.reference"}});
  ASSERT_NE(fast.catalog.fingerprint(), reference.catalog.fingerprint());

  const auto family = testing::synthetic_family();
  const std::string program_fingerprint = family.program().fingerprint();
  auto a = compile(family, fast);
  auto r = compile(family, reference);
  ASSERT_TRUE(a) << a.error().to_string();
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(family.program().fingerprint(), program_fingerprint);  // compiling never mutates it
  EXPECT_EQ(a->plan().to_json()["payload"]["program_fingerprint"], program_fingerprint);
  EXPECT_EQ(r->plan().to_json()["payload"]["program_fingerprint"], program_fingerprint);
  EXPECT_EQ(a->plan().to_json()["payload"]["device_id"], "device.accelerator.0");
  EXPECT_EQ(r->plan().to_json()["payload"]["device_id"], "device.reference.0");
  EXPECT_NE(a->plan().plan_hash(), r->plan().plan_hash());
  ASSERT_EQ(a->plan().nodes().size(), r->plan().nodes().size());
  for (size_t i = 0; i < a->plan().nodes().size(); ++i) {
    EXPECT_EQ(a->plan().nodes()[i].operation_id, r->plan().nodes()[i].operation_id);
  }
  EXPECT_EQ(a->plan().nodes()[0].provider_id.str(), "provider.operation.accelerated");
  EXPECT_EQ(r->plan().nodes()[0].provider_id.str(), "provider.operation.reference");
}

// --- Case 16: retain every output for determinism -----------------------------

TEST(CompilerAcceptanceTest, Case16DeterminismOptionRetainsEveryOperationOutput) {
  auto family = family_of(
      {testing::synthetic_node(),
       make_node("node.tail", "operation.tail", {value("value.output")}, {value("value.tail")}),
       make_node("node.side", "operation.tail", {value("value.input")}, {value("value.side")})},
      {testing::synthetic_state()}, {testing::synthetic_weight()}, {value("value.tail")});
  auto b = backend({{testing::synthetic_operation(), "provider.operation.reference"},
                    {f32_operation("operation.tail", 1), "provider.tail.reference"}});
  auto options = testing::synthetic_options();
  options.retain_all_outputs_for_determinism(family);
  const std::set<ProgramValueId> all_outputs{value("value.output"), value("value.side"),
                                             value("value.tail")};
  EXPECT_EQ(options.completion_retention().values(), all_outputs);
  EXPECT_EQ(CompletionRetentionSpec::for_determinism_outputs(family).values(), all_outputs);

  auto compiled = compile(family, b, options);
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  std::set<ProgramValueId> retained;
  for (const auto& kept : compiled->plan().retained_completion_values()) {
    retained.insert(kept.value_id);
  }
  EXPECT_EQ(retained, all_outputs);
  EXPECT_EQ(compiled->plan().retained_completion_values().size(), 3u);
  EXPECT_EQ(compiled->plan().retained_completion_values()[1].producer_node_id.str(), "node.side");
}

// --- Weight materializers (cases 17-20) ---------------------------------------

TEST(CompilerAcceptanceTest, Case17PayloadExecutionWeightsAreTheIdentityPlan) {
  PlanHarness h;
  auto compiled = h.compile();
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  const ExecutionWeightPlan& weights = compiled->resolution.execution_weights;
  EXPECT_EQ(weights.schema(), h.family.weight_schema());
  EXPECT_EQ(weights.source_schema_fingerprint(), h.family.weight_schema().fingerprint());
  // The fingerprints streamed from cached canonical text equal the documents'.
  EXPECT_EQ(weights.fingerprint(), canonical_fingerprint(weights.to_json()));
  EXPECT_EQ(h.family.fingerprint(), canonical_fingerprint(h.family.to_json()));
  EXPECT_EQ(h.family.weight_schema_fingerprint(), h.family.weight_schema().fingerprint());
  EXPECT_EQ(h.family.weight_schema_canonical(), canonical_json(h.family.weight_schema().to_json()));
  EXPECT_EQ(weights.materializer().id.str(), "weight-materializer.identity");
  EXPECT_EQ(weights.materializer(), identity_weight_materializer_descriptor());
  EXPECT_EQ(weights.component_sources(),
            (std::map<WeightId, std::vector<WeightId>>{
                {WeightId::literal("weight.component"), {WeightId::literal("weight.component")}}}));

  // The payload binds exactly this plan: an independently built identity plan
  // has the fingerprint the wire carries, and the weight arena is named by it.
  auto expected = unwrap(ExecutionWeightPlan::create(
      h.family, identity_weight_materializer_descriptor(),
      {{WeightId::literal("weight.component"), {WeightId::literal("weight.component")}}},
      h.family.weight_schema()));
  const json payload = compiled->plan().to_json()["payload"];
  EXPECT_EQ(payload["execution_weights_fingerprint"], expected.fingerprint());
  EXPECT_EQ(payload["weight_format"], "weight-format.dense");
  const auto arena = unwrap(hashed_resource_id("weight-arena", expected.fingerprint(), "\"f32\""));
  EXPECT_EQ(binding_of(compiled->plan().nodes()[0], "value.weight").storage().components()[0]
                .resource_id,
            arena);

  // No approval record anywhere on the wire (exact materializers never carry one).
  EXPECT_EQ(compiled->plan().canonical_text().find("approval"), std::string::npos);
  EXPECT_EQ(canonical_json(expected.to_json()).find("approval"), std::string::npos);
}

// A test materializer whose execution schema and descriptor the test chooses.
class TestMaterializer final : public WeightMaterializer {
 public:
  TestMaterializer(WeightMaterializerDescriptor descriptor, WeightSchema schema,
                   std::map<WeightId, std::vector<WeightId>> sources)
      : descriptor_(std::move(descriptor)), schema_(std::move(schema)), sources_(std::move(sources)) {}
  const WeightMaterializerDescriptor& descriptor() const override { return descriptor_; }
  Result<WeightSchema> execution_schema(const PreparedModelFamily&) const override {
    return schema_;
  }
  Result<std::map<WeightId, std::vector<WeightId>>> component_sources(
      const PreparedModelFamily& family, const WeightSchema& execution_schema) const override {
    if (sources_.empty()) return WeightMaterializer::component_sources(family, execution_schema);
    return sources_;
  }

 private:
  WeightMaterializerDescriptor descriptor_;
  WeightSchema schema_;
  std::map<WeightId, std::vector<WeightId>> sources_;
};

WeightMaterializerDescriptor materializer_descriptor(
    std::string_view id, WeightMaterializationFidelity fidelity = WeightMaterializationFidelity::kExact,
    std::string_view implementation = "implementation.v1", std::set<CapabilityId> capabilities = {}) {
  return WeightMaterializerDescriptor{.id = WeightMaterializerId::literal(id),
                                      .version = {1, 0},
                                      .implementation_fingerprint =
                                          sha256_hex(std::string(implementation)),
                                      .fidelity = fidelity,
                                      .required_capabilities = std::move(capabilities)};
}

WeightMaterializerRegistry registry_with(std::shared_ptr<const WeightMaterializer> m) {
  return unwrap(WeightMaterializerRegistry::create({std::move(m)}));
}

TEST(CompilerAcceptanceTest, Case18ApproximateMaterializerIsNotAuthorizedByRegistration) {
  PlanHarness h;
  h.materializers = registry_with(std::make_shared<TestMaterializer>(
      materializer_descriptor("weight-materializer.synthetic.int8",
                              WeightMaterializationFidelity::kApproximate),
      testing::dense_weight_schema(), std::map<WeightId, std::vector<WeightId>>{}));
  h.options.require_weight_materializer(
      WeightMaterializerId::literal("weight-materializer.synthetic.int8"));
  auto compiled = h.compile();
  ASSERT_FALSE(compiled);
  EXPECT_EQ(compiled.error().code(), ErrorCode::kWeightMaterializerQualityApprovalRequired);
  EXPECT_THAT(compiled.error().message(),
              HasSubstr("requires explicit numerical-quality approval"));
  EXPECT_EQ(compiled.error().fields().at("materializer_id"),
            "weight-materializer.synthetic.int8");
}

// Ferrite's weight layout trees do not model zero-fill padded bindings yet
// (program/weight_layout.h), so the [4]→[8] padding materializer of the seed
// is expressed as the closest exact repacking Ferrite can represent: the one
// F32[4] component is split into two F32[2] components under a new layout id.
// Each component is aligned to the provider alignment (16) inside the F32
// arena, so the arena grows from 16 to 32 bytes — the same +16 static bytes.
WeightSchema split_schema() {
  WeightSchema schema = testing::dense_weight_schema();
  schema.layout_id = WeightLayoutId::literal("weight-layout.split");
  auto half = [](std::string_view id) {
    return WeightComponentSpec{.id = WeightId::literal(id),
                               .role = WeightComponentRole::kValues,
                               .external_names = {std::string(id)},
                               .dimensions = {2},
                               .encoding = DenseEncoding{ElementType::kF32},
                               .required = true};
  };
  schema.components = {half("weight.component.lo"), half("weight.component.hi")};
  schema.tensors[0].physical_layout = CompositeLayout{
      {CompositePart{DenseLayout{WeightId::literal("weight.component.lo")}, {0}, {2}},
       CompositePart{DenseLayout{WeightId::literal("weight.component.hi")}, {2}, {2}}}};
  return schema;
}

std::shared_ptr<const WeightMaterializer> split_materializer(WeightMaterializerDescriptor d) {
  const auto source = std::vector<WeightId>{WeightId::literal("weight.component")};
  return std::make_shared<TestMaterializer>(
      std::move(d), split_schema(),
      std::map<WeightId, std::vector<WeightId>>{{WeightId::literal("weight.component.hi"), source},
                                                {WeightId::literal("weight.component.lo"), source}});
}

constexpr std::string_view kSplit = "weight-materializer.synthetic.split";

TEST(CompilerAcceptanceTest, Case19TrustedMaterializerChangesThePlanAndVerifyNeedsItsWitness) {
  PlanHarness identity;
  auto baseline = identity.compile();
  ASSERT_TRUE(baseline) << baseline.error().to_string();

  PlanHarness h;
  h.materializers = registry_with(split_materializer(materializer_descriptor(kSplit)));
  h.options.require_weight_materializer(WeightMaterializerId::literal(kSplit));
  auto compiled = h.compile();
  ASSERT_TRUE(compiled) << compiled.error().to_string();

  // The plan records the materializer and its execution schema.
  const ExecutionWeightPlan& weights = compiled->resolution.execution_weights;
  EXPECT_EQ(weights.materializer().id.str(), kSplit);
  EXPECT_EQ(weights.schema().layout_id.str(), "weight-layout.split");
  EXPECT_EQ(weights.source_schema_fingerprint(), h.family.weight_schema().fingerprint());
  EXPECT_EQ(compiled->plan().to_json()["payload"]["execution_weights_fingerprint"], weights.fingerprint());
  EXPECT_NE(compiled->plan().to_json()["payload"]["execution_weights_fingerprint"],
            baseline->plan().to_json()["payload"]["execution_weights_fingerprint"]);
  const ResolvedValueBinding& weight = binding_of(compiled->plan().nodes()[0], "value.weight");
  ASSERT_TRUE(weight.weight());
  EXPECT_EQ(weight.weight()->layout_id.str(), "weight-layout.split");
  ASSERT_EQ(weight.storage().components().size(), 2u);
  EXPECT_EQ(weight.storage().components()[0].offset_bytes, 0u);   // weight.component.hi
  EXPECT_EQ(weight.storage().components()[1].offset_bytes, 16u);  // weight.component.lo
  EXPECT_EQ(compiled->plan().memory().static_bytes, baseline->plan().memory().static_bytes + 16);
  EXPECT_NE(compiled->plan().plan_hash(), baseline->plan().plan_hash());

  const std::string wire = compiled->plan().to_json().dump();
  auto ok = h.verify(wire);
  EXPECT_TRUE(ok) << ok.error().to_string();

  // Without the witness (identity-only registry) the wire cannot be rebuilt.
  PlanHarness plain = h;
  plain.materializers = WeightMaterializerRegistry::identity_only();
  auto unwitnessed = plain.verify(wire);
  ASSERT_FALSE(unwitnessed);
  EXPECT_THAT(unwitnessed.error().message(), HasSubstr("is not registered"));

  // A registry whose descriptor for the same id differs never reproduces the plan.
  auto verify_with = [&](WeightMaterializerDescriptor d) {
    PlanHarness other = h;
    other.materializers = registry_with(split_materializer(std::move(d)));
    return other.verify(wire);
  };
  auto implementation = verify_with(materializer_descriptor(
      kSplit, WeightMaterializationFidelity::kExact, "implementation.v2"));
  ASSERT_FALSE(implementation);
  EXPECT_EQ(implementation.error().code(), ErrorCode::kInvalidExecutionPlan);
  EXPECT_THAT(implementation.error().message(), HasSubstr("differs from the trusted rebuild"));

  auto granted = verify_with(materializer_descriptor(kSplit, WeightMaterializationFidelity::kExact,
                                                     "implementation.v1",
                                                     {CapabilityId::literal("capability.compute")}));
  ASSERT_FALSE(granted);
  EXPECT_THAT(granted.error().message(), HasSubstr("differs from the trusted rebuild"));

  auto missing = verify_with(materializer_descriptor(kSplit, WeightMaterializationFidelity::kExact,
                                                     "implementation.v1",
                                                     {CapabilityId::literal("capability.repack")}));
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message(), HasSubstr("requires capabilities device"));
  EXPECT_THAT(missing.error().message(), HasSubstr("capability.repack"));

  auto approximate = verify_with(
      materializer_descriptor(kSplit, WeightMaterializationFidelity::kApproximate));
  ASSERT_FALSE(approximate);
  EXPECT_EQ(approximate.error().code(), ErrorCode::kWeightMaterializerQualityApprovalRequired);
}

TEST(CompilerAcceptanceTest, Case19MaterializerCapabilitiesMustBeOfferedByTheDevice) {
  PlanHarness h;
  h.materializers = registry_with(split_materializer(materializer_descriptor(
      kSplit, WeightMaterializationFidelity::kExact, "implementation.v1",
      {CapabilityId::literal("capability.repack")})));
  h.options.require_weight_materializer(WeightMaterializerId::literal(kSplit));
  auto compiled = h.compile();
  ASSERT_FALSE(compiled);
  EXPECT_EQ(compiled.error().code(), ErrorCode::kInvalidExecutionPlan);
  EXPECT_THAT(compiled.error().message(),
              HasSubstr("requires capabilities device `device.reference.0` lacks: "
                        "capability.repack"));
  // Offered by the device: accepted.
  h.materializers = registry_with(split_materializer(materializer_descriptor(
      kSplit, WeightMaterializationFidelity::kExact, "implementation.v1",
      {CapabilityId::literal("capability.compute")})));
  auto offered = h.compile();
  EXPECT_TRUE(offered) << offered.error().to_string();
}

TEST(CompilerAcceptanceTest, Case20MaterializerCannotChangeTheLogicalWeightContract) {
  WeightSchema wider = testing::dense_weight_schema();
  wider.components[0].dimensions = {5};
  wider.tensors[0].dimensions = {5};
  PlanHarness h;
  h.materializers = registry_with(std::make_shared<TestMaterializer>(
      materializer_descriptor("weight-materializer.synthetic.widen"), wider,
      std::map<WeightId, std::vector<WeightId>>{}));
  h.options.require_weight_materializer(
      WeightMaterializerId::literal("weight-materializer.synthetic.widen"));
  auto compiled = h.compile();
  ASSERT_FALSE(compiled);
  EXPECT_EQ(compiled.error().code(), ErrorCode::kInvalidExecutionPlan);
  EXPECT_THAT(compiled.error().message(),
              HasSubstr("changes the prepared family's logical tensor contract"));
  // The same check at the registry, before any compiler pass.
  auto selected = h.materializers.select(h.family, h.options.weight_materializer_selection());
  ASSERT_FALSE(selected);
  EXPECT_THAT(selected.error().message(),
              HasSubstr("changes the prepared family's logical tensor contract"));
}

// --- Case 23: estimator registry trust boundary --------------------------------
//
// The seed's planning registry holds one *operation contract* per operation
// (validate_signature) and one estimator per provider. In Ferrite the
// operation contract is the catalog's OperationDescriptor itself (data,
// fingerprinted; the signature is enforced by validate_resolved_bindings),
// and a provider's estimator is bound to the operation by the
// `operation_fingerprint` in its provider descriptor. So "missing/duplicate
// contract" and "contract descriptor drift" map to EstimatorRegistry::create
// (null, duplicate) and to resolve_node's "exactly one registered estimator
// whose descriptor equals the catalog's" check; a "rejecting signature" is an
// estimator built for another operation signature, or bindings that violate
// the signature. All fail before any estimate.

TEST(CompilerAcceptanceTest, Case23EstimatorRegistryRejectsNullAndDuplicates) {
  const auto op = testing::synthetic_operation();
  auto one = std::make_shared<CountingEstimator>(
      plan_testing::provider("provider.operation.reference", op));
  auto two = std::make_shared<CountingEstimator>(
      plan_testing::provider("provider.operation.reference", op));
  auto duplicate = EstimatorRegistry::create({one, two});
  ASSERT_FALSE(duplicate);
  EXPECT_EQ(duplicate.error().code(), ErrorCode::kInvalidExecutionPlan);
  EXPECT_THAT(duplicate.error().message(),
              HasSubstr("provider `provider.operation.reference` has more than one resource "
                        "estimator"));
  auto null = EstimatorRegistry::create({one, nullptr});
  ASSERT_FALSE(null);
  EXPECT_THAT(null.error().message(), HasSubstr("null estimator"));
  EXPECT_EQ(one->calls + two->calls, 0);
}

TEST(CompilerAcceptanceTest, Case23ResolutionFailsBeforeEstimationForDriftedOrMissingEstimators) {
  const auto op = testing::synthetic_operation();
  const auto catalog_provider = plan_testing::provider("provider.operation.reference", op);
  auto drifted_id = catalog_provider;
  drifted_id.resource_estimator_id = "estimator.drifted";
  auto drifted_impl = catalog_provider;
  drifted_impl.provider_implementation_fingerprint = sha256_hex("another implementation");
  // Built for another signature (F16 activation input): a different operation fingerprint.
  auto other_signature = testing::synthetic_operation();
  other_signature.inputs[0] = contract({DimensionExact{4}}, {ElementType::kF16});
  auto drifted_signature = plan_testing::provider("provider.operation.reference", other_signature);
  ASSERT_NE(drifted_signature.operation_fingerprint, catalog_provider.operation_fingerprint);

  const std::pair<const char*, std::vector<OperationProviderDescriptor>> cases[] = {
      {"estimator id", {drifted_id}},
      {"provider implementation", {drifted_impl}},
      {"operation signature", {drifted_signature}},
      {"missing", {}}};
  for (const auto& [label, descriptors] : cases) {
    std::vector<std::shared_ptr<const OperationResourceEstimator>> list;
    std::vector<std::shared_ptr<CountingEstimator>> counters;
    for (const auto& d : descriptors) {
      counters.push_back(std::make_shared<CountingEstimator>(d));
      list.push_back(counters.back());
    }
    PlanHarness h;
    h.estimators = unwrap(EstimatorRegistry::create(list));
    auto r = h.compile();
    ASSERT_FALSE(r) << label;
    EXPECT_EQ(r.error().code(), ErrorCode::kInvalidExecutionPlan) << label;
    EXPECT_THAT(r.error().message(),
                HasSubstr("has no registered estimator whose descriptor equals the catalog's"))
        << label;
    EXPECT_EQ(r.error().fields().at("node_id"), "node.main") << label;
    for (const auto& c : counters) EXPECT_EQ(c->calls, 0) << label;
  }
}

// The compiler checks each catalog descriptor against its estimator's once
// per compile (verified_estimator_descriptors) instead of once per node and
// candidate: the set holds exactly the descriptors that equal their
// estimator's, and a resolution made with it equals one made without it.
TEST(CompilerAcceptanceTest, Case23EstimatorDescriptorsAreVerifiedOncePerProvider) {
  PlanHarness h;
  const ProviderId reference = ProviderId::literal("provider.operation.reference");
  const OperationProviderDescriptor* catalog_descriptor =
      h.catalog.find_provider(h.op.id, reference);
  ASSERT_NE(catalog_descriptor, nullptr);
  const VerifiedEstimatorDescriptors verified =
      verified_estimator_descriptors(h.catalog, h.estimators);
  EXPECT_EQ(verified.size(), 1u);
  EXPECT_TRUE(verified.contains(catalog_descriptor));

  auto drifted = *catalog_descriptor;
  drifted.resource_estimator_id = "estimator.drifted";
  const auto drifted_registry =
      unwrap(EstimatorRegistry::create({std::make_shared<CountingEstimator>(drifted)}));
  EXPECT_TRUE(verified_estimator_descriptors(h.catalog, drifted_registry).empty());
  EXPECT_TRUE(verified_estimator_descriptors(h.catalog, unwrap(EstimatorRegistry::create({})))
                  .empty());

  auto resolved = ProgramPlanCompiler::resolve(h.family, h.catalog, h.runtime_policy, h.estimators,
                                               h.materializers, h.options);
  ASSERT_TRUE(resolved) << resolved.error().to_string();
  const NodeResolutionContext plain{h.family, resolved->execution_weights.schema(), h.catalog,
                                    h.runtime_policy, h.estimators};
  const NodeResolutionContext checked_once{h.family,         resolved->execution_weights.schema(),
                                           h.catalog,        h.runtime_policy,
                                           h.estimators,     nullptr,
                                           &verified};
  const ProgramNode& node = *h.family.program().find_node(node_id("node.main"));
  const auto& values = resolved->node_resolutions[0].values();
  auto without = resolve_node(plain, node, values, {}, std::nullopt);
  auto with = resolve_node(checked_once, node, values, {}, std::nullopt);
  ASSERT_TRUE(without) << without.error().to_string();
  ASSERT_TRUE(with) << with.error().to_string();
  EXPECT_EQ(*with, *without);
  // A drifted registry's set is empty, so each candidate is compared as
  // before and refused.
  const VerifiedEstimatorDescriptors none =
      verified_estimator_descriptors(h.catalog, drifted_registry);
  const NodeResolutionContext refusing{h.family,         resolved->execution_weights.schema(),
                                       h.catalog,        h.runtime_policy,
                                       drifted_registry, nullptr,
                                       &none};
  auto refused = resolve_node(refusing, node, values, {}, std::nullopt);
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message(),
              HasSubstr("has no registered estimator whose descriptor equals the catalog's"));
}

// node.main of the plan harness, resolved once, and a context whose only
// estimator counts its calls: what the resolve_node cases below start from.
// Built in place (the context refers to the members before it).
class ResolveNodeCountedTest : public ::testing::Test {
 protected:
  PlanHarness h;
  ProgramResolution resolved = unwrap(ProgramPlanCompiler::resolve(
      h.family, h.catalog, h.runtime_policy, h.estimators, h.materializers, h.options));
  std::shared_ptr<CountingEstimator> counter = std::make_shared<CountingEstimator>(
      plan_testing::provider("provider.operation.reference", h.op));
  EstimatorRegistry estimators = unwrap(EstimatorRegistry::create({counter}));
  NodeResolutionContext context{h.family, resolved.execution_weights.schema(), h.catalog,
                                h.runtime_policy, estimators};
  const ProgramNode& node = *h.family.program().find_node(node_id("node.main"));

  // The first round's bindings of node.main with its output moved to
  // `offset` in `resource`: every other binding the same (the weight slot on
  // the same shared contract).
  std::vector<ResolvedValueBinding> output_moved_to(ResourceId resource, uint64_t offset) const {
    std::vector<ResolvedValueBinding> moved = resolved.node_resolutions[0].values();
    for (ResolvedValueBinding& binding : moved) {
      if (binding.role() != ValueBindingRole::kOutput) continue;
      const ResolvedStorageComponent& placed = binding.storage().components().front();
      binding = unwrap(ResolvedValueBinding::create(
          binding.value_id(), binding.role(), binding.ordinal(), binding.tensor(),
          binding.access(), binding.alias(), binding.usage(), binding.shared_weight(),
          unwrap(ResolvedValueStorage::single(std::move(resource), offset, placed.length_bytes,
                                              placed.element_type))));
      return moved;
    }
    ADD_FAILURE() << "node.main binds no output";
    return moved;
  }

  // `taken` (resolved with the earlier round) is `from_scratch`: the same
  // resolution, and per candidate the same input digest and estimate
  // fingerprint, each different from the earlier round's (the storage moved).
  static void expect_from_scratch(const PlanNodeResolution& taken,
                                  const PlanNodeResolution& from_scratch,
                                  const PlanNodeResolution& earlier) {
    EXPECT_EQ(taken, from_scratch);
    EXPECT_EQ(taken.rejections(), from_scratch.rejections());
    ASSERT_EQ(taken.candidates().size(), from_scratch.candidates().size());
    ASSERT_EQ(taken.candidates().size(), earlier.candidates().size());
    for (size_t i = 0; i < taken.candidates().size(); ++i) {
      const ProviderResourcePlan& a = taken.candidates()[i];
      const ProviderResourcePlan& b = from_scratch.candidates()[i];
      const ProviderResourcePlan& before = earlier.candidates()[i];
      EXPECT_EQ(a.estimator_input_fingerprint(), b.estimator_input_fingerprint());
      EXPECT_EQ(a.estimate_fingerprint(), b.estimate_fingerprint());
      EXPECT_NE(a.estimator_input_fingerprint(), before.estimator_input_fingerprint());
      EXPECT_NE(a.estimate_fingerprint(), before.estimate_fingerprint());
    }
  }
};

TEST_F(ResolveNodeCountedTest, Case23BindingsViolatingTheSignatureFailBeforeEstimation) {
  // The unchanged bindings resolve with exactly one estimate.
  auto good = resolve_node(context, node, resolved.node_resolutions[0].values(), {}, std::nullopt);
  ASSERT_TRUE(good) << good.error().to_string();
  EXPECT_EQ(counter->calls, 1);

  // A U32 activation where the signature takes F32.
  std::vector<ResolvedValueBinding> bindings = resolved.node_resolutions[0].values();
  const auto& input = bindings[0];
  bindings[0] = unwrap(ResolvedValueBinding::create(
      input.value_id(), input.role(), input.ordinal(),
      unwrap(ResolvedTensorSpec::create({4}, ElementType::kU32, ContiguousLayout{})),
      input.access(), input.alias(), input.usage(), std::nullopt,
      unwrap(ResolvedValueStorage::single(input.storage().components()[0].resource_id, 0, 16,
                                          ElementType::kU32))));
  auto bad = resolve_node(context, node, bindings, {}, std::nullopt);
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message(), HasSubstr("input[0] `value.input`"));
  EXPECT_THAT(bad.error().message(), HasSubstr("dtype=U32"));
  EXPECT_EQ(counter->calls, 1);  // no further estimate

  // Given the node's earlier round, tensors equal to its are not unified
  // again; a tensor that differs is, and fails as above.
  auto again = resolve_node(context, node, resolved.node_resolutions[0].values(), {},
                            std::nullopt, &*good);
  ASSERT_TRUE(again) << again.error().to_string();
  auto bad_again = resolve_node(context, node, bindings, {}, std::nullopt, &*good);
  ASSERT_FALSE(bad_again);
  EXPECT_THAT(bad_again.error().message(), HasSubstr("dtype=U32"));
  const OperationDescriptor& op = *unwrap(h.catalog.operations().operation(node.operation_id));
  auto direct = validate_resolved_bindings(node.id, op, bindings, &good->values());
  ASSERT_FALSE(direct);
  EXPECT_THAT(direct.error().message(), HasSubstr("dtype=U32"));

  // The node's index, as a pass over the program gives it, resolves as the
  // look-up does; an index that is not this node's (past the nodes, or
  // another node's) is ignored, and the bad bindings still fail.
  const auto index = h.family.program().find_node_index(node.id);
  ASSERT_TRUE(index.has_value());
  for (size_t hint : {*index, *index + 1, size_t{1000}}) {
    auto hinted = resolve_node(context, node, resolved.node_resolutions[0].values(), {},
                               std::nullopt, nullptr, hint);
    ASSERT_TRUE(hinted) << hint << ": " << hinted.error().to_string();
    EXPECT_EQ(hinted->values(), good->values()) << hint;
    EXPECT_EQ(hinted->candidates(), good->candidates()) << hint;
    auto hinted_bad = resolve_node(context, node, bindings, {}, std::nullopt, nullptr, hint);
    ASSERT_FALSE(hinted_bad) << hint;
    EXPECT_THAT(hinted_bad.error().message(), HasSubstr("dtype=U32")) << hint;
  }
}

// A later round's bindings that moved only in storage are resolved with
// what the node's earlier round checked of everything else: the result is
// the resolution from scratch (the same candidates, estimate fingerprints
// and input digests), the estimates are made again, and the storage rules
// still hold. Any other change (another capability requested) takes the
// whole resolution.
TEST_F(ResolveNodeCountedTest, Case27StorageMovedBindingsResolveAsFromScratch) {
  const std::vector<ResolvedValueBinding>& values = resolved.node_resolutions[0].values();
  auto earlier = resolve_node(context, node, values, {}, std::nullopt);
  ASSERT_TRUE(earlier) << earlier.error().to_string();

  // The output moved to another resource.
  const auto moved = output_moved_to(ResourceId::literal("resource.moved"), 256);
  const int before = counter->calls;
  auto from_scratch = resolve_node(context, node, moved, {}, std::nullopt);
  auto taken = resolve_node(context, node, moved, {}, std::nullopt, &*earlier);
  ASSERT_TRUE(from_scratch) << from_scratch.error().to_string();
  ASSERT_TRUE(taken) << taken.error().to_string();
  EXPECT_EQ(counter->calls, before + 2);  // estimated again both times
  expect_from_scratch(*taken, *from_scratch, *earlier);
  EXPECT_EQ(taken->values(), moved);

  // Moved onto the input's bytes (the output may not alias it): refused with
  // the earlier round given, as from scratch.
  const ResolvedValueBinding* input = nullptr;
  for (const auto& b : values) {
    if (b.role() == ValueBindingRole::kInput && b.usage() == BufferUsage::kActivations) input = &b;
  }
  ASSERT_NE(input, nullptr);
  const ResolvedStorageComponent& input_bytes = input->storage().components().front();
  const auto overlapping = output_moved_to(input_bytes.resource_id, input_bytes.offset_bytes);
  auto overlap_scratch = resolve_node(context, node, overlapping, {}, std::nullopt);
  auto overlap_taken = resolve_node(context, node, overlapping, {}, std::nullopt, &*earlier);
  ASSERT_FALSE(overlap_scratch);
  ASSERT_FALSE(overlap_taken);
  EXPECT_EQ(overlap_taken.error().message(), overlap_scratch.error().message());

  // A capability no provider offers, requested now: the earlier round's
  // providers are not taken; the catalog refuses the node.
  const std::set<CapabilityId> missing{CapabilityId::literal("capability.nowhere")};
  auto refused_scratch = resolve_node(context, node, moved, missing, std::nullopt);
  auto refused_taken = resolve_node(context, node, moved, missing, std::nullopt, &*earlier);
  ASSERT_FALSE(refused_scratch);
  ASSERT_FALSE(refused_taken);
  EXPECT_EQ(refused_taken.error().message(), refused_scratch.error().message());
}

// An estimator that does not read storage is not asked again when a later
// round moved only storage: the node gets its earlier plan, echoing the new
// input fingerprint, which is the resolution from scratch (the same
// candidates, estimate fingerprints and input digests). One that reads
// storage is asked every time.
TEST_F(ResolveNodeCountedTest, Case27StorageBlindEstimatesAreReissuedAsFromScratch) {
  counter->reads_storage = false;
  auto earlier = resolve_node(context, node, resolved.node_resolutions[0].values(), {},
                              std::nullopt);
  ASSERT_TRUE(earlier) << earlier.error().to_string();
  const auto moved = output_moved_to(ResourceId::literal("resource.moved"), 256);
  const int before = counter->calls;
  auto from_scratch = resolve_node(context, node, moved, {}, std::nullopt);
  ASSERT_TRUE(from_scratch) << from_scratch.error().to_string();
  EXPECT_EQ(counter->calls, before + 1);
  auto reissued = resolve_node(context, node, moved, {}, std::nullopt, &*earlier);
  ASSERT_TRUE(reissued) << reissued.error().to_string();
  EXPECT_EQ(counter->calls, before + 1);  // not asked again
  expect_from_scratch(*reissued, *from_scratch, *earlier);

  // Told that it reads storage, it is asked again.
  counter->reads_storage = true;
  auto asked = resolve_node(context, node, moved, {}, std::nullopt, &*earlier);
  ASSERT_TRUE(asked) << asked.error().to_string();
  EXPECT_EQ(counter->calls, before + 2);
  EXPECT_EQ(*asked, *reissued);
}

// A resolution lists its candidates in provider-id order whatever order
// they are given in (resolve_node gives them in the catalog's, which is that
// order already; a caller of create may not).
TEST(CompilerAcceptanceTest, Case27ResolutionCandidatesAreInProviderOrder) {
  PlanHarness h;
  auto resolved = ProgramPlanCompiler::resolve(h.family, h.catalog, h.runtime_policy, h.estimators,
                                               h.materializers, h.options);
  ASSERT_TRUE(resolved) << resolved.error().to_string();
  const PlanNodeResolution& resolution = resolved->node_resolutions[0];
  ASSERT_EQ(resolution.candidates().size(), 1u);
  const ProviderResourcePlan& reference = resolution.candidates().front();
  const OperationProviderDescriptor first = plan_testing::provider("provider.a.first", h.op);
  const OperationResourceEstimate estimate{
      .estimator_id = first.resource_estimator_id,
      .estimator_version = first.resource_estimator_version,
      .estimator_implementation_fingerprint = first.resource_estimator_implementation_fingerprint,
      .claimed_input_fingerprint = reference.estimator_input_digest(),
      .value_alignment_bytes = 64,
      .scratch = std::nullopt,
      .binding = std::nullopt,
      .persistent = std::nullopt};
  const ProviderResourcePlan earlier_id = unwrap(ProviderResourcePlan::from_provider_output(
      first, reference.estimator_input_digest(), estimate));
  ASSERT_LT(earlier_id.provider_id(), reference.provider_id());
  const std::vector<ProviderId> in_order{earlier_id.provider_id(), reference.provider_id()};
  for (const auto& given : {std::vector<ProviderResourcePlan>{reference, earlier_id},
                            std::vector<ProviderResourcePlan>{earlier_id, reference}}) {
    auto made = PlanNodeResolution::create(resolution.node_id(), resolution.operation_id(),
                                           resolution.values(), {}, std::nullopt, given, {});
    ASSERT_TRUE(made) << made.error().to_string();
    std::vector<ProviderId> listed;
    for (const auto& plan : made->candidates()) listed.push_back(plan.provider_id());
    EXPECT_EQ(listed, in_order);
    EXPECT_EQ(made->candidates()[0], earlier_id);
    EXPECT_EQ(made->candidates()[1], reference);
  }
  auto twice = PlanNodeResolution::create(resolution.node_id(), resolution.operation_id(),
                                          resolution.values(), {}, std::nullopt,
                                          {reference, earlier_id, reference}, {});
  ASSERT_FALSE(twice);
  EXPECT_THAT(twice.error().message(), HasSubstr("twice"));
}

// A resolution keeps the node's own capabilities and its storage rejections
// apart from the rest (most have neither): each reads back as given, a
// resolution without them reads two empty ones, and resolutions compare by
// what they hold, not by how it is kept.
TEST(CompilerAcceptanceTest, Case27ResolutionCapabilitiesAndRejectionsReadBackAndCompare) {
  PlanHarness h;
  auto resolved = ProgramPlanCompiler::resolve(h.family, h.catalog, h.runtime_policy, h.estimators,
                                               h.materializers, h.options);
  ASSERT_TRUE(resolved) << resolved.error().to_string();
  const PlanNodeResolution& resolution = resolved->node_resolutions[0];
  const std::set<CapabilityId> capabilities{CapabilityId::literal("capability.test.rare")};
  const ProviderId refused = ProviderId::literal("provider.test.refused");
  const std::map<ProviderId, PlanProviderRejectReason> rejections{
      {refused, ProviderStorageIncompatible{{ResourceId::literal("resource/test/arena")}}}};
  auto make = [&](std::set<CapabilityId> c, std::map<ProviderId, PlanProviderRejectReason> r) {
    return unwrap(PlanNodeResolution::create(resolution.node_id(), resolution.operation_id(),
                                             resolution.values(), std::move(c), std::nullopt,
                                             resolution.candidates(), std::move(r)));
  };
  const PlanNodeResolution neither = make({}, {});
  EXPECT_TRUE(neither.required_capabilities().empty());
  EXPECT_TRUE(neither.rejections().empty());
  const PlanNodeResolution both = make(capabilities, rejections);
  EXPECT_EQ(both.required_capabilities(), capabilities);
  EXPECT_EQ(both.rejections(), rejections);
  const PlanNodeResolution only_capabilities = make(capabilities, {});
  EXPECT_EQ(only_capabilities.required_capabilities(), capabilities);
  EXPECT_TRUE(only_capabilities.rejections().empty());
  const PlanNodeResolution only_rejections = make({}, rejections);
  EXPECT_TRUE(only_rejections.required_capabilities().empty());
  EXPECT_EQ(only_rejections.rejections(), rejections);

  EXPECT_EQ(neither, make({}, {}));
  EXPECT_EQ(both, make(capabilities, rejections));
  EXPECT_FALSE(neither == both);
  EXPECT_FALSE(neither == only_capabilities);
  EXPECT_FALSE(neither == only_rejections);
  EXPECT_FALSE(only_capabilities == only_rejections);
  EXPECT_FALSE(both == only_capabilities);
}

// --- Case 28: the alias graph ----------------------------------------------------
//
//   node.main  (operation.main)  value.input, value.weight, value.state → value.hidden
//   node.alias (operation.alias) value.hidden, value.input → value.aliased  (May/MustAlias{0})
//   node.tail  (operation.tail)  value.aliased → value.output
//   [live]     node.late (operation.tail) value.hidden → value.late  (keeps value.hidden live)

struct AliasCase {
  PreparedModelFamily family;
  Backend b;
};

AliasCase alias_case(AliasPolicy policy, bool keep_hidden_live = false) {
  std::vector<ProgramNode> nodes{
      make_node("node.main", "operation.main",
                {value("value.input"), value("value.weight"), value("value.state")},
                {value("value.hidden")}),
      make_node("node.alias", "operation.alias", {value("value.hidden"), value("value.input")},
                {value("value.aliased")}),
      make_node("node.tail", "operation.tail", {value("value.aliased")}, {value("value.output")})};
  std::vector<ProgramValueId> outputs{value("value.output")};
  if (keep_hidden_live) {
    nodes.push_back(
        make_node("node.late", "operation.tail", {value("value.hidden")}, {value("value.late")}));
    outputs.push_back(value("value.late"));
  }
  return AliasCase{
      family_of(std::move(nodes), {testing::synthetic_state()}, {testing::synthetic_weight()},
                std::move(outputs)),
      backend({{testing::synthetic_operation(), "provider.operation.reference"},
               {f32_operation("operation.alias", 2, policy), "provider.alias.reference"},
               {f32_operation("operation.tail", 1), "provider.tail.reference"}})};
}

size_t activation_resources(const ExecutionPlan& plan) {
  return static_cast<size_t>(std::count_if(
      plan.memory().resources.begin(), plan.memory().resources.end(),
      [](const PlanResourceSummary& r) { return r.usage == BufferUsage::kActivations; }));
}

// Rebuilds `resolution` with the storage of `value_id` replaced wherever it is bound.
PlanNodeResolution with_storage(const PlanNodeResolution& resolution, std::string_view value_id,
                                const ResolvedValueStorage& storage) {
  std::vector<ResolvedValueBinding> values;
  for (const auto& b : resolution.values()) {
    if (b.value_id().str() != value_id) {
      values.push_back(b);
      continue;
    }
    values.push_back(unwrap(ResolvedValueBinding::create(b.value_id(), b.role(), b.ordinal(),
                                                         b.tensor(), b.access(), b.alias(),
                                                         b.usage(), b.shared_weight(), storage)));
  }
  return unwrap(PlanNodeResolution::create(resolution.node_id(), resolution.operation_id(),
                                           std::move(values), resolution.required_capabilities(),
                                           resolution.preferred_provider(), resolution.candidates(),
                                           resolution.rejections()));
}

// Resolves the alias case, gives `value.aliased` the storage `storage_of`
// returns (from the resolution), and builds the plan from those resolutions.
Result<ExecutionPlan> build_with_aliased_storage(
    const AliasCase& c,
    const std::function<ResolvedValueStorage(const ProgramResolution&)>& storage_of) {
  auto resolved = ProgramPlanCompiler::resolve(c.family, c.b.catalog, plan_testing::policy(),
                                               c.b.estimators,
                                               WeightMaterializerRegistry::identity_only(),
                                               testing::synthetic_options());
  if (!resolved) return make_error(resolved.error());
  const ResolvedValueStorage storage = storage_of(*resolved);
  for (auto& r : resolved->node_resolutions) r = with_storage(r, "value.aliased", storage);
  EXPECT_TRUE(resolved->value_storages.insert_or_assign(value("value.aliased"), storage));
  FERRITE_ASSIGN_OR_RETURN(auto selection, select_providers_jointly(resolved->node_resolutions,
                                                                    c.b.catalog,
                                                                    plan_testing::policy()));
  return ExecutionPlan::build(c.family, c.b.catalog, plan_testing::policy(), *resolved, selection,
                              {});
}

// Allocation counts are the seed's notion: compile with dedicated activation
// storage (one resource per activation buffer).
ProgramPlanCompileOptions dedicated_options() {
  auto options = testing::synthetic_options();
  options.set_activation_storage(ActivationStorage::kDedicated);
  return options;
}

TEST(CompilerAcceptanceTest, Case28MustAliasIsOneExactEdgeAndOneAllocation) {
  auto c = alias_case(MustAlias{0});
  auto compiled = compile(c.family, c.b, dedicated_options());
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  const ExecutionPlan& plan = compiled->plan();
  ASSERT_EQ(plan.nodes().size(), 3u);
  EXPECT_TRUE(plan.nodes()[0].exact_aliases.empty());
  EXPECT_TRUE(plan.nodes()[2].exact_aliases.empty());
  EXPECT_EQ(plan.nodes()[1].exact_aliases,
            (std::vector<PlanExactAlias>{PlanExactAlias{value("value.aliased"), 0,
                                                        value("value.hidden"), 0,
                                                        PlanAliasKind::kMust}}));
  const auto& hidden = binding_of(plan.nodes()[1], "value.hidden").storage();
  EXPECT_EQ(binding_of(plan.nodes()[1], "value.aliased").storage(), hidden);
  // value.input, value.hidden (= value.aliased) and value.output: one allocation shared.
  EXPECT_EQ(activation_resources(plan), 3u);
  EXPECT_EQ(plan.to_json()["payload"]["nodes"][1]["exact_aliases"][0]["kind"], "must");

  // Packed: still one buffer — the alias chain shares one offset in the arena.
  auto packed = compile(c.family, c.b);
  ASSERT_TRUE(packed) << packed.error().to_string();
  const auto& packed_hidden = binding_of(packed->plan().nodes()[1], "value.hidden").storage();
  EXPECT_EQ(binding_of(packed->plan().nodes()[1], "value.aliased").storage(), packed_hidden);
  EXPECT_EQ(activation_resources(packed->plan()), 1u);
  ASSERT_EQ(packed->plan().memory().activation_arenas.size(), 1u);
  EXPECT_EQ(packed->plan().memory().activation_arenas[0].buffers, 3u);
}

TEST(CompilerAcceptanceTest, Case28MayAliasEdgeOnlyForExactStorage) {
  auto c = alias_case(MayAlias{0});
  // The compiler gives a MayAlias output fresh storage: no edge, its own allocation.
  auto compiled = compile(c.family, c.b, dedicated_options());
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  EXPECT_TRUE(compiled->plan().nodes()[1].exact_aliases.empty());
  EXPECT_EQ(activation_resources(compiled->plan()), 4u);

  // With exactly the input's storage the node records a MayAlias edge.
  auto exact = build_with_aliased_storage(c, [](const ProgramResolution& r) {
    return storage_at(r.value_storages, "value.hidden");
  });
  ASSERT_TRUE(exact) << exact.error().to_string();
  EXPECT_EQ(exact->nodes()[1].exact_aliases,
            (std::vector<PlanExactAlias>{PlanExactAlias{value("value.aliased"), 0,
                                                        value("value.hidden"), 0,
                                                        PlanAliasKind::kMay}}));
  EXPECT_EQ(activation_resources(*exact), 3u);
}

TEST(CompilerAcceptanceTest, Case28PartialOrWrongInputOverlapIsAnError) {
  auto c = alias_case(MayAlias{0});
  auto partial = build_with_aliased_storage(c, [](const ProgramResolution& r) {
    const auto& hidden = storage_at(r.value_storages, "value.hidden").components()[0];
    return unwrap(ResolvedValueStorage::single(hidden.resource_id, 8, 16, ElementType::kF32));
  });
  ASSERT_FALSE(partial);
  EXPECT_EQ(partial.error().code(), ErrorCode::kInvalidExecutionPlan);
  EXPECT_THAT(partial.error().message(), HasSubstr("storage overlap violates its alias policy"));
  EXPECT_EQ(partial.error().fields().at("node_id"), "node.alias");

  auto wrong_input = build_with_aliased_storage(c, [](const ProgramResolution& r) {
    return storage_at(r.value_storages, "value.input");  // input[1], not the alias target input[0]
  });
  ASSERT_FALSE(wrong_input);
  EXPECT_THAT(wrong_input.error().message(), HasSubstr("storage overlap violates its alias policy"));
  EXPECT_EQ(wrong_input.error().fields().at("node_id"), "node.alias");

  // MustAlias with storage different from its input is no alias at all.
  auto must = alias_case(MustAlias{0});
  auto detached = build_with_aliased_storage(must, [](const ProgramResolution& r) {
    return storage_at(r.value_storages, "value.output");
  });
  ASSERT_FALSE(detached);
  EXPECT_EQ(detached.error().code(), ErrorCode::kInvalidExecutionPlan);
}

TEST(CompilerAcceptanceTest, Case28AliasingBeforeTheInputsLastConsumerIsAnError) {
  auto c = alias_case(MustAlias{0}, /*keep_hidden_live=*/true);
  auto compiled = compile(c.family, c.b);
  ASSERT_FALSE(compiled);
  EXPECT_EQ(compiled.error().code(), ErrorCode::kInvalidExecutionPlan);
  EXPECT_THAT(compiled.error().message(), HasSubstr("node `node.alias`"));
  EXPECT_THAT(compiled.error().message(), HasSubstr("which is still live"));
  EXPECT_EQ(compiled.error().fields().at("node_id"), "node.alias");
  // Without the late reader the same program compiles (the control).
  auto control = alias_case(MustAlias{0});
  EXPECT_TRUE(compile(control.family, control.b));
}


// --- Shared by cases 15, 21, 24, 26 and 29 ------------------------------------

// A catalog of `ops` with the given providers (any number per operation),
// each with its counting estimator.
Backend backend_of(const std::vector<OperationDescriptor>& ops,
                   const std::vector<OperationProviderDescriptor>& providers,
                   DeviceDescriptor dev = plan_testing::device()) {
  std::vector<std::shared_ptr<const OperationResourceEstimator>> list;
  std::map<std::string, std::shared_ptr<CountingEstimator>> counters;
  for (const auto& p : providers) {
    auto counter = std::make_shared<CountingEstimator>(p);
    counters.emplace(p.provider_id.str(), counter);
    list.push_back(counter);
  }
  return Backend{unwrap(CapabilityCatalog::create(std::move(dev), unwrap(OperationCatalog::create(ops)),
                                                  providers)),
                 unwrap(EstimatorRegistry::create(list)), std::move(counters)};
}

Result<std::string> verify_wire(std::string_view text, const PreparedModelFamily& family,
                                const Backend& b,
                                const ProgramPlanCompileOptions& options =
                                    testing::synthetic_options(),
                                const RuntimePolicy& policy = plan_testing::policy()) {
  return verify_plan_json(text, family, b.catalog, policy, b.estimators,
                          WeightMaterializerRegistry::identity_only(), options);
}

// node.main of the synthetic family, writing `output`.
ProgramNode main_node(ProgramValueId output) {
  return make_node("node.main", "operation.main",
                   {value("value.input"), value("value.weight"), value("value.state")},
                   {std::move(output)});
}

// --- Case 15: unsupported backend fails before estimation, through compile ------

TEST(CompilerAcceptanceTest, Case15UnsupportedBackendFailsWithMissingOperationBeforeEstimation) {
  auto family = family_of(
      {testing::synthetic_node(),
       make_node("node.extension", "operation.extension.scale_bias", {value("value.output")},
                 {value("value.scaled")})},
      {testing::synthetic_state()}, {testing::synthetic_weight()}, {value("value.scaled")});
  auto b = backend({{testing::synthetic_operation(), "provider.operation.reference"}});
  auto compiled = compile(family, b);
  ASSERT_FALSE(compiled);
  EXPECT_EQ(compiled.error().code(), ErrorCode::kUnsupportedOperation);
  EXPECT_EQ(compiled.error().fields().at("node_id"), "node.extension");
  EXPECT_EQ(compiled.error().fields().at("operation_id"), "operation.extension.scale_bias");
  EXPECT_EQ(b.total_calls(), 0);  // not even the supported node.main was estimated
  // The control: with the operation in the catalog the same family compiles (and estimates).
  auto extended = backend({{testing::synthetic_operation(), "provider.operation.reference"},
                           {f32_operation("operation.extension.scale_bias", 1),
                            "provider.extension.reference"}});
  ASSERT_TRUE(compile(family, extended));
  EXPECT_GT(extended.total_calls(), 0);
}

TEST(CompilerAcceptanceTest, Case15UnsupportedBackendFailsWithIncompatibleVersionBeforeEstimation) {
  ProgramNode extension = make_node("node.extension", "operation.extension.scale_bias",
                                    {value("value.output")}, {value("value.scaled")});
  extension.required_version = {2, 0};
  auto family = family_of({testing::synthetic_node(), extension}, {testing::synthetic_state()},
                          {testing::synthetic_weight()}, {value("value.scaled")});
  auto b = backend({{testing::synthetic_operation(), "provider.operation.reference"},
                    {f32_operation("operation.extension.scale_bias", 1),
                     "provider.extension.reference"}});
  auto compiled = compile(family, b);
  ASSERT_FALSE(compiled);
  EXPECT_EQ(compiled.error().code(), ErrorCode::kIncompatibleOperationVersion);
  EXPECT_EQ(compiled.error().fields().at("node_id"), "node.extension");
  EXPECT_EQ(compiled.error().fields().at("operation_id"), "operation.extension.scale_bias");
  EXPECT_EQ(compiled.error().fields().at("required_version"), "2.0");
  EXPECT_EQ(compiled.error().fields().at("available_version"), "1.0");
  EXPECT_EQ(b.total_calls(), 0);
}

// --- Case 21: an approval is measured again where the weights are at hand ----

// Approximates every value of the synthetic `weight.component` to a multiple
// of 1/4 (an "approximate" materializer whose execution schema equals its
// source schema).
class QuarterMaterializer final : public WeightMaterializer {
 public:
  QuarterMaterializer()
      : descriptor_(WeightMaterializerDescriptor{
        .id = WeightMaterializerId::literal("weight-materializer.synthetic.quarter"),
        .version = {1, 0},
        .implementation_fingerprint = sha256_hex("quarter.v1"),
        .fidelity = WeightMaterializationFidelity::kApproximate,
        .required_capabilities = {},
        .quality_contract = WeightQualityContract{0.5}}) {}
  const WeightMaterializerDescriptor& descriptor() const override { return descriptor_; }
  Result<WeightSchema> execution_schema(const PreparedModelFamily& family) const override {
    return family.weight_schema();
  }
  Result<std::vector<WeightId>> approximate_components(const PreparedModelFamily&,
                                                       const WeightSchema&) const override {
    return std::vector<WeightId>{WeightId::literal("weight.component")};
  }
  Result<void> materialize_component(const WeightComponentSpec&, std::span<const std::byte> from,
                                     const WeightComponentSpec&,
                                     std::span<std::byte> to) const override {
    std::vector<float> values = floats(from);
    for (float& v : values) v = std::round(v * 4) / 4;
    std::memcpy(to.data(), values.data(), to.size());
    return {};
  }
  Result<ComponentQuality> measure_component(const WeightComponentSpec&,
                                             std::span<const std::byte> from,
                                             const WeightComponentSpec& target,
                                             std::span<const std::byte> materialized) const override {
    return compare_component_values(target.id, floats(from), floats(materialized));
  }

 private:
  static std::vector<float> floats(std::span<const std::byte> bytes) {
    std::vector<float> values(bytes.size() / sizeof(float));
    std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
    return values;
  }
  WeightMaterializerDescriptor descriptor_;
};

WeightComponentFill fill_with(std::vector<float> values) {
  return [values](const WeightComponentSpec&, std::span<std::byte> to) -> Result<void> {
    std::memcpy(to.data(), values.data(), std::min(to.size(), values.size() * sizeof(float)));
    return {};
  };
}

TEST(CompilerAcceptanceTest, Case21UnderstatedStatisticsAreRefusedWhereTheWeightsAreAtHand) {
  auto quarter = std::make_shared<QuarterMaterializer>();
  const WeightComponentFill weights = fill_with({1.0f, 2.1f, -3.3f, 0.7f});
  PlanHarness h;
  h.materializers = registry_with(quarter);
  auto measured = measure_weight_quality(*quarter, h.family, weights);
  ASSERT_TRUE(measured) << measured.error().to_string();
  ASSERT_EQ(measured->components.size(), 1u);
  const ComponentQuality truth = measured->components[0];
  EXPECT_GT(truth.relative_l2, 0.0);
  const auto id = WeightMaterializerId::literal("weight-materializer.synthetic.quarter");

  // The honest approval compiles and is borne out by the weights.
  h.options.require_weight_materializer(id, *measured);
  auto honest = h.compile();
  ASSERT_TRUE(honest) << honest.error().to_string();
  auto verified = verify_quality_approval(h.family, weights, honest->resolution.execution_weights,
                                          *quarter);
  EXPECT_TRUE(verified) << verified.error().to_string();

  // Understated relative L2, then max abs error: accepted by the compiler
  // (within the contract; it cannot see weights), refused by the measurement.
  for (const std::string statistic : {"relative_l2", "max_abs_error"}) {
    WeightQualityApproval forged = *measured;
    double& stated = statistic == "relative_l2" ? forged.components[0].relative_l2
                                                : forged.components[0].max_abs_error;
    stated /= 3;
    PlanHarness f = h;
    f.options.require_weight_materializer(id, forged);
    auto compiled = f.compile();
    ASSERT_TRUE(compiled) << compiled.error().to_string();
    auto refused = verify_quality_approval(f.family, weights,
                                           compiled->resolution.execution_weights, *quarter);
    ASSERT_FALSE(refused) << statistic;
    EXPECT_EQ(refused.error().code(), ErrorCode::kWeightMaterializerQualityApprovalRequired);
    EXPECT_EQ(refused.error().fields().at("component_id"), "weight.component");
    EXPECT_EQ(refused.error().fields().at("statistic"), statistic);
    const double actual = statistic == "relative_l2" ? truth.relative_l2 : truth.max_abs_error;
    EXPECT_THAT(refused.error().message(),
                HasSubstr("states " + statistic + " " + quality_number_text(stated) +
                          ", but the weights measure " + quality_number_text(actual)));
  }

  // Other weights than the approval measured: refused by their sha256.
  auto other = verify_quality_approval(h.family, fill_with({1.0f, 2.1f, -3.3f, 0.8f}),
                                       honest->resolution.execution_weights, *quarter);
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().fields().at("statistic"), "source_sha256");

  // An execution plan without an approval reads no weights at all.
  PlanHarness identity;
  auto plain = identity.compile();
  ASSERT_TRUE(plain);
  int fills = 0;
  auto counted = [&](const WeightComponentSpec&, std::span<std::byte>) -> Result<void> {
    ++fills;
    return {};
  };
  EXPECT_TRUE(verify_quality_approval(identity.family, counted, plain->resolution.execution_weights,
                                      *WeightMaterializerRegistry::identity_only().find(
                                          WeightMaterializerId::literal(
                                              kIdentityWeightMaterializerId))));
  EXPECT_EQ(fills, 0);
}

// --- Case 24: an unregistered preference falls back, recorded in the plan ------

TEST(CompilerAcceptanceTest, Case24UnregisteredPreferredProviderFallsBackInThePlan) {
  PlanHarness h;
  h.options.prefer_provider(node_id("node.main"), ProviderId::literal("provider.missing"));
  auto compiled = h.compile();
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  const PlanNode& node = compiled->plan().nodes()[0];
  EXPECT_EQ(node.provider_id.str(), "provider.operation.reference");
  EXPECT_EQ(node.selection_reason, PlanSelectionReason::kFallbackFromPreferred);
  ASSERT_EQ(node.rejected_providers.count(ProviderId::literal("provider.missing")), 1u);
  EXPECT_TRUE(std::holds_alternative<ProviderNotRegistered>(
      node.rejected_providers.at(ProviderId::literal("provider.missing"))));
  const json wire = compiled->plan().to_json()["payload"]["nodes"][0];
  EXPECT_EQ(wire["selection_reason"], "fallback_from_preferred");
  EXPECT_EQ(wire["rejected_providers"][0]["provider_id"], "provider.missing");
  EXPECT_NE(wire["rejected_providers"][0]["reason"].dump().find("not_registered"),
            std::string::npos);
  auto verified = h.verify(compiled->plan().to_json().dump());
  EXPECT_TRUE(verified) << verified.error().to_string();
  // Without the preference: deterministic, no evidence.
  PlanHarness plain;
  auto control = plain.compile();
  ASSERT_TRUE(control);
  EXPECT_EQ(control->plan().nodes()[0].selection_reason,
            PlanSelectionReason::kDeterministicCompatible);
  EXPECT_TRUE(control->plan().nodes()[0].rejected_providers.empty());
}

// --- Case 26: the joint provider/storage solver, on compiled plans -------------
//
//   node.main (operation.main) value.input, value.weight, value.state → value.hidden
//   node.a    (operation.a)    value.hidden → value.mid
//   node.b    (operation.b)    value.mid → value.output
// value.mid is shared by node.a (writer) and node.b (reader).

DynamicStorageProfile paged() { return unwrap(DynamicStorageProfile::parse("fixed_block:256/paged:256")); }

DeviceDescriptor paged_device() {
  DeviceDescriptor dev = plan_testing::device();
  dev.dynamic_storage_profiles.insert(paged());
  return dev;
}

RuntimePolicy linear_then_paged() {
  RuntimePolicy policy = plan_testing::policy(1 << 20);
  policy.storage_profile_order.push_back(paged());
  return policy;
}

PreparedModelFamily shared_chain() {
  return family_of(
      {main_node(value("value.hidden")),
       make_node("node.a", "operation.a", {value("value.hidden")}, {value("value.mid")}),
       make_node("node.b", "operation.b", {value("value.mid")}, {value("value.output")})},
      {testing::synthetic_state()}, {testing::synthetic_weight()}, {value("value.output")});
}

// A provider of `op` whose output 0 takes only the paged profile.
OperationProviderDescriptor paged_output(std::string_view id, const OperationDescriptor& op) {
  auto slots = all_slots(op);
  slots.back() = {ValueBindingRole::kOutput, 0, DynamicStorageRequirement{{paged()}}};
  auto p = plan_testing::provider(id, op, slots);
  return p;
}

Result<ProgramPlanCompilation> compile_with(const PreparedModelFamily& family, const Backend& b,
                                            const RuntimePolicy& policy,
                                            const ProgramPlanCompileOptions& options) {
  return ProgramPlanCompiler::compile(family, b.catalog, policy, b.estimators,
                                      WeightMaterializerRegistry::identity_only(), options);
}

TEST(CompilerAcceptanceTest, Case26PreferredCandidateBreakingASharedIntersectionFallsBack) {
  const auto main_op = testing::synthetic_operation();
  const auto a = f32_operation("operation.a", 1), b_op = f32_operation("operation.b", 1);
  auto b = backend_of({main_op, a, b_op},
                      {plan_testing::provider("provider.operation.reference", main_op),
                       paged_output("provider.a.paged", a),
                       plan_testing::provider("provider.a.linear", a, all_slots(a)),
                       plan_testing::provider("provider.b.linear", b_op, all_slots(b_op))},
                      paged_device());
  auto options = testing::synthetic_options();
  options.prefer_provider(node_id("node.a"), ProviderId::literal("provider.a.paged"));
  const auto family = shared_chain();
  auto compiled = compile_with(family, b, linear_then_paged(), options);
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  const PlanNode& node = compiled->plan().nodes()[1];
  ASSERT_EQ(node.id.str(), "node.a");
  EXPECT_EQ(node.provider_id.str(), "provider.a.linear");
  EXPECT_EQ(node.selection_reason, PlanSelectionReason::kFallbackFromPreferred);
  const auto& evidence = node.rejected_providers.at(ProviderId::literal("provider.a.paged"));
  const auto* storage = std::get_if<ProviderStorageIncompatible>(&evidence);
  ASSERT_NE(storage, nullptr);
  EXPECT_EQ(storage->resource_ids,
            std::vector<ResourceId>{
                binding_of(node, "value.mid").storage().components()[0].resource_id});
  auto verified = verify_wire(compiled->plan().to_json().dump(), family, b, options,
                              linear_then_paged());
  EXPECT_TRUE(verified) << verified.error().to_string();
}

TEST(CompilerAcceptanceTest, Case26NoSharedIntersectionHasNoJointAssignment) {
  const auto main_op = testing::synthetic_operation();
  const auto a = f32_operation("operation.a", 1), b_op = f32_operation("operation.b", 1);
  auto b = backend_of({main_op, a, b_op},
                      {plan_testing::provider("provider.operation.reference", main_op),
                       paged_output("provider.a.paged", a),
                       plan_testing::provider("provider.b.linear", b_op, all_slots(b_op))},
                      paged_device());
  auto compiled = compile_with(shared_chain(), b, linear_then_paged(), testing::synthetic_options());
  ASSERT_FALSE(compiled);
  EXPECT_EQ(compiled.error().code(), ErrorCode::kInvalidExecutionPlan);
  EXPECT_THAT(compiled.error().message(), HasSubstr("no joint provider/storage assignment"));
}

TEST(CompilerAcceptanceTest, Case26ProfileRankBeatsProviderIdTieBreakInThePlan) {
  const auto main_op = testing::synthetic_operation();
  const auto a = f32_operation("operation.a", 1), b_op = f32_operation("operation.b", 1);
  // "provider.a.0paged" sorts before "provider.a.linear" but only offers the
  // second-ranked profile for value.mid; node.b takes either.
  auto either = all_slots(b_op);
  either.front() = {ValueBindingRole::kInput, 0,
                    DynamicStorageRequirement{{DynamicStorageProfile::linear_contiguous(), paged()}}};
  auto b = backend_of({main_op, a, b_op},
                      {plan_testing::provider("provider.operation.reference", main_op),
                       paged_output("provider.a.0paged", a),
                       plan_testing::provider("provider.a.linear", a, all_slots(a)),
                       plan_testing::provider("provider.b.any", b_op, either)},
                      paged_device());
  auto compiled = compile_with(shared_chain(), b, linear_then_paged(), testing::synthetic_options());
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  const PlanNode& node = compiled->plan().nodes()[1];
  EXPECT_EQ(node.provider_id.str(), "provider.a.linear");
  EXPECT_EQ(node.selection_reason, PlanSelectionReason::kDeterministicCompatible);
  EXPECT_EQ(node.compatible_providers,
            (std::vector<ProviderId>{ProviderId::literal("provider.a.0paged"),
                                     ProviderId::literal("provider.a.linear")}));
}

TEST(CompilerAcceptanceTest, Case26IndependentResourcesFormIndependentComponents) {
  // node.p (after node.main, paged-only output) and node.q (no input,
  // linear-only output) share no resource: the solver decides them as
  // independent components, each resource takes its own profile, and node.q
  // depends on nothing.
  const auto main_op = testing::synthetic_operation();
  const auto p_op = f32_operation("operation.p", 1), q_op = f32_operation("operation.q", 0);
  auto family = family_of(
      {main_node(value("value.hidden")),
       make_node("node.p", "operation.p", {value("value.hidden")}, {value("value.p")}),
       make_node("node.q", "operation.q", {}, {value("value.q")})},
      {testing::synthetic_state()}, {testing::synthetic_weight()},
      {value("value.p"), value("value.q")});
  auto b = backend_of({main_op, p_op, q_op},
                      {plan_testing::provider("provider.operation.reference", main_op),
                       paged_output("provider.p.paged", p_op),
                       plan_testing::provider("provider.q.linear", q_op, all_slots(q_op))},
                      paged_device());
  auto resolved = ProgramPlanCompiler::resolve(family, b.catalog, linear_then_paged(), b.estimators,
                                               WeightMaterializerRegistry::identity_only(),
                                               testing::synthetic_options());
  ASSERT_TRUE(resolved) << resolved.error().to_string();
  auto selection = select_providers_jointly(resolved->node_resolutions, b.catalog,
                                            linear_then_paged());
  ASSERT_TRUE(selection) << selection.error().to_string();
  const auto resource = [&](std::string_view v) {
    return storage_at(resolved->value_storages, v).components()[0].resource_id;
  };
  EXPECT_EQ(selection->profiles.at(resource("value.p")), paged());
  EXPECT_EQ(selection->profiles.at(resource("value.q")), DynamicStorageProfile::linear_contiguous());
  auto compiled = compile_with(family, b, linear_then_paged(), testing::synthetic_options());
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  EXPECT_EQ(compiled->plan().nodes()[1].provider_id.str(), "provider.p.paged");
  EXPECT_EQ(compiled->plan().nodes()[2].provider_id.str(), "provider.q.linear");
  EXPECT_TRUE(compiled->plan().nodes()[2].dependencies.empty());
}

// --- Case 29: state hazards on a compiled multi-node plan ------------------------
//
// Every node reads the program input (no data dependency between them) and
// the synthetic state `state.cache`, with the access its operation declares:
//   node.main (read) → value.hidden, node.rw1, node.rw2 (read-write), node.read3 (read).

OperationDescriptor state_operation(std::string_view id, TensorAccess access) {
  OperationDescriptor op = f32_operation(id, 1);
  op.inputs.push_back(contract({DimensionExact{4}}, {ElementType::kU8}, access));
  return op;
}

struct StateChain {
  PreparedModelFamily family;
  Backend b;
};

StateChain state_chain(std::vector<std::pair<std::string, TensorAccess>> extra_nodes) {
  std::vector<ProgramNode> nodes{main_node(value("value.hidden"))};
  std::vector<ProgramValueId> outputs{value("value.hidden")};
  for (const auto& [id, access] : extra_nodes) {
    const std::string op = access == TensorAccess::kRead ? "operation.state.read"
                                                         : "operation.state.rw";
    nodes.push_back(make_node(id, op, {value("value.input"), value("value.state")},
                              {value("value." + id)}));
    outputs.push_back(value("value." + id));
  }
  return StateChain{
      family_of(std::move(nodes), {testing::synthetic_state()}, {testing::synthetic_weight()},
                std::move(outputs)),
      backend({{testing::synthetic_operation(), "provider.operation.reference"},
               {state_operation("operation.state.read", TensorAccess::kRead),
                "provider.state.read"},
               {state_operation("operation.state.rw", TensorAccess::kReadWrite),
                "provider.state.rw"}})};
}

std::vector<std::vector<std::string>> dependencies_of(const ExecutionPlan& plan) {
  std::vector<std::vector<std::string>> out;
  for (const auto& node : plan.nodes()) {
    out.emplace_back();
    for (const auto& d : node.dependencies) out.back().emplace_back(d.str());
  }
  return out;
}

TEST(CompilerAcceptanceTest, Case29ReadReadWriteReadWriteReadChainOrdersByState) {
  auto c = state_chain({{"node.rw1", TensorAccess::kReadWrite},
                        {"node.rw2", TensorAccess::kReadWrite},
                        {"node.read3", TensorAccess::kRead}});
  auto compiled = compile(c.family, c.b);
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  const ExecutionPlan& plan = compiled->plan();
  EXPECT_EQ(dependencies_of(plan), (std::vector<std::vector<std::string>>{
                                       {}, {"node.main"}, {"node.rw1"}, {"node.rw2"}}));
  const std::vector<TensorAccess> accesses{TensorAccess::kRead, TensorAccess::kReadWrite,
                                           TensorAccess::kReadWrite, TensorAccess::kRead};
  for (size_t i = 0; i < plan.nodes().size(); ++i) {
    ASSERT_EQ(plan.nodes()[i].state_effects.size(), 1u) << i;
    EXPECT_EQ(plan.nodes()[i].state_effects[0].state_id.str(), "state.cache");
    EXPECT_EQ(plan.nodes()[i].state_effects[0].access, accesses[i]) << i;
  }
  EXPECT_TRUE(verify_wire(plan.to_json().dump(), c.family, c.b));
}

TEST(CompilerAcceptanceTest, Case29ReadOnlyStateNodesStayIndependent) {
  auto c = state_chain({{"node.read1", TensorAccess::kRead}, {"node.read2", TensorAccess::kRead}});
  auto compiled = compile(c.family, c.b);
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  EXPECT_EQ(dependencies_of(compiled->plan()),
            (std::vector<std::vector<std::string>>{{}, {}, {}}));
}

TEST(CompilerAcceptanceTest, Case29TamperedDependenciesEffectsOrAliasesOnTheWireAreRejected) {
  auto c = state_chain({{"node.rw1", TensorAccess::kReadWrite},
                        {"node.rw2", TensorAccess::kReadWrite},
                        {"node.read3", TensorAccess::kRead}});
  auto compiled = compile(c.family, c.b);
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  const json plan = compiled->plan().to_json();
  struct Tamper {
    const char* what;
    std::function<void(json&)> apply;
    const char* path;
  };
  const std::vector<Tamper> tampers{
      {"a dropped state dependency",
       [](json& p) { p["payload"]["nodes"][2]["dependencies"] = json::array(); },
       "$.payload.nodes[2].dependencies"},
      {"an invented dependency",
       [](json& p) {
         json& deps = p["payload"]["nodes"][2]["dependencies"];  // ["node.rw1"]
         deps.insert(deps.begin(), "node.main");                   // still sorted
       },
       "$.payload.nodes[2].dependencies"},
      {"a read-write effect claimed as a read",
       [](json& p) { p["payload"]["nodes"][1]["state_effects"][0]["access"] = "read"; },
       "$.payload.nodes[1].state_effects[0].access"},
      {"a dropped state effect",
       [](json& p) { p["payload"]["nodes"][3]["state_effects"] = json::array(); },
       "$.payload.nodes[3].state_effects"},
      {"an invented alias",
       [](json& p) {
         p["payload"]["nodes"][1]["exact_aliases"].push_back(
             json{{"output_value_id", "value.node.rw1"}, {"output_ordinal", 0},
                  {"input_value_id", "value.input"}, {"input_ordinal", 0}, {"kind", "must"}});
       },
       "$.payload.nodes[1].exact_aliases"},
  };
  for (const auto& t : tampers) {
    json copy = plan;
    t.apply(copy);
    auto r = verify_wire(rehash(copy), c.family, c.b);
    ASSERT_FALSE(r) << t.what;
    EXPECT_EQ(r.error().code(), ErrorCode::kInvalidExecutionPlan) << t.what;
    EXPECT_THAT(r.error().message(), HasSubstr(t.path)) << t.what;
  }
  // The alias graph's own edge (case 28's MustAlias plan): retyped or dropped.
  auto alias = alias_case(MustAlias{0});
  auto aliased = compile(alias.family, alias.b);
  ASSERT_TRUE(aliased) << aliased.error().to_string();
  const json alias_plan = aliased->plan().to_json();
  ASSERT_TRUE(verify_wire(alias_plan.dump(), alias.family, alias.b));
  json retyped = alias_plan;
  retyped["payload"]["nodes"][1]["exact_aliases"][0]["kind"] = "may";
  auto r = verify_wire(rehash(retyped), alias.family, alias.b);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message(), HasSubstr("$.payload.nodes[1].exact_aliases[0].kind"));
  json dropped = alias_plan;
  dropped["payload"]["nodes"][1]["exact_aliases"] = json::array();
  r = verify_wire(rehash(dropped), alias.family, alias.b);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message(), HasSubstr("$.payload.nodes[1].exact_aliases"));
}


// --- State resources: initialization and lifetime (spec §3.3, §8.6) -------------

StateSpec other_state(StateLifetime lifetime, StateInitialization initialization) {
  return StateSpec{StateId::literal("state.other"), value("value.other"),
                   dense({4}, ElementType::kU8),    lifetime,
                   StateCapacityFixedPerScope{},    initialization};
}

// node.main reads state.cache; node.read1 reads state.other.
StateChain two_states(StateSpec other) {
  auto c = state_chain({});
  c.family = family_of(
      {main_node(value("value.hidden")),
       make_node("node.read1", "operation.state.read", {value("value.input"), value("value.other")},
                 {value("value.read1")})},
      {testing::synthetic_state(), std::move(other)}, {testing::synthetic_weight()},
      {value("value.hidden"), value("value.read1")});
  return c;
}

TEST(CompilerAcceptanceTest, ZeroInitializationRequiresASequenceState) {
  for (const StateLifetime lifetime : {StateLifetime::kRequest, StateLifetime::kStep}) {
    auto c = two_states(other_state(lifetime, StateInitialization::kZero));
    auto compiled = compile(c.family, c.b);
    ASSERT_FALSE(compiled) << state_lifetime_name(lifetime);
    EXPECT_EQ(compiled.error().code(), ErrorCode::kInvalidExecutionPlan);
    EXPECT_THAT(compiled.error().message(),
                HasSubstr("zero initialization requires semantic Sequence state backing"));
    EXPECT_EQ(compiled.error().fields().at("state_id"), "state.other");
    // The same state with no initialization compiles.
    auto control = two_states(other_state(lifetime, StateInitialization::kNone));
    auto ok = compile(control.family, control.b);
    EXPECT_TRUE(ok) << ok.error().to_string();
  }
}

TEST(CompilerAcceptanceTest, StatesOfDifferentLifetimeOrInitializationNeverShareAResource) {
  // Resolve, then bind state.other at exactly state.cache's storage.
  auto build_shared = [](const StateChain& c) -> Result<ExecutionPlan> {
    auto resolved = ProgramPlanCompiler::resolve(c.family, c.b.catalog, plan_testing::policy(),
                                                 c.b.estimators,
                                                 WeightMaterializerRegistry::identity_only(),
                                                 testing::synthetic_options());
    if (!resolved) return make_error(resolved.error());
    const ResolvedValueStorage storage = storage_at(resolved->value_storages, "value.state");
    for (auto& r : resolved->node_resolutions) r = with_storage(r, "value.other", storage);
    EXPECT_TRUE(resolved->value_storages.insert_or_assign(value("value.other"), storage));
    FERRITE_ASSIGN_OR_RETURN(auto selection,
                             select_providers_jointly(resolved->node_resolutions, c.b.catalog,
                                                      plan_testing::policy()));
    return ExecutionPlan::build(c.family, c.b.catalog, plan_testing::policy(), *resolved,
                                selection, {});
  };
  struct Case {
    const char* what;
    StateSpec other;
    const char* differs;
  };
  const std::vector<Case> cases{
      {"initialization", other_state(StateLifetime::kSequence, StateInitialization::kNone),
       "initialization none"},
      {"lifetime", other_state(StateLifetime::kRequest, StateInitialization::kNone),
       "lifetime request"},
      {"demand",
       StateSpec{StateId::literal("state.other"), value("value.other"), dense({4}, ElementType::kU8),
                 StateLifetime::kSequence, StateCapacityTokenScaled{4, 8},
                 StateInitialization::kZero},
       "token-scaled 4 bytes x 8 tokens"},
  };
  for (const auto& c : cases) {
    auto chain = two_states(c.other);
    auto separate = compile(chain.family, chain.b);  // each state in its own resource
    ASSERT_TRUE(separate) << c.what << ": " << separate.error().to_string();
    auto shared = build_shared(chain);
    ASSERT_FALSE(shared) << c.what;
    EXPECT_EQ(shared.error().code(), ErrorCode::kInvalidExecutionPlan) << c.what;
    EXPECT_THAT(shared.error().message(),
                HasSubstr("merges states of different lifetime, demand or initialization"))
        << c.what;
    EXPECT_THAT(shared.error().message(), HasSubstr("`state.other`")) << c.what;
    EXPECT_THAT(shared.error().message(), HasSubstr("`state.cache`")) << c.what;
    EXPECT_THAT(shared.error().message(), HasSubstr(c.differs)) << c.what;
    EXPECT_EQ(shared.error().fields().at("resource_id"),
              binding_of(separate->plan().nodes()[0], "value.state")
                  .storage()
                  .components()[0]
                  .resource_id.str())
        << c.what;
  }
}

}  // namespace compiler_acceptance_test
}  // namespace ferrite
