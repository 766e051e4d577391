#include "ferrite/format/program_reader.h"

#include <gtest/gtest.h>

#include "format/format_test_util.h"

namespace ferrite {
namespace program_reader_test {

using format_test::FailsAt;
using format_test::FailsWith;
using nlohmann::json;

ProgramValueId v(std::string_view id) { return ProgramValueId::literal(id); }

ModelProgram sample_program() {
  const ProgramTensorSpec f32_4{{4}, ElementType::kF32, ContiguousLayout{}};
  std::vector<StateSpec> states = {
      StateSpec{StateId::literal("state.b"), v("value.state_b"),
                ProgramTensorSpec{{2, 8}, ElementType::kF16, StridedLayout{{32, 2}}},
                StateLifetime::kRequest, StateCapacityTokenScaled{64, 16},
                StateInitialization::kNone},
      StateSpec{StateId::literal("state.a"), v("value.state_a"),
                ProgramTensorSpec{{4}, ElementType::kU8, ContiguousLayout{}}, StateLifetime::kSequence,
                StateCapacityFixedPerScope{}, StateInitialization::kZero},
  };
  std::vector<WeightReference> weights = {
      WeightReference{WeightId::literal("weight.z"), v("value.wz"), f32_4},
      WeightReference{WeightId::literal("weight.a"), v("value.wa"),
                      ProgramTensorSpec{{3, 5}, ElementType::kF32,
                                        BlockedLayout{{4, 4}, {1, 0}, BlockedPaddingZeroFill{{8, 4}}}}},
  };
  ProgramNode first{NodeId::literal("node.first"),
                    OperationId::literal("operation.first"),
                    {1, 0},
                    WorkTokens{v("value.hidden"), 1},
                    {v("value.tokens"), v("value.wz"), v("value.state_a")},
                    {v("value.hidden")},
                    {{AttributeId::literal("epsilon"),
                      SemanticRational{*CanonicalRational::create(1, 100000)}},
                     {AttributeId::literal("mode"), SemanticText{"fast"}},
                     {AttributeId::literal("axes"), SemanticIntegers{{0, -1}}}}};
  ProgramNode second{NodeId::literal("node.second"),
                     OperationId::literal("operation.second"),
                     {2, 7},
                     WorkFixed{},
                     {v("value.hidden"), v("value.wa"), v("value.state_b"), v("value.tokens")},
                     {v("value.logits"), v("value.extra")},
                     {}};
  auto program = ModelProgram::create(
      ModelFamilyId::literal("family.sample"), {v("value.tokens")},
      {ProgramBlock{"block one", {first}}, ProgramBlock{"block.two", {second}}}, std::move(states),
      std::move(weights), {v("value.logits"), v("value.extra")});
  EXPECT_TRUE(program) << program.error().to_string();
  return *program;
}

TEST(FormatProgramReaderTest, ModelProgramRoundTrips) {
  const ModelProgram original = sample_program();
  const json j = original.to_json();
  auto read = read_model_program(JsonCursor(j, "$.program"));
  FERRITE_ASSERT_OK(read);
  EXPECT_EQ(*read, original);
  EXPECT_EQ(read->fingerprint(), original.fingerprint());
  EXPECT_EQ(read->to_json(), j);
}

TEST(FormatProgramReaderTest, PartsRoundTrip) {
  const ModelProgram program = sample_program();
  for (const auto& state : program.states()) {
    auto read = read_state_spec(JsonCursor(state_spec_to_json(state)));
    FERRITE_ASSERT_OK(read);
    EXPECT_EQ(*read, state);
  }
  for (const ProgramNode* node : program.nodes()) {
    auto work = read_work_spec(JsonCursor(work_spec_to_json(node->work)));
    FERRITE_ASSERT_OK(work);
    EXPECT_EQ(*work, node->work);
  }
}

class FormatProgramReaderErrorTest : public ::testing::Test {
 protected:
  Result<ModelProgram> read_with(const std::function<void(json&)>& edit) {
    doc_ = sample_program().to_json();
    edit(doc_);
    return read_model_program(JsonCursor(doc_, "$.program"));
  }
  json doc_;
};

TEST_F(FormatProgramReaderErrorTest, ShapeErrorsNamePaths) {
  EXPECT_TRUE(FailsAt(read_with([](json& j) { j["blocks"][0]["nodez"] = json::array(); }),
                      ErrorCode::kSerialization, "$.program.blocks[0].nodez"));
  EXPECT_TRUE(FailsAt(read_with([](json& j) { j["blocks"][1]["nodes"][0].erase("work"); }),
                      ErrorCode::kSerialization, "$.program.blocks[1].nodes[0].work"));
  EXPECT_TRUE(FailsAt(read_with([](json& j) { j["blocks"][1]["nodes"][0]["inputs"][1] = 5; }),
                      ErrorCode::kSerialization, "$.program.blocks[1].nodes[0].inputs[1]"));
  EXPECT_TRUE(FailsAt(read_with([](json& j) { j["blocks"][1]["nodes"][0]["inputs"][1] = "bad value"; }),
                      ErrorCode::kSerialization, "$.program.blocks[1].nodes[0].inputs[1]"));
  EXPECT_TRUE(FailsAt(read_with([](json& j) { j["blocks"][0]["nodes"][0]["work"]["tokens"]["axis"] = -1; }),
                      ErrorCode::kSerialization, "$.program.blocks[0].nodes[0].work.tokens.axis"));
  EXPECT_TRUE(FailsAt(read_with([](json& j) { j["blocks"][0]["nodes"][0]["work"] = "tokens"; }),
                      ErrorCode::kSerialization, "$.program.blocks[0].nodes[0].work"));
  EXPECT_TRUE(FailsAt(read_with([](json& j) { j["blocks"][0]["nodes"][0]["attributes"]["epsilon"] = {{"rational", 1}}; }),
                      ErrorCode::kSerialization,
                      "$.program.blocks[0].nodes[0].attributes.epsilon.rational"));
  EXPECT_TRUE(FailsAt(read_with([](json& j) { j["states"][0]["lifetime"] = "forever"; }),
                      ErrorCode::kSerialization, "$.program.states[0].lifetime"));
  EXPECT_TRUE(FailsAt(read_with([](json& j) { j["states"][1]["capacity_demand"]["token_scaled"].erase("maximum_tokens"); }),
                      ErrorCode::kSerialization,
                      "$.program.states[1].capacity_demand.token_scaled.maximum_tokens"));
  EXPECT_TRUE(FailsAt(read_with([](json& j) { j["states"][0]["initialization"] = true; }),
                      ErrorCode::kSerialization, "$.program.states[0].initialization"));
  EXPECT_TRUE(FailsAt(read_with([](json& j) { j["weights"][0]["tensor"]["dimensions"][0] = "4"; }),
                      ErrorCode::kSerialization, "$.program.weights[0].tensor.dimensions[0]"));
  EXPECT_TRUE(FailsAt(read_with([](json& j) { j["blocks"][0]["nodes"][0]["version"] = "v1"; }),
                      ErrorCode::kSerialization, "$.program.blocks[0].nodes[0].version"));
  EXPECT_TRUE(FailsAt(read_with([](json& j) { j["family"] = ""; }), ErrorCode::kSerialization,
                      "$.program.family"));
}

TEST_F(FormatProgramReaderErrorTest, ProgramRejectionsPassThroughUnchanged) {
  // Forward reference: node.first reads the output of node.second.
  auto forward = read_with([](json& j) { j["blocks"][0]["nodes"][0]["inputs"][0] = "value.logits"; });
  EXPECT_TRUE(FailsWith(forward, ErrorCode::kInvalidModelConfig, "is not defined before its use"));
  auto duplicate = read_with([](json& j) { j["blocks"][1]["nodes"][0]["id"] = "node.first"; });
  EXPECT_TRUE(FailsWith(duplicate, ErrorCode::kInvalidModelConfig, "duplicate node `node.first`"));
  auto zero = read_with([](json& j) { j["weights"][0]["tensor"]["dimensions"][0] = 0; });
  EXPECT_TRUE(FailsWith(zero, ErrorCode::kInvalidModelConfig, "program.weights[weight.a]"));
  auto empty_text = read_with([](json& j) {
    j["blocks"][0]["nodes"][0]["attributes"]["mode"] = {{"text", ""}};
  });
  EXPECT_TRUE(FailsWith(empty_text, ErrorCode::kInvalidModelConfig, "attribute `mode`"));
  auto unstable = read_with([](json& j) { j["blocks"][0]["nodes"][0]["version"] = "0.1"; });
  EXPECT_TRUE(FailsWith(unstable, ErrorCode::kInvalidModelConfig, "unstable version 0.1"));
}

}  // namespace program_reader_test
}  // namespace ferrite
