// One test per construction rule of the semantic program (spec §3.2); each
// asserts the error code and that the message names the offending id.
#include "ferrite/program/model_program.h"

#include "ferrite/core/fingerprint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/fixtures.h"

namespace ferrite {
namespace model_program_test {

using ::testing::HasSubstr;
using testing::dense;
using testing::node_id;
using testing::synthetic_node;
using testing::synthetic_state;
using testing::synthetic_weight;
using testing::value;
using testing::unwrap;

// Mutable pieces of the synthetic program, built into a ModelProgram on demand.
struct ProgramParts {
  std::vector<ProgramValueId> inputs{value("value.input")};
  std::vector<ProgramBlock> blocks{ProgramBlock{"block.main", {synthetic_node()}}};
  std::vector<StateSpec> states{synthetic_state()};
  std::vector<WeightReference> weights{synthetic_weight()};
  std::vector<ProgramValueId> outputs{value("value.output")};

  Result<ModelProgram> build() const {
    return ModelProgram::create(ModelFamilyId::literal("family.synthetic"), inputs, blocks,
                                states, weights, outputs);
  }
};

void expect_config_error(const Result<ModelProgram>& result, std::string_view needle) {
  ASSERT_FALSE(result) << "expected an error containing: " << needle;
  EXPECT_EQ(result.error().code(), ErrorCode::kInvalidModelConfig);
  EXPECT_THAT(result.error().message(), HasSubstr(std::string(needle)));
}

ProgramNode extra_node(std::string_view id, std::vector<ProgramValueId> inputs,
                       std::vector<ProgramValueId> outputs) {
  ProgramNode node = synthetic_node();
  node.id = node_id(id);
  node.inputs = std::move(inputs);
  node.outputs = std::move(outputs);
  return node;
}

TEST(ModelProgramTest, SyntheticProgramIsValid) {
  auto program = ProgramParts{}.build();
  ASSERT_TRUE(program) << program.error().to_string();
  EXPECT_EQ(program->nodes().size(), 1u);
  EXPECT_EQ(program->value_kind(value("value.state")), ProgramValueKind::kState);
  EXPECT_EQ(program->value_kind(value("value.weight")), ProgramValueKind::kWeight);
  EXPECT_EQ(program->value_kind(value("value.output")), ProgramValueKind::kNodeOutput);
  EXPECT_EQ(program->value_kind(value("value.input")), ProgramValueKind::kInput);
  EXPECT_FALSE(program->value_kind(value("value.unknown")));
  ASSERT_NE(program->find_node(node_id("node.main")), nullptr);
}

// Every defined value, sorted by id, each at its ValueInfo::rank; a copy
// shares the order and ranks alike.
TEST(ModelProgramTest, ValuesInIdOrderRankEveryDefinedValue) {
  ProgramParts parts;
  parts.blocks[0].nodes.push_back(
      extra_node("node.after", {value("value.output")}, {value("value.a.first")}));
  auto program = parts.build();
  ASSERT_TRUE(program) << program.error().to_string();
  const std::vector<ProgramValueId> expected{value("value.a.first"), value("value.input"),
                                             value("value.output"), value("value.state"),
                                             value("value.weight")};
  EXPECT_EQ(program->values_in_id_order(), expected);
  const ModelProgram copy = *program;
  EXPECT_EQ(&copy.values_in_id_order(), &program->values_in_id_order());
  for (const ModelProgram* p : {static_cast<const ModelProgram*>(&*program), &copy}) {
    for (size_t rank = 0; rank < expected.size(); ++rank) {
      const auto* info = p->find_value(expected[rank]);
      ASSERT_NE(info, nullptr) << expected[rank].str();
      EXPECT_EQ(info->rank, rank) << expected[rank].str();
    }
  }
}

// node_value_infos(i) is find_value of node i's inputs, then its outputs,
// in a copy and after a move too (the infos live where the program keeps
// them); past the last node it is empty.
TEST(ModelProgramTest, NodeValueInfosAreEachBindingsFindValue) {
  ProgramParts parts;
  parts.blocks[0].nodes.push_back(
      extra_node("node.after", {value("value.output"), value("value.weight")},
                 {value("value.a.first")}));
  auto built = parts.build();
  ASSERT_TRUE(built) << built.error().to_string();
  const ModelProgram copy = *built;
  const ModelProgram moved = std::move(*built);
  for (const ModelProgram* p : {&copy, &moved}) {
    ASSERT_GE(p->nodes().size(), 2u);
    for (size_t i = 0; i < p->nodes().size(); ++i) {
      const ProgramNode& node = *p->nodes()[i];
      const auto infos = p->node_value_infos(i);
      ASSERT_EQ(infos.size(), node.inputs.size() + node.outputs.size()) << node.id.str();
      for (size_t k = 0; k < infos.size(); ++k) {
        const ProgramValueId& id =
            k < node.inputs.size() ? node.inputs[k] : node.outputs[k - node.inputs.size()];
        EXPECT_EQ(infos[k], p->find_value(id)) << node.id.str() << " " << id.str();
        ASSERT_NE(infos[k], nullptr) << id.str();
      }
    }
    const auto after = p->node_value_infos(p->nodes().size() - 1);
    ASSERT_EQ(after.size(), 3u);
    EXPECT_EQ(after[1]->kind, ProgramValueKind::kWeight);
    EXPECT_EQ(after[2]->kind, ProgramValueKind::kNodeOutput);
    EXPECT_TRUE(p->node_value_infos(p->nodes().size()).empty());
  }
}

// find_value_at answers find_value's answer whatever the hint: the slot's
// info when the slot holds the id, a look-up for a wrong slot, a wrong node,
// a node past the last, or an id the program does not define.
TEST(ModelProgramTest, FindValueAtAnswersFindValueWhateverTheHint) {
  auto built = ProgramParts{}.build();
  ASSERT_TRUE(built) << built.error().to_string();
  const ModelProgram& p = *built;
  const size_t nodes = p.nodes().size();
  for (size_t i = 0; i < nodes; ++i) {
    const ProgramNode& node = *p.nodes()[i];
    std::vector<ProgramValueId> bound = node.inputs;
    bound.insert(bound.end(), node.outputs.begin(), node.outputs.end());
    for (size_t slot = 0; slot < bound.size(); ++slot) {
      const ProgramValueId& id = bound[slot];
      EXPECT_EQ(p.find_value_at(i, slot, id), p.find_value(id)) << id.str();
      EXPECT_EQ(p.find_value_at(i, slot + 1, id), p.find_value(id)) << id.str();
      EXPECT_EQ(p.find_value_at(i + 1, slot, id), p.find_value(id)) << id.str();
      EXPECT_EQ(p.find_value_at(nodes + 5, slot, id), p.find_value(id)) << id.str();
    }
    EXPECT_EQ(p.find_value_at(i, 0, value("value.not.in.the.program")), nullptr);
  }
  // A value of the program at another node's slot gets its own info.
  for (const ProgramValueId& id : p.values_in_id_order()) {
    EXPECT_EQ(p.find_value_at(0, 0, id), p.find_value(id)) << id.str();
  }
}

// node_input_info / node_output_info read find_value's answer by position,
// null past a node's bindings or past the last node; find_node_value answers
// find_value's whatever the node (a scan of its bindings, else a look-up).
TEST(ModelProgramTest, NodeValueInfosByOrdinalAreFindValuesAnswers) {
  auto built = ProgramParts{}.build();
  ASSERT_TRUE(built) << built.error().to_string();
  const ModelProgram& p = *built;
  const size_t nodes = p.nodes().size();
  ASSERT_GT(nodes, 0u);
  for (size_t i = 0; i < nodes; ++i) {
    const ProgramNode& node = *p.nodes()[i];
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      ASSERT_NE(p.node_input_info(i, k), nullptr);
      EXPECT_EQ(p.node_input_info(i, k), p.find_value(node.inputs[k])) << node.inputs[k].str();
      EXPECT_EQ(p.find_node_value(i, node.inputs[k]), p.find_value(node.inputs[k]));
    }
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      ASSERT_NE(p.node_output_info(i, k), nullptr);
      EXPECT_EQ(p.node_output_info(i, k), p.find_value(node.outputs[k])) << node.outputs[k].str();
      EXPECT_EQ(p.find_node_value(i, node.outputs[k]), p.find_value(node.outputs[k]));
    }
    EXPECT_EQ(p.node_input_info(i, node.inputs.size()), nullptr);
    EXPECT_EQ(p.node_output_info(i, node.outputs.size()), nullptr);
    EXPECT_EQ(p.find_node_value(i, value("value.not.in.the.program")), nullptr);
  }
  EXPECT_EQ(p.node_input_info(nodes, 0), nullptr);
  EXPECT_EQ(p.node_output_info(nodes, 0), nullptr);
  // Any value of the program, at any node or past the last, gets its info.
  for (const ProgramValueId& id : p.values_in_id_order()) {
    EXPECT_EQ(p.find_node_value(0, id), p.find_value(id)) << id.str();
    EXPECT_EQ(p.find_node_value(nodes + 3, id), p.find_value(id)) << id.str();
  }
}

