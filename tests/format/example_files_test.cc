// The bundled examples (examples/*.json) load, are canonical modulo formatting,
// and have stable fingerprints.
#include <gtest/gtest.h>

#include "ferrite/compiler/compile_options.h"
#include "ferrite/compiler/tensor_inference.h"
#include "ferrite/core/fingerprint.h"
#include "ferrite/format/catalog_file.h"
#include "ferrite/format/policy_file.h"
#include "ferrite/format/program_file.h"
#include "ferrite/format/tensor_arg.h"
#include "format/format_test_util.h"
#include "support/fixtures.h"

namespace ferrite {
namespace example_files_test {

using format_test::read_source_file;
using format_test::source_path;
using nlohmann::json;
using testing::tensor_at;

PreparedModelFamily load_program(std::string_view name) {
  auto family = read_program_file(source_path(std::string("examples/") + std::string(name)));
  EXPECT_TRUE(family) << family.error().to_string();
  return std::move(*family);
}

OperationCatalog load_catalog(std::string_view name) {
  auto catalog = read_catalog_file(source_path(std::string("examples/") + std::string(name)));
  EXPECT_TRUE(catalog) << catalog.error().to_string();
  return std::move(*catalog);
}

TEST(ExampleFilesTest, SyntheticProgramMatchesTheReferenceFixture) {
  const PreparedModelFamily family = load_program("synthetic.program.json");
  EXPECT_EQ(family.family_id().str(), "family.synthetic");
  EXPECT_EQ(family.canonical_config(), json({{"width", 4}}));
  const ModelProgram& program = family.program();
  ASSERT_EQ(program.blocks().size(), 1u);
  EXPECT_EQ(program.blocks()[0].id, "block.main");
  ASSERT_EQ(program.nodes().size(), 1u);
  const ProgramNode& node = *program.nodes()[0];
  EXPECT_EQ(node.id.str(), "node.main");
  EXPECT_EQ(node.operation_id.str(), "operation.main");
  EXPECT_EQ(node.required_version, (ContractVersion{1, 0}));
  EXPECT_EQ(node.inputs, (std::vector<ProgramValueId>{ProgramValueId::literal("value.input"),
                                                      ProgramValueId::literal("value.weight"),
                                                      ProgramValueId::literal("value.state")}));
  EXPECT_EQ(node.outputs, std::vector<ProgramValueId>{ProgramValueId::literal("value.output")});
  EXPECT_EQ(program.value_kind(ProgramValueId::literal("value.input")), ProgramValueKind::kInput);
  EXPECT_EQ(program.value_kind(ProgramValueId::literal("value.weight")), ProgramValueKind::kWeight);
  EXPECT_EQ(program.value_kind(ProgramValueId::literal("value.state")), ProgramValueKind::kState);
  const StateSpec* state = program.find_state_by_value(ProgramValueId::literal("value.state"));
  ASSERT_NE(state, nullptr);
  EXPECT_EQ(state->id.str(), "state.cache");
  EXPECT_EQ(state->tensor, (ProgramTensorSpec{{4}, ElementType::kU8, ContiguousLayout{}}));
  EXPECT_EQ(state->lifetime, StateLifetime::kSequence);
  EXPECT_EQ(state->initialization, StateInitialization::kZero);
  EXPECT_TRUE(std::holds_alternative<StateCapacityFixedPerScope>(state->capacity_demand));
  const WeightSchema& schema = family.weight_schema();
  EXPECT_EQ(schema.format_id.str(), "weight-format.dense");
  EXPECT_EQ(schema.layout_id.str(), "weight-layout.dense");
  ASSERT_EQ(schema.components.size(), 1u);
  EXPECT_EQ(schema.components[0].external_names, std::vector<std::string>{"matrix"});
  ASSERT_NE(schema.find_tensor(WeightId::literal("weight.matrix")), nullptr);
}

TEST(ExampleFilesTest, SyntheticCatalogAndPolicy) {
  const OperationCatalog catalog = load_catalog("synthetic.catalog.json");
  const OperationDescriptor* op = catalog.find(OperationId::literal("operation.main"));
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->inputs.size(), 3u);
  EXPECT_EQ(op->resources.minimum_value_alignment_bytes, 16u);
  EXPECT_EQ(op->resources.scratch, ResourcePresence::kRequired);
  EXPECT_EQ(op->resources.binding, ResourcePresence::kForbidden);
  EXPECT_EQ(op->resources.persistent, ResourcePresence::kRequired);
  EXPECT_EQ(op->provider.required_capabilities,
            std::set<CapabilityId>{CapabilityId::literal("capability.compute")});
  auto policy = read_policy_file(source_path("examples/synthetic.policy.json"));
  ASSERT_TRUE(policy) << policy.error().to_string();
  EXPECT_EQ(policy->memory_capacity_bytes, 4096u);
}

TEST(ExampleFilesTest, FingerprintsAreStableAcrossReads) {
  for (const char* name : {"synthetic.program.json", "llama-decoder.program.json"}) {
    const PreparedModelFamily first = load_program(name);
    const PreparedModelFamily second = load_program(name);
    EXPECT_EQ(first.fingerprint(), second.fingerprint()) << name;
    EXPECT_TRUE(is_canonical_sha256(first.fingerprint()));
    // Writing and reading back preserves the fingerprint, and the example
    // equals the canonical rendering modulo formatting.
    auto again = read_program_file_text(program_file_to_json(first).dump());
    ASSERT_TRUE(again) << again.error().to_string();
    EXPECT_EQ(again->fingerprint(), first.fingerprint()) << name;
    EXPECT_EQ(program_file_to_json(first),
              json::parse(read_source_file(std::string("examples/") + name)))
        << name;
  }
  for (const char* name : {"synthetic.catalog.json", "llama-decoder.catalog.json"}) {
    EXPECT_EQ(load_catalog(name).fingerprint(), load_catalog(name).fingerprint());
    // The examples are target catalogs (format_version 2); their operations
    // written back as version 1 equal the file without device and providers.
    json expected = json::parse(read_source_file(std::string("examples/") + name));
    EXPECT_EQ(expected["format_version"], 2) << name;
    expected.erase("device");
    expected.erase("providers");
    expected["format_version"] = 1;
    EXPECT_EQ(catalog_file_to_json(load_catalog(name)), expected) << name;
  }
  for (const char* name : {"synthetic.policy.json", "llama-decoder.policy.json"}) {
    auto a = read_policy_file(source_path(std::string("examples/") + name));
    auto b = read_policy_file(source_path(std::string("examples/") + name));
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->fingerprint(), b->fingerprint());
  }
}

