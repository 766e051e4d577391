// The Llama-decoder families (llama with Llama 3 rope factors and a tied
// classifier, a Mistral/SmolLM-like llama config, qwen2, qwen3, phi3): a synthetic
// F32 GGUF per family, opened through the builtin registry, compiled and
// greedily decoded on cpu.reference and on cpu.fast, checked token by token
// and logit by logit against tests/support/synthetic_decoder.h's independent
// double-precision forward pass; the config mappings' errors (missing keys,
// missing and misshapen tensors) name the key or tensor; `explain` names the
// family.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/run_command.h"
#include "families/builtin/builtin_families.h"
#include "families/llama/llama_family.h"
#include "ferrite/families/checkpoint.h"
#include "ferrite/plan/program_plan_compiler.h"
#include "ferrite/runtime/generation.h"
#include "providers/cpu_fast/cpu_fast.h"
#include "providers/cpu_reference/cpu_reference.h"
#include "support/cli_invoke.h"
#include "support/synthetic_decoder.h"

namespace ferrite {
namespace decoder_families_test {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::DecoderReference;
using testing::DecoderShape;
using testing::DecoderTensors;

struct Family {
  const char* label;
  DecoderShape shape;
};

// Each family's synthetic shape. qwen3's heads are 24 wide (q is 96 wide on
// a 64-wide model), as Qwen3's key_length differs from dim / heads.
std::vector<Family> families() {
  DecoderShape llama3{.arch = "llama", .theta = 500000.0f, .rope_freqs = true, .tied = true};
  // Mistral / SmolLM GGUFs are `llama` files: grouped heads (8/2), a large
  // theta, untied (Mistral) classifier.
  DecoderShape mistral{.arch = "llama", .dim = 64, .heads = 8, .kv_heads = 2, .head_dim = 8,
                       .theta = 1000000.0f};
  DecoderShape qwen2{.arch = "qwen2", .theta = 1000000.0f, .eps = 1e-6f, .qkv_bias = true};
  DecoderShape qwen3{.arch = "qwen3", .head_dim = 24, .theta = 1000000.0f, .eps = 1e-6f,
                     .qk_norm = true, .tied = true};
  // phi3: fused attn_qkv [q+2kv, dim] and gate+up ffn_up [2 ffn, dim].
  DecoderShape phi3{.arch = "phi3", .heads = 4, .kv_heads = 4, .head_dim = 16};
  return {{"llama3", llama3}, {"mistral", mistral}, {"qwen2", qwen2}, {"qwen3", qwen3},
          {"phi3", phi3}};
}

class DecoderFamiliesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ferrite-decoder-families-" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "-" +
            std::to_string(static_cast<long>(::getpid())));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// Opens `path` with the builtin families, compiles its program for `capacity`
// tokens and loads it.
struct Loaded {
  FamilyRegistry registry;  // owns the room checkpoint.family points to
  Checkpoint checkpoint;
  PreparedModelFamily family;
  CpuProviderRegistry providers;
  ExecutablePlan executable;
  std::unique_ptr<Executor> executor;
};

Result<std::unique_ptr<Loaded>> load(const fs::path& path, uint64_t capacity, bool fast) {
  FERRITE_ASSIGN_OR_RETURN(FamilyRegistry registry, builtin_families());
  FERRITE_ASSIGN_OR_RETURN(Checkpoint checkpoint, open_checkpoint(registry, path, std::nullopt));
  FERRITE_ASSIGN_OR_RETURN(PreparedModelFamily family,
                           checkpoint.family->build_program(checkpoint.config, 64));
  CpuProviderRegistry providers;
  FERRITE_RETURN_IF_ERROR(add_cpu_reference_providers(providers));
  if (fast) FERRITE_RETURN_IF_ERROR(add_cpu_fast_providers(providers, {.threads = 2}));
  FERRITE_ASSIGN_OR_RETURN(auto target, providers.target(host_cpu_device(uint64_t{1} << 32)));
  FERRITE_ASSIGN_OR_RETURN(auto options,
                           ProgramPlanCompileOptions::create(decoder_compile_inputs(capacity)));
  if (fast) prefer_providers(kCpuFastProviderPrefix, family, options);
  const RuntimePolicy policy{PolicyId::literal("policy.test"), {1, 0}, uint64_t{1} << 32, 0, 1,
                             capacity, {DynamicStorageProfile::linear_contiguous()}};
  FERRITE_ASSIGN_OR_RETURN(auto compiled,
                           ProgramPlanCompiler::compile(family, target.catalog, policy,
                                                        target.estimators,
                                                        WeightMaterializerRegistry::identity_only(),
                                                        options));
  auto out = std::unique_ptr<Loaded>(new Loaded{std::move(registry), std::move(checkpoint),
                                                std::move(family),
                                                std::move(providers),
                                                std::move(compiled.executable), nullptr});
  FERRITE_ASSIGN_OR_RETURN(out->executor, Executor::load(out->executable, out->family,
                                                         out->providers, *out->checkpoint.weights));
  return out;
}

Result<std::vector<float>> step(Executor& executor, const std::vector<uint32_t>& tokens,
                                uint32_t first_position) {
  std::vector<uint32_t> positions(tokens.size());
  for (uint32_t i = 0; i < positions.size(); ++i) positions[i] = first_position + i;
  FERRITE_RETURN_IF_ERROR(executor.write_input(ProgramValueId::literal("value.tokens"), tokens));
  FERRITE_RETURN_IF_ERROR(
      executor.write_input(ProgramValueId::literal("value.positions"), positions));
  FERRITE_RETURN_IF_ERROR(executor.run(tokens.size()));
  FERRITE_ASSIGN_OR_RETURN(auto logits,
                           executor.output_f32(ProgramValueId::literal("value.logits")));
  return std::vector<float>(logits.begin(), logits.end());
}

template <class T>
uint32_t argmax(const std::vector<T>& v) {
  return static_cast<uint32_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

// Top-1 minus top-2.
double margin(const std::vector<double>& v) {
  std::vector<double> sorted = v;
  std::partial_sort(sorted.begin(), sorted.begin() + 2, sorted.end(), std::greater<>());
  return sorted[0] - sorted[1];
}

constexpr uint64_t kSteps = 12;
const std::vector<uint32_t> kPrompt{1, 270, 45, 271, 9};

// Greedy decoding of kSteps tokens after kPrompt (prefilled in one step):
// every token equals the reference's, every logit is within 1e-3 of it (f32
// kernels against double), and the reference's own top-1 margin is reported.
void expect_matches_reference(const fs::path& path, const Family& f, bool fast) {
  const DecoderTensors tensors = testing::synthetic_decoder_tensors(f.shape);
  const DecoderReference reference(f.shape, tensors);
  auto loaded = load(path, 8, fast);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  EXPECT_EQ((*loaded)->checkpoint.family->name, f.shape.arch);
  std::vector<uint32_t> sequence = kPrompt;
  std::vector<uint32_t> input = kPrompt;
  double smallest_margin = INFINITY, worst = 0;
  (*loaded)->executor->reset_states();
  for (uint64_t s = 0; s < kSteps; ++s) {
    auto got = step(*(*loaded)->executor, input,
                    static_cast<uint32_t>(sequence.size() - input.size()));
    ASSERT_TRUE(got) << got.error().to_string();
    const std::vector<double> expected = reference.logits(sequence);
    ASSERT_EQ(got->size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      worst = std::max(worst, std::fabs(static_cast<double>((*got)[i]) - expected[i]));
    }
    smallest_margin = std::min(smallest_margin, margin(expected));
    ASSERT_EQ(argmax(*got), argmax(expected)) << f.label << " step " << s;
    sequence.push_back(argmax(expected));
    input = {sequence.back()};
  }
  EXPECT_LT(worst, 1e-3) << f.label;
  // Greedy choices stay far from ties: the reference's smallest top-1 margin
  // is over 100 times the largest logit difference (4.6·10^3 (phi3, cpu.fast)
  // to 7·10^5 (llama3, cpu.reference) measured), so equal tokens are not luck.
  EXPECT_GT(smallest_margin, 100 * worst) << f.label;
  std::cout << f.label << (fast ? " (fast)" : " (reference)") << ": max |logit difference| "
            << worst << ", smallest reference top-1 margin " << smallest_margin << "\n";
}

TEST_F(DecoderFamiliesTest, EveryFamilyDecodesAsTheIndependentForwardPass) {
  for (const Family& f : families()) {
    SCOPED_TRACE(f.label);
    const fs::path path = dir_ / (std::string(f.label) + ".gguf");
    const DecoderTensors tensors = testing::synthetic_decoder_tensors(f.shape);
    ASSERT_TRUE(testing::write_synthetic_decoder(path, f.shape, tensors));
    expect_matches_reference(path, f, false);
    expect_matches_reference(path, f, true);
  }
}

// The test can fail: the same file read as if it were another convention
// (qwen2's biases dropped from the reference, llama3's factors ignored)
// disagrees with what Ferrite computes.
TEST_F(DecoderFamiliesTest, TheReferenceSeesEachVariant) {
  for (const Family& f : families()) {
    if (!f.shape.rope_freqs && !f.shape.qkv_bias && !f.shape.qk_norm) continue;
    DecoderShape plain = f.shape;
    plain.rope_freqs = plain.qkv_bias = false;
    const DecoderTensors tensors = testing::synthetic_decoder_tensors(f.shape);
    std::vector<uint32_t> sequence = kPrompt;
    const auto with = DecoderReference(f.shape, tensors).logits(sequence);
    if (f.shape.qk_norm) continue;  // (its norms are required by the reference)
    const auto without = DecoderReference(plain, tensors).logits(sequence);
    double difference = 0;
    for (size_t i = 0; i < with.size(); ++i) difference = std::max(difference, std::fabs(with[i] - without[i]));
    EXPECT_GT(difference, 1e-2) << f.label;
  }
}

TEST_F(DecoderFamiliesTest, TheRoomsMapTheirConfigs) {
  FamilyRegistry registry = *builtin_families();
  for (const Family& f : families()) {
    SCOPED_TRACE(f.label);
    const fs::path path = dir_ / (std::string(f.label) + ".gguf");
    ASSERT_TRUE(testing::write_synthetic_decoder(path, f.shape,
                                                 testing::synthetic_decoder_tensors(f.shape)));
    auto checkpoint = open_checkpoint(registry, path, std::nullopt);
    ASSERT_TRUE(checkpoint) << checkpoint.error().to_string();
    const auto& c = std::any_cast<const LlamaConfig&>(checkpoint->config);
    EXPECT_EQ(c.family, f.shape.arch);
    EXPECT_EQ(c.head_dim(), f.shape.head_dim);
    EXPECT_EQ(c.q_dim(), f.shape.q_dim());
    EXPECT_EQ(c.rope_convention, f.shape.half_split() ? "half_split" : "interleaved");
    EXPECT_EQ(c.rope_freq_factors, f.shape.rope_freqs);
    EXPECT_EQ(c.qkv_bias, f.shape.qkv_bias);
    EXPECT_EQ(c.qk_norm, f.shape.qk_norm);
    EXPECT_EQ(c.tied_output, f.shape.tied);
    EXPECT_EQ(c.vocab_size, f.shape.vocab);
    auto program = checkpoint->family->build_program(checkpoint->config, 32);
    ASSERT_TRUE(program) << program.error().to_string();
    EXPECT_EQ(program->program().to_json()["family"], "family." + f.shape.arch);
  }
}

TEST_F(DecoderFamiliesTest, MissingKeysAndTensorsAreNamed) {
  FamilyRegistry registry = *builtin_families();
  for (const Family& f : families()) {
    SCOPED_TRACE(f.label);
    const std::string a = f.shape.arch;
    const DecoderTensors tensors = testing::synthetic_decoder_tensors(f.shape);
    // A missing required key.
    for (const std::string key : {a + ".block_count", a + ".attention.layer_norm_rms_epsilon"}) {
      const fs::path path = dir_ / "missing-key.gguf";
      ASSERT_TRUE(testing::write_synthetic_decoder(path, f.shape, tensors, key));
      auto opened = open_checkpoint(registry, path, std::nullopt);
      ASSERT_FALSE(opened);
      EXPECT_THAT(opened.error().to_string(), HasSubstr(key));
    }
    // A missing variant tensor of the last layer.
    std::string variant;
    if (f.shape.qkv_bias) variant = "blk.1.attn_v.bias";
    if (f.shape.qk_norm) variant = "blk.1.attn_k_norm.weight";
    if (!variant.empty()) {
      DecoderTensors fewer = tensors;
      fewer.erase(variant);
      const fs::path path = dir_ / "missing-tensor.gguf";
      ASSERT_TRUE(testing::write_synthetic_decoder(path, f.shape, fewer));
      auto opened = open_checkpoint(registry, path, std::nullopt);
      ASSERT_FALSE(opened);
      EXPECT_THAT(opened.error().to_string(), HasSubstr(variant));
    }
    // A misshapen tensor: named when the weights are loaded.
    std::string misshapen = f.shape.rope_freqs ? "rope_freqs.weight"
                            : f.shape.qk_norm  ? "blk.0.attn_q_norm.weight"
                            : f.shape.qkv_bias ? "blk.0.attn_q.bias"
                                               : "blk.0.attn_k.weight";
    DecoderTensors wrong = tensors;
    // (phi3: k shorter by half its rows, so the fused attn_qkv is misshapen.)
    wrong[misshapen].dims[a == "phi3" ? 1 : 0] /= 2;
    wrong[misshapen].values.resize(wrong[misshapen].values.size() / 2);
    const fs::path path = dir_ / "misshapen.gguf";
    ASSERT_TRUE(testing::write_synthetic_decoder(path, f.shape, wrong));
    auto loaded = load(path, 4, false);
    ASSERT_FALSE(loaded);
    EXPECT_THAT(loaded.error().to_string(),
                HasSubstr(a == "phi3" ? std::string("blk.0.attn_qkv.weight") : misshapen));
  }
}

// qwen3 with a value_length other than its key_length is refused, naming the key.
TEST_F(DecoderFamiliesTest, Qwen3RefusesUnequalKeyAndValueLengths) {
  DecoderShape shape = families()[3].shape;
  ASSERT_EQ(shape.arch, "qwen3");
  const DecoderTensors tensors = testing::synthetic_decoder_tensors(shape);
  const fs::path path = dir_ / "qwen3.gguf";
  ASSERT_TRUE(testing::write_synthetic_decoder(path, shape, tensors,
                                               "qwen3.attention.value_length"));
  ASSERT_TRUE(open_checkpoint(*builtin_families(), path, std::nullopt));
  // Rewrite with value_length 8 by editing the spec through a drop-and-add.
  GgufFileSpec file;
  auto source = GgufFile::open(path);
  ASSERT_TRUE(source);
  for (const auto& key : source->model().metadata_order) {
    file.metadata.emplace_back(key, source->model().metadata.at(key));
  }
  file.metadata.push_back({"qwen3.attention.value_length", GgufValue{uint32_t{8}}});
  for (const auto& [name, t] : tensors) {
    std::vector<std::byte> bytes(t.values.size() * 4);
    std::memcpy(bytes.data(), t.values.data(), bytes.size());
    file.tensors.push_back({name, t.dims, kGgmlTypeF32, std::move(bytes)});
  }
  auto bytes = serialize_gguf(file);
  ASSERT_TRUE(bytes);
  cli::test_support::write_file(dir_ / "unequal.gguf",
                                std::string(reinterpret_cast<const char*>(bytes->data()), bytes->size()));
  auto opened = open_checkpoint(*builtin_families(), dir_ / "unequal.gguf", std::nullopt);
  ASSERT_FALSE(opened);
  EXPECT_THAT(opened.error().to_string(), HasSubstr("qwen3.attention.value_length"));
}

// `ferrite run --prompt-ids --print-ids` gives the reference's greedy tokens,
// and `explain` names the family.
TEST_F(DecoderFamiliesTest, TheCliRunsAndExplainsEachFamily) {
  for (const Family& f : families()) {
    SCOPED_TRACE(f.label);
    const fs::path path = dir_ / (std::string(f.label) + ".gguf");
    const DecoderTensors tensors = testing::synthetic_decoder_tensors(f.shape);
    ASSERT_TRUE(testing::write_synthetic_decoder(path, f.shape, tensors));
    std::vector<uint32_t> sequence = kPrompt;
    const DecoderReference reference(f.shape, tensors);
    std::string expected = "token ids:";
    for (int s = 0; s < 6; ++s) {
      sequence.push_back(argmax(reference.logits(sequence)));
      expected += " " + std::to_string(sequence.back());
    }
    const auto ran = cli::test_support::invoke(
        cli::run_run, cli::RunArgs{.model_path = path.string(),
                                   .settings = {.context = 32, .token_capacity = 8, .threads = 1},
                                   .steps = 6,
                                   .print_ids = true,
                                   .prompt_ids = "1 270 45 271 9",
                                   .ignore_eos = true});
    ASSERT_EQ(ran.code, cli::kExitOk) << ran.err;
    EXPECT_THAT(ran.out, HasSubstr(expected));
    const auto explained = cli::test_support::invoke(
        cli::run_explain, cli::ExplainArgs{.path = path.string(),
                                           .model = {.context = 32, .token_capacity = 8}});
    ASSERT_EQ(explained.code, cli::kExitOk) << explained.err;
    EXPECT_THAT(explained.out, HasSubstr("family family." + f.shape.arch));
  }
}

// config.json: each room's architecture entry, its keys and its tensor names.
TEST(DecoderFamiliesHfTest, TheRoomsMapConfigJsonAndTensorNames) {
  FamilyRegistry registry = *builtin_families();
  const std::string keys =
      R"("hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2,
         "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 280)";
  struct Case {
    const char* architecture;
    const char* family;
    std::string extra;
    std::vector<std::pair<const char*, std::optional<std::string>>> names;
  };
  const Case cases[] = {
      {"Qwen2ForCausalLM", "qwen2", "",
       {{"model.layers.1.self_attn.k_proj.bias", "blk.1.attn_k.bias"},
        {"model.layers.0.self_attn.q_proj.weight", "blk.0.attn_q.weight"},
        {"model.layers.2.self_attn.k_proj.bias", std::nullopt}}},
      {"Qwen3ForCausalLM", "qwen3", R"(, "head_dim": 24)",
       {{"model.layers.1.self_attn.q_norm.weight", "blk.1.attn_q_norm.weight"},
        {"model.layers.0.self_attn.k_norm.weight", "blk.0.attn_k_norm.weight"},
        {"model.layers.0.self_attn.q_proj.bias", std::nullopt}}},
      {"Phi3ForCausalLM", "phi3", "",
       {{"model.layers.1.self_attn.qkv_proj.weight", "blk.1.attn_qkv.weight"},
        {"model.layers.0.mlp.gate_up_proj.weight", "blk.0.ffn_up.weight"},
        {"model.layers.0.self_attn.o_proj.weight", "blk.0.attn_output.weight"},
        {"model.layers.0.mlp.up_proj.weight", std::nullopt}}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.architecture);
    const FamilyRoom* room = registry.find_hf_architecture(c.architecture);
    ASSERT_NE(room, nullptr);
    EXPECT_EQ(room->name, c.family);
    auto json = HfConfig::parse(
        fmt::format(R"({{"architectures": ["{}"], {}{}}})", c.architecture, keys, c.extra),
        "config.json");
    ASSERT_TRUE(json) << json.error().to_string();
    auto config = room->config_from_hf(*json);
    ASSERT_TRUE(config) << config.error().to_string();
    const auto& llama = std::any_cast<const LlamaConfig&>(*config);
    EXPECT_EQ(llama.family, c.family);
    EXPECT_EQ(llama.rope_convention, "half_split");
    EXPECT_EQ(llama.qkv_bias, std::string(c.family) == "qwen2");
    EXPECT_EQ(llama.qk_norm, std::string(c.family) == "qwen3");
    EXPECT_EQ(llama.head_dim(), std::string(c.family) == "qwen3" ? 24u : 16u);
    for (const auto& [hf, gguf] : c.names) {
      EXPECT_EQ(room->hf_tensor_name(hf, *config), gguf) << hf;
    }
  }
}

// scripts/oracle/compare_families.sh: with FERRITE_FAMILY_GGUF_DIR set,
// writes each family's synthetic file there, F32 and Q8_0 (else skipped).
// A family's peaked variant with rows of 256 values (whole K-quant
// super-blocks), as the oracle writes it for llama.cpp's quantizer.
DecoderShape peaked_shape(DecoderShape shape) {
  const uint64_t group = shape.heads / shape.kv_heads;
  shape.dim = 256;
  shape.heads = 8;
  shape.kv_heads = shape.heads / group;
  shape.head_dim = 32;
  shape.ffn = 512;
  shape.peaked_stride = 97;
  shape.residual_scale = 0.1f;
  return shape;
}

// The peaked variant (synthetic_decoder.h) does what the oracle relies on:
// for every family, the double-precision reference picks t + stride (an
// untied classifier) or t itself (tied) after a sequence ending in t, with a
// top-1 minus top-2 logit margin of at least 3 (quantization moves logits by
// far less).
TEST_F(DecoderFamiliesTest, PeakedModelsChooseFarFromTies) {
  for (const Family& f : families()) {
    SCOPED_TRACE(f.label);
    const DecoderShape peaked = peaked_shape(f.shape);
    const DecoderTensors tensors = testing::synthetic_decoder_tensors(peaked);
    for (const std::vector<uint32_t>& sequence :
         {std::vector<uint32_t>{1, 270, 45}, std::vector<uint32_t>{1, 260, 261, 262, 9}}) {
      const std::vector<double> logits = DecoderReference(peaked, tensors).logits(sequence);
      std::vector<double> sorted = logits;
      std::sort(sorted.begin(), sorted.end(), std::greater<>());
      const auto top = static_cast<uint64_t>(
          std::max_element(logits.begin(), logits.end()) - logits.begin());
      const uint64_t last = sequence.back();
      EXPECT_EQ(top, peaked.tied ? last : (last + 97) % peaked.vocab);
      EXPECT_GT(sorted[0] - sorted[1], 3.0);
    }
  }
}

TEST_F(DecoderFamiliesTest, WritesTheOracleFiles) {
  const char* dir = std::getenv("FERRITE_FAMILY_GGUF_DIR");
  if (dir == nullptr) GTEST_SKIP() << "FERRITE_FAMILY_GGUF_DIR is not set (the oracle sets it)";
  for (const Family& f : families()) {
    const DecoderTensors tensors = testing::synthetic_decoder_tensors(f.shape);
    ASSERT_TRUE(testing::write_synthetic_decoder(fs::path(dir) / (std::string(f.label) + ".gguf"),
                                                 f.shape, tensors));
    // The same weights with every matrix in Q8_0 blocks.
    DecoderShape q8 = f.shape;
    q8.matrix_type = kGgmlTypeQ8_0;
    ASSERT_TRUE(testing::write_synthetic_decoder(
        fs::path(dir) / (std::string(f.label) + "-q8_0.gguf"), q8, tensors));
    // A peaked F32 model with rows of 256 values (whole K-quant super-blocks),
    // for the oracle to quantize with llama.cpp's own quantizer.
    const DecoderShape peaked = peaked_shape(f.shape);
    ASSERT_TRUE(testing::write_synthetic_decoder(
        fs::path(dir) / (std::string(f.label) + "-peaked.gguf"), peaked,
        testing::synthetic_decoder_tensors(peaked)));
  }
}

// fuzz/corpus/gguf/family-*.gguf: one tiny valid file per family room (tied,
// Q8_0 matrices, 1 layer, dim 32, the 260-token synthetic vocabulary) so the
// gguf fuzzer starts inside every room's reader. Opt-in writer:
//   FERRITE_FUZZ_SEED_DIR=fuzz/corpus/gguf ./build/tests/ferrite_tests \
//     --gtest_filter=DecoderFamiliesTest.WritesTheFuzzSeeds
// Each seed must open, compile and load (checked whenever the test runs).
TEST_F(DecoderFamiliesTest, WritesTheFuzzSeeds) {
  const char* dir = std::getenv("FERRITE_FUZZ_SEED_DIR");
  const fs::path out = dir != nullptr ? fs::path(dir) : dir_;
  auto tiny = [](DecoderShape s, uint64_t kv_heads = 1) {
    s.dim = 32, s.layers = 1, s.heads = 2, s.kv_heads = kv_heads, s.head_dim = 16, s.ffn = 64,
    s.vocab = 260, s.context = 16, s.tied = true, s.matrix_type = kGgmlTypeQ8_0;
    return s;
  };
  const std::vector<std::pair<const char*, DecoderShape>> seeds{
      {"llama", tiny({.arch = "llama", .rope_freqs = true})},
      {"qwen2", tiny({.arch = "qwen2", .qkv_bias = true})},
      {"qwen3", tiny({.arch = "qwen3", .qk_norm = true})},
      {"phi3", tiny({.arch = "phi3"}, 2)},
      {"gemma3", tiny({.arch = "gemma3", .sliding_window = 4, .sliding_period = 2})}};
  for (const auto& [name, shape] : seeds) {
    SCOPED_TRACE(name);
    const fs::path path = out / fmt::format("family-{}.gguf", name);
    ASSERT_TRUE(testing::write_synthetic_decoder(path, shape,
                                                 testing::synthetic_decoder_tensors(shape)));
    EXPECT_LT(fs::file_size(path), 32'000u);
    auto loaded = load(path, 4, true);
    ASSERT_TRUE(loaded) << loaded.error().to_string();
  }
}

}  // namespace decoder_families_test
}  // namespace ferrite