TEST(ModelProgramTest, Rule1RejectsNoBlocks) {
  ProgramParts parts;
  parts.blocks.clear();
  expect_config_error(parts.build(), "program.blocks");
}

TEST(ModelProgramTest, Rule2RejectsNoInputs) {
  ProgramParts parts;
  parts.inputs.clear();
  expect_config_error(parts.build(), "program.inputs");
}

TEST(ModelProgramTest, Rule2RejectsDuplicateInputs) {
  ProgramParts parts;
  parts.inputs.push_back(value("value.input"));
  expect_config_error(parts.build(), "duplicate input `value.input`");
}

TEST(ModelProgramTest, Rule3RejectsInvalidStateTensor) {
  ProgramParts parts;
  parts.states[0].tensor.dimensions = {0};
  expect_config_error(parts.build(), "program.states[state.cache]");
}

TEST(ModelProgramTest, Rule3RejectsTokenScaledDemandSmallerThanTensor) {
  ProgramParts parts;
  parts.states[0].capacity_demand = StateCapacityTokenScaled{2, 16};
  expect_config_error(parts.build(), "state.cache");
}

TEST(ModelProgramTest, Rule3RejectsTokenScaledDemandWithoutTokens) {
  ProgramParts parts;
  parts.states[0].capacity_demand = StateCapacityTokenScaled{4, 0};
  expect_config_error(parts.build(), "maximum_tokens");
}

