// The approximate ggml block materializers end to end on stories260K: the
// approval is measured, checked by the compiler, embedded in the plan, shown
// by explain; without it (or with a forged one) compilation is refused; the
// executor quantizes at load time and refuses weights the approval did not
// measure; the result stays close to the f32 model.
#include <cmath>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/plan_explanation.h"
#include "ferrite/core/fingerprint.h"
#include "ferrite/format/weight_quality_file.h"
#include "ferrite/materializers/ggml_block_materializer.h"
#include "families/llama/llama_checkpoint.h"
#include "ferrite/plan/program_plan_compiler.h"
#include "providers/cpu_fast/cpu_fast.h"
#include "providers/cpu_reference/cpu_reference.h"
#include "support/numeric.h"

namespace ferrite {
namespace ggml_block_materializer_test {

using ::testing::HasSubstr;

const std::filesystem::path kStories =
    std::filesystem::path(FERRITE_SOURCE_DIR) / ".." / "shared" / "models" / "stories260K.gguf";

class GgmlBlockMaterializerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto checkpoint = open_llama_checkpoint(kStories, std::nullopt);
    ASSERT_TRUE(checkpoint) << checkpoint.error().to_string();
    checkpoint_ = std::move(*checkpoint);
    auto family = build_llama_family(checkpoint_.config);
    ASSERT_TRUE(family) << family.error().to_string();
    family_.emplace(std::move(*family));
    auto registry = default_weight_materializers();
    ASSERT_TRUE(registry) << registry.error().to_string();
    registry_.emplace(std::move(*registry));
    ASSERT_TRUE(add_cpu_reference_providers(providers_));
    ASSERT_TRUE(add_cpu_fast_providers(providers_, CpuFastOptions{.threads = 1}));
  }

  const WeightMaterializer& materializer(const GgmlBlockFormat& format) const {
    return *registry_->find(ggml_block_materializer_id(format));
  }

  Result<WeightQualityApproval> measure(const GgmlBlockFormat& format) const {
    const WeightSource& weights = *checkpoint_.weights;
    return measure_weight_quality(
        materializer(format), *family_,
        [&](const WeightComponentSpec& c, std::span<std::byte> to) { return weights.fill(c, to); });
  }

  Result<ProgramPlanCompilation> compile(WeightMaterializerSelection selection) const {
    FERRITE_ASSIGN_OR_RETURN(auto target, providers_.target(host_cpu_device(uint64_t{1} << 32)));
    FERRITE_ASSIGN_OR_RETURN(auto options,
                             ProgramPlanCompileOptions::create(decoder_compile_inputs(8)));
    prefer_providers(kCpuFastProviderPrefix, *family_, options);
    if (selection.quality_approval) {
      options.require_weight_materializer(selection.materializer_id, *selection.quality_approval);
    } else {
      options.require_weight_materializer(selection.materializer_id);
    }
    const RuntimePolicy policy{PolicyId::literal("policy.test"), {1, 0}, uint64_t{1} << 32, 0, 1,
                               8, {DynamicStorageProfile::linear_contiguous()}};
    return ProgramPlanCompiler::compile(*family_, target.catalog, policy, target.estimators,
                                        *registry_, options);
  }

  // Logits after a six-token prompt.
  Result<std::vector<float>> logits(const ProgramPlanCompilation& compiled,
                                    const WeightSource& weights) const {
    const ExecutionWeightPlan& execution = compiled.resolution.execution_weights;
    FERRITE_ASSIGN_OR_RETURN(
        auto executor, Executor::load(compiled.executable, *family_, providers_, weights, execution,
                                      *registry_->find(execution.materializer().id)));
    const std::vector<uint32_t> prompt{1, 403, 407, 261, 378, 432};
    const std::vector<uint32_t> positions{0, 1, 2, 3, 4, 5};
    FERRITE_RETURN_IF_ERROR(executor->write_input(ProgramValueId::literal(kDecoderTokens), prompt));
    FERRITE_RETURN_IF_ERROR(
        executor->write_input(ProgramValueId::literal(kDecoderPositions), positions));
    FERRITE_RETURN_IF_ERROR(executor->run(prompt.size()));
    FERRITE_ASSIGN_OR_RETURN(auto out, executor->output_f32(ProgramValueId::literal(kDecoderLogits)));
    return std::vector<float>(out.begin(), out.end());
  }

