// Compile threads (compile_options.h) change how fast a plan is built, never
// its bytes: the same program compiles to the same canonical plan and hash
// with 1 to 8 resolution threads, and a failure names the same (first
// failing) node. So does an estimate the compiler re-issues instead of
// asking its estimator again (OperationResourceEstimator::reads_value_storage).
#include <atomic>
#include <set>
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

// Forwards to one of the example catalog's estimators, counting the calls,
// and says it reads storage or not as told.
class ForwardingEstimator final : public OperationResourceEstimator {
 public:
  ForwardingEstimator(const OperationResourceEstimator& inner, bool reads_storage,
                      std::atomic<int>& calls)
      : inner_(inner), reads_storage_(reads_storage), calls_(calls) {}
  const OperationProviderDescriptor& descriptor() const override { return inner_.descriptor(); }
  Result<OperationResourceEstimate> estimate_resources(
      const OperationResourceEstimateRequest& request) const override {
    ++calls_;
    return inner_.estimate_resources(request);
  }
  bool reads_value_storage() const override { return reads_storage_; }

 private:
  const OperationResourceEstimator& inner_;
  bool reads_storage_;
  std::atomic<int>& calls_;
};

// `t` with each of its estimators behind a ForwardingEstimator.
Target forwarded(const Target& t, bool reads_storage, std::atomic<int>& calls) {
  std::vector<std::shared_ptr<const OperationResourceEstimator>> estimators;
  std::set<ProviderId> seen;
  for (const auto& [operation, providers] : t.target.catalog.providers()) {
    for (const OperationProviderDescriptor& provider : providers) {
      if (!seen.insert(provider.provider_id).second) continue;
      const OperationResourceEstimator* inner = t.target.estimators.find(provider.provider_id);
      EXPECT_NE(inner, nullptr) << provider.provider_id.str();
      if (inner == nullptr) continue;
      estimators.push_back(std::make_shared<ForwardingEstimator>(*inner, reads_storage, calls));
    }
  }
  auto registry = EstimatorRegistry::create(std::move(estimators));
  EXPECT_TRUE(registry) << registry.error().to_string();
  return {CompilationTarget{t.target.catalog, std::move(*registry)}, t.policy};
}

// The example catalog's estimators are declarative: they read no storage, so
// a round that moved only storage re-issues their earlier plans. The plan is
// the one a compile that asks them in every round makes, byte for byte, with
// fewer calls.
TEST(ParallelResolutionTest, ReissuedEstimatesBuildTheSamePlanBytes) {
  const Target t = example_target();
  for (const auto& [operation, providers] : t.target.catalog.providers()) {
    for (const OperationProviderDescriptor& provider : providers) {
      EXPECT_FALSE(t.target.estimators.find(provider.provider_id)->reads_value_storage())
          << provider.provider_id.str();
    }
  }
  const PreparedModelFamily family = four_layer_llama();
  for (unsigned threads : {1u, 3u}) {
    std::atomic<int> reissuing_calls{0};
    std::atomic<int> asking_calls{0};
    const Target reissuing = forwarded(t, false, reissuing_calls);
    const Target asking = forwarded(t, true, asking_calls);
    auto reissued = compile_with(family, reissuing, threads);
    auto asked = compile_with(family, asking, threads);
    auto plain = compile_with(family, t, threads);
    ASSERT_TRUE(reissued) << reissued.error().to_string();
    ASSERT_TRUE(asked) << asked.error().to_string();
    ASSERT_TRUE(plain) << plain.error().to_string();
    EXPECT_EQ(reissued->plan().canonical_text(), asked->plan().canonical_text()) << threads;
    EXPECT_EQ(reissued->plan().plan_hash(), asked->plan().plan_hash()) << threads;
    EXPECT_EQ(plain->plan().canonical_text(), asked->plan().canonical_text()) << threads;
    EXPECT_EQ(reissued->resolution.node_resolutions, asked->resolution.node_resolutions);
    // Every node is estimated at least once; the packing round moved every
    // node's activations, and its estimates are re-issued.
    EXPECT_GE(reissuing_calls.load(), static_cast<int>(family.program().nodes().size()));
    const int nodes = static_cast<int>(family.program().nodes().size());
    EXPECT_GT(asking_calls.load(), reissuing_calls.load() + nodes / 2) << threads;
  }
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