TEST(ModelProgramTest, Rule3RejectsStateValueThatIsAlreadyAnInput) {
  ProgramParts parts;
  parts.states[0].value_id = value("value.input");
  expect_config_error(parts.build(), "duplicate value `value.input`");
}

TEST(ModelProgramTest, Rule4RejectsDuplicateWeightIds) {
  ProgramParts parts;
  WeightReference second = synthetic_weight();
  second.value_id = value("value.weight.2");
  parts.weights.push_back(second);
  expect_config_error(parts.build(), "duplicate weight `weight.matrix`");
}

TEST(ModelProgramTest, Rule4RejectsWeightValueThatIsAState) {
  ProgramParts parts;
  parts.weights[0].value_id = value("value.state");
  expect_config_error(parts.build(), "duplicate value `value.state`");
}

TEST(ModelProgramTest, Rule4RejectsInvalidWeightTensor) {
  ProgramParts parts;
  parts.weights[0].tensor.layout = StridedLayout{{0}};
  expect_config_error(parts.build(), "program.weights[weight.matrix]");
}

TEST(ModelProgramTest, Rule5RejectsEmptyBlockId) {
  ProgramParts parts;
  parts.blocks[0].id.clear();
  expect_config_error(parts.build(), "block id must not be empty");
}

TEST(ModelProgramTest, Rule5RejectsBlockWithoutNodes) {
  ProgramParts parts;
  parts.blocks.push_back(ProgramBlock{"block.empty", {}});
  expect_config_error(parts.build(), "block `block.empty` has no nodes");
}

TEST(ModelProgramTest, Rule5RejectsDuplicateBlockIds) {
  ProgramParts parts;
  parts.blocks.push_back(ProgramBlock{
      "block.main", {extra_node("node.second", {value("value.output")}, {value("value.o2")})}});
  expect_config_error(parts.build(), "duplicate block `block.main`");
}

TEST(ModelProgramTest, Rule5RejectsUnstableRequiredVersion) {
  ProgramParts parts;
  parts.blocks[0].nodes[0].required_version = {0, 3};
  expect_config_error(parts.build(), "node `node.main` requires unstable version 0.3");
}

TEST(ModelProgramTest, Rule5RejectsNodeWithoutOutputs) {
  ProgramParts parts;
  parts.blocks[0].nodes[0].outputs.clear();
  parts.outputs = {value("value.input")};
  expect_config_error(parts.build(), "node `node.main` has no outputs");
}

TEST(ModelProgramTest, Rule5RejectsInvalidAttributeValue) {
  ProgramParts parts;
  parts.blocks[0].nodes[0].attributes.emplace(AttributeId::literal("mode"), SemanticText{""});
  expect_config_error(parts.build(), "node `node.main` attribute `mode`");
}