  LlamaCheckpoint checkpoint_;
  std::optional<PreparedModelFamily> family_;
  std::optional<WeightMaterializerRegistry> registry_;
  CpuProviderRegistry providers_;
};

TEST_F(GgmlBlockMaterializerTest, ExecutionSchemaQuantizesEveryMatrixOfWholeBlocks) {
  auto schema = materializer(kGgmlQ8_0).execution_schema(*family_);
  ASSERT_TRUE(schema) << schema.error().to_string();
  EXPECT_EQ(schema->format_id.str(), kGgmlBlocksWeightFormatId);
  uint64_t blocks = 0, dense = 0;
  for (const auto& c : schema->components) {
    const auto* source = family_->weight_schema().find_component(c.id);
    ASSERT_NE(source, nullptr);
    if (std::holds_alternative<BlockQuantizedEncoding>(c.encoding)) {
      ++blocks;
      // [rows, cols] → [rows, cols / 32] blocks of 34 bytes.
      ASSERT_EQ(source->dimensions.size(), 2u) << c.id.str();
      EXPECT_EQ(c.dimensions, (std::vector<uint64_t>{source->dimensions[0],
                                                     source->dimensions[1] / 32}));
      EXPECT_EQ(std::get<BlockQuantizedEncoding>(c.encoding).bytes_per_block, 34u);
    } else {
      ++dense;
      EXPECT_EQ(c, *source) << c.id.str();
      // Kept: vectors, and ffn_down (rows of 172 values).
      EXPECT_TRUE(source->dimensions.size() == 1 || source->dimensions[1] % 32 != 0) << c.id.str();
    }
  }
  // 5 layers × 6 matrices + token_embd + output; norms and ffn_down stay.
  EXPECT_EQ(blocks, 32u);
  EXPECT_EQ(dense, 5u * 3 + 1);
  auto approximated = materializer(kGgmlQ8_0).approximate_components(*family_, *schema);
  ASSERT_TRUE(approximated);
  EXPECT_EQ(approximated->size(), 32u);
}

TEST_F(GgmlBlockMaterializerTest, MaterializedBlocksAreTheQuantizerOutputWithinHalfAStep) {
  const auto& m = materializer(kGgmlQ8_0);
  auto schema = m.execution_schema(*family_);
  ASSERT_TRUE(schema);
  const WeightComponentSpec* target = schema->find_component(WeightId::literal("component.blk.0.attn_q"));
  const WeightComponentSpec* source =
      family_->weight_schema().find_component(WeightId::literal("component.blk.0.attn_q"));
  ASSERT_NE(target, nullptr);
  std::vector<std::byte> bytes(*source->physical_bytes()), blocks(*target->physical_bytes());
  ASSERT_TRUE(checkpoint_.weights->fill(*source, bytes));
  ASSERT_TRUE(m.materialize_component(*source, bytes, *target, blocks));
  std::vector<float> values(bytes.size() / 4);
  std::memcpy(values.data(), bytes.data(), bytes.size());
  auto expected = quantize_ggml_blocks(kGgmlQ8_0, values);
  ASSERT_TRUE(expected);
  EXPECT_EQ(blocks, *expected);
  // Every value within half a quantization step (plus the f16 scale's rounding).
  for (size_t b = 0; b < values.size() / 32; ++b) {
    float decoded[32];
    dequantize_ggml_block(kGgmlQ8_0, blocks.data() + b * 34, decoded);
    const float d = ggml_block_scale(blocks.data() + b * 34);
    for (int i = 0; i < 32; ++i) {
      EXPECT_LE(std::fabs(decoded[i] - values[b * 32 + i]), 0.5f * d + 128 * d / 1024)
          << "block " << b << " value " << i;
    }
  }
  auto quality = m.measure_component(*source, bytes, *target, blocks);
  ASSERT_TRUE(quality);
  EXPECT_EQ(quality->values, values.size());
  EXPECT_GT(quality->relative_l2, 0.0);
  EXPECT_LT(quality->relative_l2, 0.01);
  EXPECT_EQ(quality->non_finite, 0u);
}

