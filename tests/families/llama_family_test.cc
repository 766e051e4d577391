// The llama family built with ProgramBuilder: the same program as
// examples/llama-decoder.program.json for that example's config, pinned
// fingerprints, and ProgramBuilder's errors at the call.
#include "families/llama/llama_family.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ferrite/format/program_file.h"
#include "ferrite/operations/operation_builders.h"
#include "ferrite/program/program_builder.h"
#include "format/format_test_util.h"

namespace ferrite {
namespace llama_family_test {

// The configuration of examples/llama-decoder.program.json.
LlamaConfig example_config() {
  return LlamaConfig{.dim = 64, .hidden_dim = 172, .n_layers = 2, .n_heads = 8, .n_kv_heads = 4,
                     .vocab_size = 512, .context_length = 256};
}

// The example file names its family `family.llama-decoder` and states its
// config in its own keys; everything else — inputs, blocks, nodes,
// attributes, states, weights, outputs and the whole weight schema — is the
// llama family's.
TEST(LlamaFamilyTest, ReproducesTheExampleProgramAndWeightSchema) {
  auto example =
      read_program_file(format_test::source_path("examples/llama-decoder.program.json"));
  ASSERT_TRUE(example) << example.error().to_string();
  auto built = build_llama_family(example_config());
  ASSERT_TRUE(built) << built.error().to_string();
  nlohmann::json expected = example->program().to_json();
  nlohmann::json actual = built->program().to_json();
  ASSERT_EQ(expected["family"], "family.llama-decoder");
  expected.erase("family");
  actual.erase("family");
  EXPECT_EQ(actual, expected);
  EXPECT_EQ(built->weight_schema().to_json(), example->weight_schema().to_json());
}

// Fingerprints of the family before ProgramBuilder (it was built as JSON and
// read back through the program-file reader); they must never drift.
TEST(LlamaFamilyTest, FingerprintsArePinned) {
  LlamaConfig tied = example_config();
  tied.tied_output = true;
  tied.rope_convention = "half_split";
  tied.norm_eps = "0.00001";
  tied.rope_theta = "500000";
  LlamaConfig blocks = example_config();
  blocks.hidden_dim = 192;
  blocks.block_formats = {{"weight.blk.0.attn_q", "quantization.ggml_q8_0"},
                          {"weight.blk.1.ffn_down", "quantization.ggml_q4_0"},
                          {"weight.token_embd", "quantization.ggml_q8_0"},
                          {"weight.output", "quantization.ggml_q8_0"}};
  LlamaConfig one = example_config();
  one.n_layers = 1;
  one.n_kv_heads = 8;
  const std::pair<LlamaConfig, const char*> cases[] = {
      {example_config(), "5b97ada6ed56022c778793c0d4349bf228f17c89a1655704d30490d2d9dafef9"},
      {tied, "f51b430b98b06bde9afe945ea11374cdffb776bcc8166416400f586adc01040f"},
      {blocks, "d6c06fcc7bad575c72ef19c739f7024664da2c477bd6c49b1b4a5cd62626a654"},
      {one, "7117e33517e08576e09659141e193d4ae72fd70fb431cb80004e55637d71f84f"}};
  for (const auto& [config, fingerprint] : cases) {
    auto family = build_llama_family(config);
    ASSERT_TRUE(family) << family.error().to_string();
    EXPECT_EQ(family->fingerprint(), fingerprint);
    // The program file round trip gives the same family.
    auto reread = read_program_file_json(program_file_to_json(*family));
    ASSERT_TRUE(reread) << reread.error().to_string();
    EXPECT_EQ(reread->fingerprint(), family->fingerprint());
  }
}

TEST(ProgramBuilderTest, TheFirstErrorNamesItsCallAndSticks) {
  ProgramBuilder b("family.test");
  ValueRef x = b.input("value.x");
  EXPECT_TRUE(x.valid());
  EXPECT_FALSE(b.input("value.x").valid());
  ASSERT_TRUE(b.error().has_value());
  EXPECT_EQ(b.error()->message(),
            "ProgramBuilder::input(`value.x`): value `value.x` is already defined");
  // Later calls are ignored; finish reports the first error.
  b.block("block.main");
  EXPECT_FALSE(swiglu(b, {"node.y", "value.y"}, x, x).valid());
  auto family = std::move(b).finish({WeightFormatId::literal("weight-format.dense"),
                                     WeightLayoutId::literal("weight-layout.test"), {1, 0}},
                                    nlohmann::json::object());
  ASSERT_FALSE(family);
  EXPECT_EQ(family.error().message(),
            "ProgramBuilder::input(`value.x`): value `value.x` is already defined");
}

TEST(ProgramBuilderTest, NodesNeedABlockAndKnownValues) {
  ProgramBuilder no_block("family.test");
  ValueRef x = no_block.input("value.x");
  EXPECT_FALSE(swiglu(no_block, {"node.y", "value.y"}, x, x).valid());
  ASSERT_TRUE(no_block.error().has_value());
  EXPECT_EQ(no_block.error()->message(),
            "ProgramBuilder::add_node(`node.y`): no block: call block() first");

  ProgramBuilder foreign("family.test");
  foreign.block("block.main");
  EXPECT_FALSE(linear(foreign, {"node.q", "value.q"}, ValueRef{7}, ValueRef{}).valid());
  ASSERT_TRUE(foreign.error().has_value());
  EXPECT_EQ(foreign.error()->message(),
            "ProgramBuilder::add_node(`node.q`): value 0 is not a value of this builder");

  ProgramBuilder bad_attribute("family.test");
  ValueRef h = bad_attribute.input("value.h");
  bad_attribute.block("block.main");
  EXPECT_FALSE(rope(bad_attribute, {"node.r", "value.r"}, h, h, {8, "ten", "interleaved"}).valid());
  ASSERT_TRUE(bad_attribute.error().has_value());
  EXPECT_NE(bad_attribute.error()->message().find("rope theta(`node.r`)"), std::string::npos)
      << bad_attribute.error()->message();
}

}  // namespace llama_family_test
}  // namespace ferrite