TEST(ModelProgramTest, Rule5RejectsDuplicateNodeIdsAcrossBlocks) {
  ProgramParts parts;
  parts.blocks.push_back(ProgramBlock{
      "block.tail", {extra_node("node.main", {value("value.output")}, {value("value.o2")})}});
  expect_config_error(parts.build(), "duplicate node `node.main`");
}

TEST(ModelProgramTest, Rule5RejectsTokenWorkValueNotOnTheNode) {
  ProgramParts parts;
  parts.blocks[0].nodes[0].work = WorkTokens{value("value.elsewhere"), 0};
  expect_config_error(parts.build(), "token work value `value.elsewhere` must occur exactly once");
}

TEST(ModelProgramTest, Rule5RejectsTokenWorkValueThatOccursTwice) {
  ProgramParts parts;
  auto& node = parts.blocks[0].nodes[0];
  node.inputs = {value("value.input"), value("value.input"), value("value.state")};
  node.work = WorkTokens{value("value.input"), 0};
  expect_config_error(parts.build(), "token work value `value.input` must occur exactly once");
}

TEST(ModelProgramTest, Rule5RejectsTokenWorkOnAWeight) {
  ProgramParts parts;
  parts.blocks[0].nodes[0].work = WorkTokens{value("value.weight"), 0};
  expect_config_error(parts.build(), "token work value `value.weight` is a state or weight");
}

TEST(ModelProgramTest, Rule5RejectsForwardReference) {
  ProgramParts parts;
  parts.blocks[0].nodes.insert(
      parts.blocks[0].nodes.begin(),
      extra_node("node.early", {value("value.output")}, {value("value.early")}));
  expect_config_error(parts.build(),
                      "node `node.early` input[0] `value.output` is not defined before its use");
}

TEST(ModelProgramTest, Rule5RejectsSelfLoop) {
  ProgramParts parts;
  parts.blocks[0].nodes[0].inputs[0] = value("value.output");
  expect_config_error(parts.build(), "`value.output` is not defined before its use");
}

TEST(ModelProgramTest, Rule5RejectsSecondProducer) {
  ProgramParts parts;
  parts.blocks[0].nodes.push_back(
      extra_node("node.second", {value("value.input")}, {value("value.output")}));
  expect_config_error(parts.build(), "node `node.second` output[0] `value.output` is already "
                                     "defined");
}

TEST(ModelProgramTest, Rule5RejectsWritingAWeightValue) {
  ProgramParts parts;
  parts.blocks[0].nodes[0].outputs = {value("value.weight")};
  expect_config_error(parts.build(), "output[0] `value.weight` is already defined");
}

TEST(ModelProgramTest, Rule6RejectsDuplicateStateIds) {
  ProgramParts parts;
  StateSpec second = synthetic_state();
  second.value_id = value("value.state.2");
  parts.states.push_back(second);
  expect_config_error(parts.build(), "duplicate state `state.cache`");
}

TEST(ModelProgramTest, Rule7RejectsNoOutputs) {
  ProgramParts parts;
  parts.outputs.clear();
  expect_config_error(parts.build(), "program.outputs");
}

TEST(ModelProgramTest, Rule7RejectsUnknownOutput) {
  ProgramParts parts;
  parts.outputs.push_back(value("value.nowhere"));
  expect_config_error(parts.build(), "output `value.nowhere` is not a known value");
}

TEST(ModelProgramTest, Rule7RejectsDuplicateDeclaredOutputs) {
  ProgramParts parts;
  parts.outputs.push_back(value("value.output"));
  expect_config_error(parts.build(), "duplicate output `value.output`");
}

TEST(ModelProgramTest, ProgramOutputsMayBeAnyKnownValue) {
  ProgramParts parts;
  parts.outputs.push_back(value("value.state"));
  parts.outputs.push_back(value("value.input"));
  EXPECT_TRUE(parts.build());
}