TEST_F(GgmlBlockMaterializerTest, WithoutApprovalTheCompilerRefuses) {
  for (const GgmlBlockFormat* format : {&kGgmlQ8_0, &kGgmlQ4_0}) {
    auto refused = compile({ggml_block_materializer_id(*format), std::nullopt});
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code(), ErrorCode::kWeightMaterializerQualityApprovalRequired);
    EXPECT_THAT(refused.error().message(), HasSubstr("requires explicit numerical-quality approval"));
  }
}

TEST_F(GgmlBlockMaterializerTest, ApprovedPlanCarriesTheStatisticsAndExplainShowsThem) {
  auto approval = measure(kGgmlQ8_0);
  ASSERT_TRUE(approval) << approval.error().to_string();
  ASSERT_EQ(approval->components.size(), 32u);
  for (const auto& c : approval->components) {
    EXPECT_LT(c.relative_l2, 0.02) << c.component_id.str();
    EXPECT_GT(c.max_abs_error, 0.0) << c.component_id.str();
  }
  auto compiled = compile({ggml_block_materializer_id(kGgmlQ8_0), *approval});
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  // A changed schema with an approval: the streamed fingerprint is the document's.
  const ExecutionWeightPlan& execution = compiled->resolution.execution_weights;
  EXPECT_NE(execution.schema(), family_->weight_schema());
  EXPECT_EQ(execution.fingerprint(), canonical_fingerprint(execution.to_json()));
  const auto payload = compiled->plan().to_json()["payload"];
  ASSERT_TRUE(payload.contains("weight_quality_approval"));
  EXPECT_EQ(payload["weight_quality_approval"], approval->to_json());
  EXPECT_EQ(payload["weight_materializer"]["id"], "weight-materializer.ggml_q8_0");
  EXPECT_EQ(payload["weight_materializer"]["quality_contract"]["max_relative_l2"],
            "2.00000000e-02");
  EXPECT_EQ(payload["weight_format"], kGgmlBlocksWeightFormatId);
  // Same inputs, same plan bytes.
  auto again = compile({ggml_block_materializer_id(kGgmlQ8_0), *approval});
  ASSERT_TRUE(again);
  EXPECT_EQ(again->plan().canonical_text(), compiled->plan().canonical_text());
  // Weights shrink: 34 bytes per 32 values instead of 128.
  auto f32 = compile({});
  ASSERT_TRUE(f32);
  EXPECT_FALSE(f32->plan().to_json()["payload"].contains("weight_quality_approval"));
  EXPECT_LT(compiled->plan().memory().static_bytes, f32->plan().memory().static_bytes / 2);

  auto explanation = cli::explain_plan(compiled->plan().to_json());
  ASSERT_TRUE(explanation) << explanation.error().to_string();
  const std::string text = cli::render_text(*explanation);
  EXPECT_THAT(text, HasSubstr("weights: materializer weight-materializer.ggml_q8_0 1.0 "
                              "(approximate), contract relative L2 <= 2.00000000e-02 · approved "
                              "32 components"));
  EXPECT_THAT(text, HasSubstr("weight quality approval (32 components"));
  EXPECT_THAT(text, HasSubstr("component.blk.3.ffn_up"));
  EXPECT_EQ(cli::to_json(*explanation)["weight_materialization"]["quality_approval"].size(), 32u);
}