TEST(ExampleFilesTest, LlamaDecoderShape) {
  const PreparedModelFamily family = load_program("llama-decoder.program.json");
  const ModelProgram& program = family.program();
  EXPECT_EQ(program.inputs(), (std::vector<ProgramValueId>{ProgramValueId::literal("value.tokens"),
                                                           ProgramValueId::literal("value.positions")}));
  EXPECT_EQ(program.outputs(), std::vector<ProgramValueId>{ProgramValueId::literal("value.logits")});
  EXPECT_EQ(program.states().size(), 4u);
  EXPECT_EQ(program.weights().size(), 1u + 2u * 9u + 2u);
  EXPECT_EQ(family.weight_schema().components.size(), program.weights().size());
  EXPECT_EQ(family.canonical_config().at("n_layers"), 2);
  const auto* wq = family.weight_schema().find_component(WeightId::literal("component.blk.0.attn_q"));
  ASSERT_NE(wq, nullptr);
  EXPECT_EQ(wq->external_names, std::vector<std::string>{"blk.0.attn_q.weight"});

  const OperationCatalog catalog = load_catalog("llama-decoder.catalog.json");
  EXPECT_EQ(catalog.operations().size(), 8u);
  for (const ProgramNode* node : program.nodes()) {
    auto op = catalog.operation_for_node(node->id, node->operation_id);
    ASSERT_TRUE(op) << op.error().to_string();
    EXPECT_EQ((*op)->resources.minimum_value_alignment_bytes, 64u);
    auto attributes = (*op)->validate_attributes(node->id, node->attributes);
    EXPECT_TRUE(attributes) << attributes.error().to_string();
  }
  auto policy = read_policy_file(source_path("examples/llama-decoder.policy.json"));
  ASSERT_TRUE(policy) << policy.error().to_string();
  EXPECT_EQ(policy->memory_capacity_bytes, uint64_t{1} << 30);
  EXPECT_EQ(policy->memory_reserve_bytes, uint64_t{64} << 20);
  EXPECT_EQ(policy->maximum_scheduled_tokens, 256u);
}

TEST(ExampleFilesTest, LlamaDecoderInfersTensorsForAnyTokenCount) {
  const PreparedModelFamily family = load_program("llama-decoder.program.json");
  const OperationCatalog catalog = load_catalog("llama-decoder.catalog.json");
  for (const char* tokens : {"1", "7", "256"}) {
    auto token_arg = parse_value_tensor_arg(std::string("value.tokens=u32[") + tokens + "]");
    auto position_arg = parse_value_tensor_arg(std::string("value.positions=u32[") + tokens + "]");
    ASSERT_TRUE(token_arg && position_arg);
    auto options = ProgramPlanCompileOptions::create(
        {{token_arg->first, token_arg->second}, {position_arg->first, position_arg->second}});
    ASSERT_TRUE(options) << options.error().to_string();
    ASSERT_TRUE(validate_compile_options(family, *options));
    auto tensors = infer_value_tensors(family, catalog, *options);
    ASSERT_TRUE(tensors) << tensors.error().to_string();
    EXPECT_EQ(tensor_at(*tensors, "value.logits").to_string(), "f32[1,512]");
    EXPECT_EQ(tensor_at(*tensors, "value.blk.1.attention").to_string(),
              std::string("f32[") + tokens + ",64]");
    EXPECT_EQ(tensor_at(*tensors, "value.blk.0.swiglu").to_string(),
              std::string("f32[") + tokens + ",172]");
  }
}

}  // namespace example_files_test
}  // namespace ferrite