TEST(ModelProgramTest, NormalizesStatesAndWeightsButKeepsBlockOrder) {
  ProgramParts parts;
  StateSpec early = synthetic_state();
  early.id = StateId::literal("state.a");
  early.value_id = value("value.state.a");
  parts.states.push_back(early);
  WeightReference a = synthetic_weight();
  a.weight_id = WeightId::literal("weight.a");
  a.value_id = value("value.weight.a");
  parts.weights.push_back(a);
  parts.blocks.push_back(ProgramBlock{
      "block.a", {extra_node("node.a", {value("value.output")}, {value("value.a")})}});
  auto program = parts.build();
  ASSERT_TRUE(program) << program.error().to_string();
  EXPECT_EQ(program->states()[0].id.str(), "state.a");
  EXPECT_EQ(program->weights()[0].weight_id.str(), "weight.a");
  EXPECT_EQ(program->blocks()[0].id, "block.main");
  ASSERT_EQ(program->nodes().size(), 2u);
  EXPECT_EQ(program->nodes()[1]->id.str(), "node.a");
}

TEST(ModelProgramTest, CopiesKeepWorkingNodeIndexes) {
  auto original = ProgramParts{}.build();
  ASSERT_TRUE(original);
  ModelProgram copy = *original;
  ModelProgram moved = std::move(*original);
  ASSERT_EQ(copy.nodes().size(), 1u);
  EXPECT_EQ(copy.nodes()[0], &copy.blocks()[0].nodes[0]);
  EXPECT_EQ(moved.nodes()[0], &moved.blocks()[0].nodes[0]);
  EXPECT_EQ(copy, moved);
  EXPECT_EQ(copy.fingerprint(), moved.fingerprint());
  EXPECT_EQ(copy.canonical_text(), moved.canonical_text());
  EXPECT_EQ(copy.canonical_text(), canonical_json(copy.to_json()));
}

// The streamed canonical encoding (fingerprint, family hash) writes the bytes
// of to_json's document: every attribute kind, token work, token-scaled
// states, several blocks.
TEST(ModelProgramTest, StreamedEncodingEqualsTheDocument) {
  ProgramParts parts;
  ProgramNode& node = parts.blocks[0].nodes[0];
  node.attributes = {{AttributeId::literal("a.bool"), SemanticBool{true}},
                     {AttributeId::literal("a.int"), SemanticInteger{-3}},
                     {AttributeId::literal("a.unsigned"), SemanticUnsigned{8}},
                     {AttributeId::literal("a.rational"),
                      SemanticRational{unwrap(CanonicalRational::parse_decimal("1e-5"))}},
                     {AttributeId::literal("a.text"), SemanticText{"tab\t \"quoted\" é"}},
                     {AttributeId::literal("a.integers"), SemanticIntegers{{1, -2, 3}}}};
  node.work = WorkTokens{value("value.output"), 0};
  parts.states[0].capacity_demand = StateCapacityTokenScaled{.bytes_per_token = 4,
                                                             .maximum_tokens = 16};
  parts.blocks.push_back(ProgramBlock{
      "block.b", {extra_node("node.b", {value("value.output")}, {value("value.b")})}});
  auto program = parts.build();
  ASSERT_TRUE(program) << program.error().to_string();
  CanonicalText text;
  program->encode_canonical(text);
  EXPECT_EQ(text.text(), canonical_json(program->to_json()));
  EXPECT_EQ(program->fingerprint(), canonical_fingerprint(program->to_json()));
  // The text kept from create (a prepared family hashes it) is the same bytes.
  EXPECT_EQ(program->canonical_text(), canonical_json(program->to_json()));
  // The hashed lookups answer on copies and moved-from-into programs alike.
  ModelProgram copy = *program;
  ModelProgram moved = std::move(*program);
  for (const ModelProgram* p : {&copy, &moved}) {
    EXPECT_EQ(p->find_node(node_id("node.b")), p->nodes()[1]);
    EXPECT_EQ(p->value_kind(value("value.b")), ProgramValueKind::kNodeOutput);
    EXPECT_EQ(p->value_kind(value("value.input")), ProgramValueKind::kInput);
    EXPECT_EQ(p->find_state_by_value(value("value.state")), &p->states()[0]);
    EXPECT_EQ(p->find_weight_by_value(value("value.weight")), &p->weights()[0]);
    EXPECT_EQ(p->find_weight_by_value(value("value.state")), nullptr);
    EXPECT_FALSE(p->value_kind(value("value.absent")).has_value());
  }
}

TEST(ModelProgramTest, FingerprintChangesWithContent) {
  auto a = ProgramParts{}.build();
  ProgramParts parts;
  parts.blocks[0].nodes[0].required_version = {1, 1};
  auto b = parts.build();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->fingerprint().size(), 64u);
  EXPECT_NE(a->fingerprint(), b->fingerprint());
}

}  // namespace model_program_test
}  // namespace ferrite