TEST_F(GgmlBlockMaterializerTest, ForgedOrForeignApprovalsAreRefused) {
  auto measured = measure(kGgmlQ8_0);
  ASSERT_TRUE(measured) << measured.error().to_string();
  const WeightMaterializerId q8 = ggml_block_materializer_id(kGgmlQ8_0);
  struct Case {
    const char* what;
    std::function<void(WeightQualityApproval&)> forge;
    const char* message;
  };
  const std::vector<Case> cases{
      {"above the bound", [](auto& a) { a.components[3].relative_l2 = 0.03; },
       "above the contract's 2.00000000e-02"},
      {"non-finite values", [](auto& a) { a.components[0].non_finite = 2; },
       "has 2 non-finite values"},
      {"a missing component", [](auto& a) { a.components.erase(a.components.begin() + 5); },
       "has no measurement"},
      {"an extra component",
       [](auto& a) {
         a.components.push_back(a.components.back());
         a.components.back().component_id = WeightId::literal("component.zz");
       },
       "does not approximate"},
      {"unsorted", [](auto& a) { std::swap(a.components[0], a.components[1]); },
       "out of order"},
      {"another materializer",
       [](auto& a) { a.materializer_id = WeightMaterializerId::literal(kGgmlQ4_0MaterializerId); },
       "the approval is for materializer"},
      {"another version", [](auto& a) { a.materializer_version = {2, 0}; },
       "was measured with version 2.0"},
      {"another model", [](auto& a) { a.source_schema_fingerprint = std::string(64, 'a'); },
       "another weight schema"},
      {"another execution schema",
       [](auto& a) { a.execution_schema_fingerprint = std::string(64, 'b'); },
       "another execution weight schema"},
  };
  for (const auto& c : cases) {
    WeightQualityApproval forged = *measured;
    c.forge(forged);
    auto refused = compile({q8, forged});
    ASSERT_FALSE(refused) << c.what;
    EXPECT_EQ(refused.error().code(), ErrorCode::kWeightMaterializerQualityApprovalRequired)
        << c.what;
    EXPECT_THAT(refused.error().message(), HasSubstr(c.message)) << c.what;
  }
  // An exact materializer cannot consume an approval.
  auto exact = compile({WeightMaterializerId::literal(kIdentityWeightMaterializerId), *measured});
  ASSERT_FALSE(exact);
  EXPECT_EQ(exact.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(exact.error().message(), HasSubstr("cannot consume an approximate quality approval"));
}

// Serves the checkpoint's weights with one value of one tensor changed.
class AlteredWeights final : public WeightSource {
 public:
  AlteredWeights(const WeightSource& base, WeightId id) : base_(base), id_(std::move(id)) {}
  Result<void> fill(const WeightComponentSpec& component,
                    std::span<std::byte> destination) const override {
    FERRITE_RETURN_IF_ERROR(base_.fill(component, destination));
    if (component.id == id_) {
      float v;
      std::memcpy(&v, destination.data(), 4);
      v += 1.0f / 64;
      std::memcpy(destination.data(), &v, 4);
    }
    return {};
  }

 private:
  const WeightSource& base_;
  WeightId id_;
};

TEST_F(GgmlBlockMaterializerTest, LoadQuantizesApprovedWeightsAndRefusesOthers) {
  auto f32 = compile({});
  ASSERT_TRUE(f32);
  auto exact = logits(*f32, *checkpoint_.weights);
  ASSERT_TRUE(exact) << exact.error().to_string();
  for (const GgmlBlockFormat* format : {&kGgmlQ8_0, &kGgmlQ4_0}) {
    auto approval = measure(*format);
    ASSERT_TRUE(approval) << approval.error().to_string();
    auto compiled = compile({ggml_block_materializer_id(*format), *approval});
    ASSERT_TRUE(compiled) << compiled.error().to_string();
    auto approximate = logits(*compiled, *checkpoint_.weights);
    ASSERT_TRUE(approximate) << approximate.error().to_string();
    // The measured stories260K logits: 0.7% (Q8_0), 9% (Q4_0) from f32.
    EXPECT_LT(relative_l2(*approximate, *exact), format == &kGgmlQ8_0 ? 0.02 : 0.25)
        << format->name;
    EXPECT_GT(relative_l2(*approximate, *exact), 0.0) << format->name;

    AlteredWeights altered(*checkpoint_.weights, WeightId::literal("component.blk.2.ffn_gate"));
    auto refused = logits(*compiled, altered);
    ASSERT_FALSE(refused) << format->name;
    EXPECT_EQ(refused.error().code(), ErrorCode::kWeightMaterializerQualityApprovalRequired);
    EXPECT_THAT(refused.error().message(),
                HasSubstr("weight component `component.blk.2.ffn_gate` differs from the weights "
                          "the quality approval measured"));
  }
  // A plan loaded with other execution weights than it was compiled with.
  auto q8 = measure(kGgmlQ8_0);
  ASSERT_TRUE(q8);
  auto compiled = compile({ggml_block_materializer_id(kGgmlQ8_0), *q8});
  ASSERT_TRUE(compiled);
  auto mismatched = Executor::load(compiled->executable, *family_, providers_, *checkpoint_.weights);
  ASSERT_FALSE(mismatched);
  EXPECT_THAT(mismatched.error().message(), HasSubstr("compiled with other execution weights"));
}

// Item: approvals are measured, not trusted. An approval edited to understate
// a statistic (its sha256 values still right, its numbers still within the
// contract) compiles — the compiler cannot see the weights — but the weights
// refute it wherever they are at hand: verify_quality_approval (a compile
// from a model file) and the executor's load both refuse it, naming the
// component, the statistic and both values.
TEST_F(GgmlBlockMaterializerTest, ForgedApprovalUnderstatingAStatisticIsRefusedWhereWeightsAreAtHand) {
  auto measured = measure(kGgmlQ8_0);
  ASSERT_TRUE(measured) << measured.error().to_string();
  const WeightSource& weights = *checkpoint_.weights;
  const WeightComponentFill fill = [&](const WeightComponentSpec& c, std::span<std::byte> to) {
    return weights.fill(c, to);
  };
  // The honest approval, as written to and read back from its file (9
  // significant digits), is borne out by the weights.
  auto reread = read_weight_quality_text(weight_quality_file_text(*measured));
  ASSERT_TRUE(reread) << reread.error().to_string();
  auto honest = compile({ggml_block_materializer_id(kGgmlQ8_0), *reread});
  ASSERT_TRUE(honest) << honest.error().to_string();
  const WeightMaterializer& q8 = materializer(kGgmlQ8_0);
  auto verified = verify_quality_approval(*family_, fill, honest->resolution.execution_weights, q8);
  EXPECT_TRUE(verified) << verified.error().to_string();
  auto loaded = logits(*honest, weights);
  EXPECT_TRUE(loaded) << loaded.error().to_string();

  struct Case {
    const char* statistic;
    std::function<void(ComponentQuality&)> understate;
  };
  const std::vector<Case> cases{
      {"relative_l2", [](ComponentQuality& c) { c.relative_l2 *= 0.5; }},
      {"relative_l2", [](ComponentQuality& c) { c.relative_l2 *= 1 - 1e-4; }},
      {"max_abs_error", [](ComponentQuality& c) { c.max_abs_error *= 0.5; }},
  };
  for (const auto& c : cases) {
    WeightQualityApproval forged = *measured;
    ComponentQuality& target = forged.components[7];
    const std::string component(target.component_id.str());
    const ComponentQuality truth = target;
    c.understate(target);
    const std::string approved_value = quality_number_text(
        std::string_view(c.statistic) == "relative_l2" ? target.relative_l2 : target.max_abs_error);
    const std::string measured_value = quality_number_text(
        std::string_view(c.statistic) == "relative_l2" ? truth.relative_l2 : truth.max_abs_error);
    auto compiled = compile({ggml_block_materializer_id(kGgmlQ8_0), forged});
    ASSERT_TRUE(compiled) << compiled.error().to_string();  // within the contract: accepted
    EXPECT_EQ(compiled->plan().to_json()["payload"]["weight_quality_approval"], forged.to_json());

    const std::string expected = fmt::format(
        "weight component `{}`: the quality approval states {} {}, but the weights measure {}",
        component, c.statistic, approved_value, measured_value);
    auto refused = verify_quality_approval(*family_, fill, compiled->resolution.execution_weights, q8);
    ASSERT_FALSE(refused) << c.statistic;
    EXPECT_EQ(refused.error().code(), ErrorCode::kWeightMaterializerQualityApprovalRequired);
    EXPECT_THAT(refused.error().message(), HasSubstr(expected));
    EXPECT_EQ(refused.error().fields().at("component_id"), component);

    auto at_load = logits(*compiled, weights);
    ASSERT_FALSE(at_load) << c.statistic;
    EXPECT_EQ(at_load.error().code(), ErrorCode::kWeightMaterializerQualityApprovalRequired);
    EXPECT_THAT(at_load.error().message(), HasSubstr(expected));
    EXPECT_EQ(at_load.error().fields().at("statistic"), c.statistic);
  }
  // An overstated statistic is merely pessimistic: accepted.
  WeightQualityApproval pessimistic = *measured;
  pessimistic.components[7].relative_l2 *= 1.5;
  auto compiled = compile({ggml_block_materializer_id(kGgmlQ8_0), pessimistic});
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  EXPECT_TRUE(verify_quality_approval(*family_, fill, compiled->resolution.execution_weights, q8));
  EXPECT_TRUE(logits(*compiled, weights));
}

}  // namespace ggml_block_materializer_test
}  // namespace ferrite
