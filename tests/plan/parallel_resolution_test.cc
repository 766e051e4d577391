// Compile threads (compile_options.h) change how fast a plan is built, never
// its bytes: the same program compiles to the same canonical plan and hash
// with 1 to 8 resolution threads, and a failure names the same (first
// failing) node.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "families/llama/llama_family.h"
#include "ferrite/format/catalog_file.h"
#include "ferrite/format/policy_file.h"
#include "ferrite/plan/program_plan_compiler.h"
#include "ferrite/runtime/generation.h"

namespace ferrite {
namespace {

using ::testing::HasSubstr;

struct Target {
  CompilationTarget target;
  RuntimePolicy policy;
};

Target example_target() {
  auto target = read_target_catalog_file(std::string(FERRITE_SOURCE_DIR) +
                                         "/examples/llama-decoder.catalog.json");
  auto policy = read_policy_file(std::string(FERRITE_SOURCE_DIR) +
                                 "/examples/llama-decoder.policy.json");
  EXPECT_TRUE(target && policy);
  return {std::move(*target), std::move(*policy)};
}

// Four layers: 64 nodes, four chunks of 16 for the threads to share.
PreparedModelFamily four_layer_llama(uint32_t layers = 4) {
  auto family = build_llama_family(LlamaConfig{.dim = 64,
                                               .hidden_dim = 172,
                                               .n_layers = layers,
                                               .n_heads = 8,
                                               .n_kv_heads = 4,
                                               .vocab_size = 512,
                                               .context_length = 256,
                                               .norm_eps = "1/100000",
                                               .rope_theta = "10000",
                                               .rope_convention = "interleaved",
                                               .tied_output = false,
                                               .block_formats = {}});
  EXPECT_TRUE(family) << family.error().to_string();
  return std::move(*family);
}

Result<ProgramPlanCompilation> compile_with(const PreparedModelFamily& family, const Target& t,
                                            unsigned threads,
                                            const std::vector<NodeId>& impossible = {}) {
  FERRITE_ASSIGN_OR_RETURN(auto options, ProgramPlanCompileOptions::create(decoder_compile_inputs(8)));
  options.set_compile_threads(threads);
  for (const NodeId& node : impossible) {
    options.require_capability(node, CapabilityId::literal("capability.nobody.offers"));
  }
  return ProgramPlanCompiler::compile(family, t.target.catalog, t.policy, t.target.estimators,
                                      WeightMaterializerRegistry::identity_only(), options);
}

TEST(ParallelResolutionTest, EveryThreadCountBuildsTheSamePlanBytes) {
  const Target t = example_target();
  const PreparedModelFamily family = four_layer_llama();
  ASSERT_GE(family.program().nodes().size(), 64u);
  auto serial = compile_with(family, t, 1);
  ASSERT_TRUE(serial) << serial.error().to_string();
  const std::string serial_text = serial->plan().canonical_text();
  for (unsigned threads : {2u, 3u, 8u}) {
    for (int repeat = 0; repeat < 3; ++repeat) {
      auto parallel = compile_with(family, t, threads);
      ASSERT_TRUE(parallel) << parallel.error().to_string();
      EXPECT_EQ(parallel->plan().plan_hash(), serial->plan().plan_hash()) << threads << " threads";
      EXPECT_EQ(parallel->plan().canonical_text(), serial_text) << threads << " threads";
      EXPECT_EQ(parallel->resolution.node_resolutions, serial->resolution.node_resolutions);
    }
  }
}

// More nodes than one block of the plan encoder's parallel node rows (1,024):
// the rows of every block are copied in order.
TEST(ParallelResolutionTest, PlanRowsEncodedInSeveralBlocksKeepTheirOrder) {
  const Target t = example_target();
  const PreparedModelFamily family = four_layer_llama(70);
  ASSERT_GT(family.program().nodes().size(), 1024u);
  auto serial = compile_with(family, t, 1);
  ASSERT_TRUE(serial) << serial.error().to_string();
  auto parallel = compile_with(family, t, 3);
  ASSERT_TRUE(parallel) << parallel.error().to_string();
  EXPECT_EQ(parallel->plan().plan_hash(), serial->plan().plan_hash());
  EXPECT_EQ(parallel->plan().canonical_text(), serial->plan().canonical_text());
}

TEST(ParallelResolutionTest, TheFirstFailingNodeIsReportedWhateverTheThreads) {
  const Target t = example_target();
  const PreparedModelFamily family = four_layer_llama();
  const auto& nodes = family.program().nodes();
  ASSERT_GE(nodes.size(), 60u);
  // Two nodes no provider can run, in different chunks: the earlier one is
  // the error, as in a serial loop, however the chunks were shared.
  const std::vector<NodeId> impossible = {nodes[37]->id, nodes[55]->id};
  auto serial = compile_with(family, t, 1, impossible);
  ASSERT_FALSE(serial);
  EXPECT_THAT(serial.error().to_string(), HasSubstr(nodes[37]->id.str()));
  for (unsigned threads : {2u, 4u, 8u}) {
    for (int repeat = 0; repeat < 5; ++repeat) {
      auto parallel = compile_with(family, t, threads, impossible);
      ASSERT_FALSE(parallel);
      EXPECT_EQ(parallel.error().to_string(), serial.error().to_string()) << threads << " threads";
    }
  }
}

}  // namespace
}  // namespace ferrite
