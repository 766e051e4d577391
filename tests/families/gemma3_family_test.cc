// The gemma3 room: a synthetic F32 Gemma 3 GGUF (tests/support/synthetic_decoder.h:
// 7 layers, sliding window 4 on layers 0-4 and 6, layer 5 global, rope bases
// 10^4 / 10^6 with linear scaling by 8 on the global layer (as the 4B),
// heads 4 of 64 with 2 KV heads, dim 256, ffn 512, a tied classifier), greedily decoded on cpu.reference and cpu.fast against the
// independent double-precision forward pass; the same weights as a Hugging
// Face directory (norms stored as w, applied as 1 + w) give the same logits;
// the config mappings (GGUF and config.json) and their refusals name the key
// or tensor; the CLI runs and explains the family.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/run_command.h"
#include "families/builtin/builtin_families.h"
#include "families/gemma3/gemma3_family.h"
#include "ferrite/families/checkpoint.h"
#include "ferrite/plan/program_plan_compiler.h"
#include "ferrite/runtime/generation.h"
#include "providers/cpu_fast/cpu_fast.h"
#include "providers/cpu_reference/cpu_reference.h"
#include "support/cli_invoke.h"
#include "support/synthetic_decoder.h"

namespace ferrite {
namespace gemma3_family_test {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::DecoderReference;
using testing::DecoderShape;
using testing::DecoderTensor;
using testing::DecoderTensors;

// The test model: the window (4) is shorter than the prompt (5 tokens) and
// the 12 generated tokens, so the sliding layers drop keys; layer 5 is
// global. The output norm is scaled by 16 so the tied classifier's top-1
// margins are large.
DecoderShape gemma3_shape() {
  return DecoderShape{.arch = "gemma3", .dim = 256, .layers = 7, .heads = 4, .kv_heads = 2,
                      .head_dim = 64, .ffn = 512, .vocab = 280, .context = 128,
                      .theta = 1000000.0f, .eps = 1e-6f, .tied = true, .sliding_window = 4,
                      .sliding_period = 6, .theta_local = 10000.0f, .output_norm_scale = 16.0f,
                      .rope_scale = 8.0f};
}

// The oracle's peaked variant (synthetic_decoder.h), for token-by-token
// comparisons of quantized files: rows of 256 values (whole K-quant
// super-blocks), 2 layers — layer 0 sliding (window 4), layer 1 global with
// its own rope base and scaling — 8 heads of 32 over 4 KV heads, an untied
// classifier that is the token embedding shifted by 97 (llama.cpp's gemma3
// reads `output.weight` when a file has one), the output norm unscaled, and
// the post-branch norms scaled by 0.2 so the layers move the residual
// stream without overturning that choice.
DecoderShape gemma3_peaked_shape() {
  DecoderShape shape = gemma3_shape();
  shape.layers = 2;
  shape.sliding_period = 2;
  shape.heads = 8;
  shape.kv_heads = 4;
  shape.head_dim = 32;
  shape.tied = false;
  shape.peaked_stride = 97;
  shape.residual_scale = 0.2f;
  shape.output_norm_scale = 1.0f;
  return shape;
}

class Gemma3FamilyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ferrite-gemma3-" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "-" +
            std::to_string(static_cast<long>(::getpid())));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const DecoderShape& shape, const std::string& name = "gemma3.gguf") {
    const fs::path path = dir_ / name;
    EXPECT_TRUE(testing::write_synthetic_decoder(path, shape,
                                                 testing::synthetic_decoder_tensors(shape)));
    return path;
  }
  fs::path dir_;
};

struct Loaded {
  FamilyRegistry registry;
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
                                                std::move(family), std::move(providers),
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

double margin(const std::vector<double>& v) {
  std::vector<double> sorted = v;
  std::partial_sort(sorted.begin(), sorted.begin() + 2, sorted.end(), std::greater<>());
  return sorted[0] - sorted[1];
}

const std::vector<uint32_t> kPrompt{1, 270, 45, 271, 9};
constexpr uint64_t kSteps = 12;

// Greedy decoding after the prompt (prefilled in one step): every token is
// the reference's, every logit within 1e-3, margins over 100 times the
// largest difference. Returns the logits of every step.
std::vector<std::vector<float>> expect_matches_reference(const fs::path& path, bool fast) {
  const DecoderShape shape = gemma3_shape();
  const DecoderTensors tensors = testing::synthetic_decoder_tensors(shape);
  const DecoderReference reference(shape, tensors);
  auto loaded = load(path, 8, fast);
  EXPECT_TRUE(loaded) << loaded.error().to_string();
  if (!loaded) return {};
  EXPECT_EQ((*loaded)->checkpoint.family->name, "gemma3");
  std::vector<std::vector<float>> all;
  std::vector<uint32_t> sequence = kPrompt, input = kPrompt;
  double smallest_margin = INFINITY, worst = 0;
  (*loaded)->executor->reset_states();
  for (uint64_t s = 0; s < kSteps; ++s) {
    auto got = step(*(*loaded)->executor, input,
                    static_cast<uint32_t>(sequence.size() - input.size()));
    EXPECT_TRUE(got) << got.error().to_string();
    if (!got) return {};
    const std::vector<double> expected = reference.logits(sequence);
    EXPECT_EQ(got->size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      worst = std::max(worst, std::fabs(static_cast<double>((*got)[i]) - expected[i]));
    }
    smallest_margin = std::min(smallest_margin, margin(expected));
    EXPECT_EQ(argmax(*got), argmax(expected)) << "step " << s;
    sequence.push_back(argmax(expected));
    input = {sequence.back()};
    all.push_back(std::move(*got));
  }
  EXPECT_LT(worst, 1e-3);
  EXPECT_GT(smallest_margin, 100 * worst);
  std::cout << "gemma3" << (fast ? " (fast)" : " (reference)") << ": max |logit difference| "
            << worst << ", smallest reference top-1 margin " << smallest_margin << "\n";
  return all;
}

TEST_F(Gemma3FamilyTest, DecodesAsTheIndependentForwardPass) {
  const fs::path path = write(gemma3_shape());
  expect_matches_reference(path, false);
  expect_matches_reference(path, true);
}

// The test can fail: the reference without the window, with one rope base
// for every layer or without the rope scaling gives other logits on the same
// weights.
TEST_F(Gemma3FamilyTest, TheReferenceSeesTheWindowAndTheLocalRopeBase) {
  const DecoderShape shape = gemma3_shape();
  const DecoderTensors tensors = testing::synthetic_decoder_tensors(shape);
  std::vector<uint32_t> sequence = kPrompt;
  for (uint32_t t = 0; t < 6; ++t) sequence.push_back(10 + t);
  const auto with = DecoderReference(shape, tensors).logits(sequence);
  DecoderShape no_window = shape;
  no_window.sliding_window = 0;
  DecoderShape one_base = shape;
  one_base.theta_local = shape.theta;
  DecoderShape unscaled = shape;
  unscaled.rope_scale = 1.0f;
  for (const DecoderShape& other : {no_window, one_base, unscaled}) {
    const auto without = DecoderReference(other, tensors).logits(sequence);
    double difference = 0;
    for (size_t i = 0; i < with.size(); ++i) {
      difference = std::max(difference, std::fabs(with[i] - without[i]));
    }
    EXPECT_GT(difference, 1e-2);
  }
}

TEST_F(Gemma3FamilyTest, TheRoomMapsTheGgufConfig) {
  const fs::path path = write(gemma3_shape());
  // (The checkpoint's room lives in the registry: keep it.)
  const FamilyRegistry registry = *builtin_families();
  auto checkpoint = open_checkpoint(registry, path, std::nullopt);
  ASSERT_TRUE(checkpoint) << checkpoint.error().to_string();
  EXPECT_EQ(checkpoint->family->name, "gemma3");
  const auto& c = std::any_cast<const Gemma3Config&>(checkpoint->config);
  EXPECT_EQ(c.dim, 256u);
  EXPECT_EQ(c.head_dim, 64u);
  EXPECT_EQ(c.q_dim(), 256u);
  EXPECT_EQ(c.kv_dim(), 128u);
  EXPECT_EQ(c.n_layers, 7u);
  EXPECT_EQ(c.query_scale_base, 64u);
  EXPECT_EQ(c.sliding_window, 4u);
  EXPECT_EQ(c.sliding_layers, (std::vector<bool>{true, true, true, true, true, false, true}));
  EXPECT_EQ(c.rope_theta, "1000000");
  EXPECT_EQ(c.rope_theta_local, "10000");
  EXPECT_EQ(c.rope_scale, "8");
  EXPECT_EQ(c.norm_eps, "0.00000099999999748");
  EXPECT_TRUE(c.tied_output);
  EXPECT_EQ(c.vocab_size, 280u);
  EXPECT_EQ(c.embedding_scale(), "16");
  auto program = checkpoint->family->build_program(checkpoint->config, 32);
  ASSERT_TRUE(program) << program.error().to_string();
  const auto json = program->program().to_json();
  EXPECT_EQ(json["family"], "family.gemma3");
  const std::string text = json.dump();
  EXPECT_THAT(text, HasSubstr("operation.sliding_attention"));
  EXPECT_THAT(text, HasSubstr("operation.geglu"));
  EXPECT_THAT(text, HasSubstr("operation.scale"));
  EXPECT_THAT(text, HasSubstr("operation.rope_scaled"));
}

TEST(Gemma3ConfigTest, TheEmbeddingScaleIsTheExactF32SquareRoot) {
  for (uint64_t dim : {1u, 2u, 256u, 640u, 1152u, 2560u, 65536u}) {
    Gemma3Config c;
    c.dim = dim;
    const std::string text = c.embedding_scale();
    auto value = CanonicalRational::parse_decimal(text);
    ASSERT_TRUE(value) << text;
    const double parsed = static_cast<double>(value->numerator()) /
                          static_cast<double>(value->denominator());
    EXPECT_EQ(parsed, static_cast<double>(std::sqrt(static_cast<float>(dim)))) << dim;
  }
}

TEST_F(Gemma3FamilyTest, MissingKeysAndTensorsAreNamed) {
  const DecoderShape shape = gemma3_shape();
  const DecoderTensors tensors = testing::synthetic_decoder_tensors(shape);
  FamilyRegistry registry = *builtin_families();
  for (const std::string key : {"gemma3.block_count", "gemma3.attention.layer_norm_rms_epsilon",
                                "gemma3.attention.key_length", "gemma3.embedding_length"}) {
    const fs::path path = dir_ / "missing-key.gguf";
    ASSERT_TRUE(testing::write_synthetic_decoder(path, shape, tensors, key));
    auto opened = open_checkpoint(registry, path, std::nullopt);
    ASSERT_FALSE(opened) << key;
    EXPECT_THAT(opened.error().to_string(), HasSubstr(key));
  }
  for (const std::string tensor : {"blk.6.post_ffw_norm.weight", "blk.3.post_attention_norm.weight",
                                   "blk.0.attn_k_norm.weight", "output_norm.weight"}) {
    DecoderTensors fewer = tensors;
    fewer.erase(tensor);
    const fs::path path = dir_ / "missing-tensor.gguf";
    ASSERT_TRUE(testing::write_synthetic_decoder(path, shape, fewer));
    auto opened = open_checkpoint(registry, path, std::nullopt);
    ASSERT_FALSE(opened) << tensor;
    EXPECT_THAT(opened.error().to_string(), HasSubstr(tensor));
  }
  // A misshapen tensor: named when the weights are loaded.
  DecoderTensors wrong = tensors;
  wrong["blk.0.attn_q_norm.weight"].dims[0] /= 2;
  wrong["blk.0.attn_q_norm.weight"].values.resize(32);
  const fs::path path = dir_ / "misshapen.gguf";
  ASSERT_TRUE(testing::write_synthetic_decoder(path, shape, wrong));
  auto loaded = load(path, 4, false);
  ASSERT_FALSE(loaded);
  EXPECT_THAT(loaded.error().to_string(), HasSubstr("blk.0.attn_q_norm.weight"));
}

TEST_F(Gemma3FamilyTest, UnsupportedFeaturesAreRefusedNamingTheKey) {
  const DecoderShape shape = gemma3_shape();
  const DecoderTensors tensors = testing::synthetic_decoder_tensors(shape);
  FamilyRegistry registry = *builtin_families();
  const std::vector<std::pair<std::string, GgufValue>> refused{
      {"gemma3.final_logit_softcapping", GgufValue{30.0f}},
      {"gemma3.rope.scaling.type", GgufValue{std::string("yarn")}},
      {"gemma3.rope.scaling.factor", GgufValue{0.5f}},
      {"gemma3.attention.value_length", GgufValue{uint32_t{32}}},
      {"gemma3.attention.sliding_window_pattern", GgufValue{GgufArray{std::vector<bool>{true}}}}};
  for (const auto& [key, value] : refused) {
    SCOPED_TRACE(key);
    const fs::path path = dir_ / "refused.gguf";
    // (Dropping the key first: the writer's own value_length / pattern.)
    ASSERT_TRUE(testing::write_synthetic_decoder(path, shape, tensors, key, {{key, value}}));
    auto opened = open_checkpoint(registry, path, std::nullopt);
    ASSERT_FALSE(opened);
    EXPECT_THAT(opened.error().to_string(), HasSubstr(key));
  }
  // A pattern of one bool per layer is read as stated.
  const fs::path path = dir_ / "flags.gguf";
  ASSERT_TRUE(testing::write_synthetic_decoder(
      path, shape, tensors, "gemma3.attention.sliding_window_pattern",
      {{"gemma3.attention.sliding_window_pattern",
        GgufValue{GgufArray{std::vector<bool>{false, true, false, true, true, true, false}}}}}));
  auto opened = open_checkpoint(registry, path, std::nullopt);
  ASSERT_TRUE(opened) << opened.error().to_string();
  EXPECT_EQ(std::any_cast<const Gemma3Config&>(opened->config).sliding_layers,
            (std::vector<bool>{false, true, false, true, true, true, false}));
}

// Writes the synthetic weights as a Hugging Face Gemma3ForCausalLM directory:
// config.json, and model.safetensors with the Hugging Face names and every
// norm stored as w (GGUF's value minus 1).
void write_hf_directory(const fs::path& dir, const DecoderShape& s, const DecoderTensors& tensors) {
  fs::create_directories(dir);
  std::map<std::string, std::string> hf_of;
  for (const auto& [name, t] : tensors) {
    std::string hf;
    if (name == "token_embd.weight") hf = "model.embed_tokens.weight";
    if (name == "output_norm.weight") hf = "model.norm.weight";
    for (uint64_t l = 0; l < s.layers && hf.empty(); ++l) {
      const std::string p = fmt::format("blk.{}.", l);
      if (!name.starts_with(p)) continue;
      static const std::map<std::string, std::string> parts{
          {"attn_norm.weight", "input_layernorm.weight"},
          {"attn_q.weight", "self_attn.q_proj.weight"},
          {"attn_k.weight", "self_attn.k_proj.weight"},
          {"attn_v.weight", "self_attn.v_proj.weight"},
          {"attn_output.weight", "self_attn.o_proj.weight"},
          {"attn_q_norm.weight", "self_attn.q_norm.weight"},
          {"attn_k_norm.weight", "self_attn.k_norm.weight"},
          {"post_attention_norm.weight", "post_attention_layernorm.weight"},
          {"ffn_norm.weight", "pre_feedforward_layernorm.weight"},
          {"post_ffw_norm.weight", "post_feedforward_layernorm.weight"},
          {"ffn_gate.weight", "mlp.gate_proj.weight"},
          {"ffn_up.weight", "mlp.up_proj.weight"},
          {"ffn_down.weight", "mlp.down_proj.weight"}};
      hf = fmt::format("model.layers.{}.{}", l, parts.at(name.substr(p.size())));
    }
    ASSERT_FALSE(hf.empty()) << name;
    hf_of[hf] = name;
  }
  nlohmann::json header = nlohmann::json::object();
  std::string data;
  for (const auto& [hf, name] : hf_of) {
    const DecoderTensor& t = tensors.at(name);
    std::vector<float> values = t.values;
    if (name.ends_with("norm.weight")) {
      for (float& v : values) v -= 1.0f;
    }
    std::vector<uint64_t> shape(t.dims.rbegin(), t.dims.rend());
    header[hf] = {{"dtype", "F32"},
                  {"shape", shape},
                  {"data_offsets", {data.size(), data.size() + values.size() * 4}}};
    data.append(reinterpret_cast<const char*>(values.data()), values.size() * 4);
  }
  const std::string text = header.dump();
  std::ofstream out(dir / "model.safetensors", std::ios::binary);
  const uint64_t n = text.size();
  out.write(reinterpret_cast<const char*>(&n), 8);
  out << text << data;
  std::ofstream config(dir / "config.json");
  config << fmt::format(
      R"({{"architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text",
          "hidden_size": {}, "intermediate_size": {}, "num_hidden_layers": {},
          "num_attention_heads": {}, "num_key_value_heads": {}, "head_dim": {},
          "vocab_size": {}, "max_position_embeddings": {}, "rms_norm_eps": {},
          "rope_theta": {}, "rope_local_base_freq": {}, "sliding_window": {},
          "sliding_window_pattern": {}, "query_pre_attn_scalar": {},
          "hidden_activation": "gelu_pytorch_tanh", "final_logit_softcapping": null,
          "attn_logit_softcapping": null,
          "rope_scaling": {{"rope_type": "linear", "factor": {}}}}})",
      s.dim, s.ffn, s.layers, s.heads, s.kv_heads, s.head_dim, s.vocab, s.context, s.eps,
      s.theta, s.theta_local, s.sliding_window, s.sliding_period, s.head_dim, s.rope_scale);
}

// The Hugging Face directory (norms as w) computes what the GGUF (norms as
// 1 + w) computes: the room serves its norms with 1 added.
TEST_F(Gemma3FamilyTest, AHuggingFaceDirectoryReadsItsNormsAsOnePlusW) {
  const DecoderShape shape = gemma3_shape();
  const DecoderTensors tensors = testing::synthetic_decoder_tensors(shape);
  const fs::path gguf = write(shape);
  write_hf_directory(dir_ / "hf", shape, tensors);
  auto from_gguf = load(gguf, 8, false);
  ASSERT_TRUE(from_gguf) << from_gguf.error().to_string();
  auto from_hf = load(dir_ / "hf", 8, false);
  ASSERT_TRUE(from_hf) << from_hf.error().to_string();
  EXPECT_EQ((*from_hf)->checkpoint.family->name, "gemma3");
  const auto& c = std::any_cast<const Gemma3Config&>((*from_hf)->checkpoint.config);
  EXPECT_EQ(c.sliding_layers, (std::vector<bool>{true, true, true, true, true, false, true}));
  EXPECT_EQ(c.query_scale_base, 64u);
  EXPECT_EQ(c.rope_scale, "8");
  EXPECT_TRUE(c.tied_output);
  (*from_gguf)->executor->reset_states();
  (*from_hf)->executor->reset_states();
  auto a = step(*(*from_gguf)->executor, kPrompt, 0);
  auto b = step(*(*from_hf)->executor, kPrompt, 0);
  ASSERT_TRUE(a && b);
  double worst = 0;
  for (size_t i = 0; i < a->size(); ++i) {
    worst = std::max(worst, std::fabs(static_cast<double>((*a)[i]) - (*b)[i]));
  }
  // (w + 1 - 1 + 1 rounds differently from w + 1 in f32 only in the last bits.)
  EXPECT_LT(worst, 1e-3);
  EXPECT_EQ(argmax(*a), argmax(*b));
}

TEST(Gemma3HfConfigTest, ConfigJsonIsMappedAndRefusedByKey) {
  FamilyRegistry registry = *builtin_families();
  const FamilyRoom* room = registry.find_hf_architecture("Gemma3ForCausalLM");
  ASSERT_NE(room, nullptr);
  EXPECT_EQ(room->name, "gemma3");
  const std::string keys =
      R"("hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 3,
         "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32, "vocab_size": 280)";
  auto parse = [&](const std::string& extra, const char* architecture = "Gemma3ForCausalLM") {
    return HfConfig::parse(
        fmt::format(R"({{"architectures": ["{}"], {}{}}})", architecture, keys, extra),
        "config.json");
  };
  {
    auto json = parse(R"(, "layer_types": ["sliding_attention", "full_attention",
                         "sliding_attention"], "sliding_window": 512,
                         "query_pre_attn_scalar": 168, "rope_scaling": {"rope_type": "linear",
                         "factor": 8.0}, "final_logit_softcapping": null)");
    ASSERT_TRUE(json) << json.error().to_string();
    auto config = room->config_from_hf(*json);
    ASSERT_TRUE(config) << config.error().to_string();
    const auto& c = std::any_cast<const Gemma3Config&>(*config);
    EXPECT_EQ(c.sliding_layers, (std::vector<bool>{true, false, true}));
    EXPECT_EQ(c.sliding_window, 512u);
    EXPECT_EQ(c.query_scale_base, 168u);
    EXPECT_EQ(c.head_dim, 32u);
    EXPECT_EQ(c.rope_theta, "1000000");
    EXPECT_EQ(c.rope_theta_local, "10000");
    EXPECT_EQ(c.rope_scale, "8");
    EXPECT_TRUE(c.tied_output);
    EXPECT_EQ(c.context_length, 131072u);
    EXPECT_EQ(room->hf_tensor_name("model.layers.2.post_feedforward_layernorm.weight", *config),
              "blk.2.post_ffw_norm.weight");
    EXPECT_EQ(room->hf_tensor_name("model.layers.0.pre_feedforward_layernorm.weight", *config),
              "blk.0.ffn_norm.weight");
    EXPECT_EQ(room->hf_tensor_name("model.layers.1.post_attention_layernorm.weight", *config),
              "blk.1.post_attention_norm.weight");
    EXPECT_EQ(room->hf_tensor_name("model.layers.1.self_attn.q_norm.weight", *config),
              "blk.1.attn_q_norm.weight");
    EXPECT_EQ(room->hf_tensor_name("model.layers.3.mlp.up_proj.weight", *config), std::nullopt);
    EXPECT_EQ(room->hf_tensor_offset("blk.1.attn_q_norm.weight"), 1.0f);
    EXPECT_EQ(room->hf_tensor_offset("output_norm.weight"), 1.0f);
    EXPECT_EQ(room->hf_tensor_offset("blk.1.attn_q.weight"), 0.0f);
  }
  {
    // Without layer_types: the period (default 6; here 2: odd layers global).
    auto json = parse(R"(, "sliding_window_pattern": 2)");
    ASSERT_TRUE(json);
    auto config = room->config_from_hf(*json);
    ASSERT_TRUE(config) << config.error().to_string();
    EXPECT_EQ(std::any_cast<const Gemma3Config&>(*config).sliding_layers,
              (std::vector<bool>{true, false, true}));
  }
  const std::pair<std::string, std::string> refused[] = {
      {R"(, "hidden_activation": "gelu")", "hidden_activation"},
      {R"(, "final_logit_softcapping": 30.0)", "final_logit_softcapping"},
      {R"(, "rope_scaling": {"rope_type": "yarn", "factor": 8.0})", "rope_scaling"},
      {R"(, "rope_scaling": {"type": "linear", "factor": 0.5})", "rope_scaling"},
      {R"(, "layer_types": ["sliding_attention"])", "layer_types"},
      {R"(, "layer_types": ["sliding_attention", "full", "full_attention"])", "layer_types"},
      {R"(, "attn_logit_softcapping": 50.0)", "attn_logit_softcapping"},
      {R"(, "rope_parameters": {"rope_theta": 10000.0})", "rope_parameters"}};
  for (const auto& [extra, key] : refused) {
    SCOPED_TRACE(extra);
    auto json = parse(extra);
    ASSERT_TRUE(json) << json.error().to_string();
    auto config = room->config_from_hf(*json);
    ASSERT_FALSE(config);
    EXPECT_THAT(config.error().to_string(), HasSubstr(key));
  }
  {
    // KV heads that do not divide the heads.
    auto json = HfConfig::parse(
        R"({"architectures": ["Gemma3ForCausalLM"], "hidden_size": 64, "intermediate_size": 96,
            "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 3,
            "head_dim": 32, "vocab_size": 280})",
        "config.json");
    ASSERT_TRUE(json) << json.error().to_string();
    auto config = room->config_from_hf(*json);
    ASSERT_FALSE(config);
    EXPECT_THAT(config.error().to_string(), HasSubstr("num_key_value_heads"));
  }
  // The vision-language checkpoint is refused, saying what is read instead.
  auto vision = parse("", "Gemma3ForConditionalGeneration");
  ASSERT_TRUE(vision);
  const FamilyRoom* vision_room = registry.find_hf_architecture("Gemma3ForConditionalGeneration");
  ASSERT_EQ(vision_room, room);
  auto config = room->config_from_hf(*vision);
  ASSERT_FALSE(config);
  EXPECT_THAT(config.error().to_string(), HasSubstr("Gemma3ForCausalLM"));
  EXPECT_THAT(config.error().to_string(), HasSubstr("vision"));
}

TEST_F(Gemma3FamilyTest, TheCliRunsAndExplainsIt) {
  const DecoderShape shape = gemma3_shape();
  const DecoderTensors tensors = testing::synthetic_decoder_tensors(shape);
  const fs::path path = write(shape);
  std::vector<uint32_t> sequence = kPrompt;
  const DecoderReference reference(shape, tensors);
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
  EXPECT_THAT(explained.out, HasSubstr("family family.gemma3"));
}

// scripts/oracle/compare_families.sh: with FERRITE_FAMILY_GGUF_DIR set,
// writes gemma3.gguf and gemma3-q8_0.gguf there (else skipped).
TEST_F(Gemma3FamilyTest, WritesTheOracleFiles) {
  const char* dir = std::getenv("FERRITE_FAMILY_GGUF_DIR");
  if (dir == nullptr) GTEST_SKIP() << "FERRITE_FAMILY_GGUF_DIR is not set (the oracle sets it)";
  const DecoderShape shape = gemma3_shape();
  const DecoderTensors tensors = testing::synthetic_decoder_tensors(shape);
  ASSERT_TRUE(testing::write_synthetic_decoder(fs::path(dir) / "gemma3.gguf", shape, tensors));
  DecoderShape q8 = shape;
  q8.matrix_type = kGgmlTypeQ8_0;
  ASSERT_TRUE(testing::write_synthetic_decoder(fs::path(dir) / "gemma3-q8_0.gguf", q8, tensors));
  // The peaked F32 model, for the oracle to quantize with llama.cpp's own
  // quantizer (and compare as it is).
  const DecoderShape peaked = gemma3_peaked_shape();
  ASSERT_TRUE(testing::write_synthetic_decoder(fs::path(dir) / "gemma3-peaked.gguf", peaked,
                                               testing::synthetic_decoder_tensors(peaked)));
}

// The peaked variant does what the oracle relies on: the double-precision
// reference picks t + 97 after a sequence ending in t, with a top-1 minus
// top-2 logit margin of at least 3, over sequences longer than the window
// (so the sliding layer drops keys); and the layers still matter (without
// them the logits differ), so the comparison exercises them.
TEST_F(Gemma3FamilyTest, ThePeakedModelChoosesFarFromTies) {
  const DecoderShape peaked = gemma3_peaked_shape();
  const DecoderTensors tensors = testing::synthetic_decoder_tensors(peaked);
  ASSERT_TRUE(peaked.sliding(0));
  ASSERT_FALSE(peaked.sliding(1));
  const DecoderReference reference(peaked, tensors);
  std::vector<uint32_t> sequence = kPrompt;
  double smallest = INFINITY;
  for (int step = 0; step < 8; ++step) {
    const std::vector<double> logits = reference.logits(sequence);
    const uint32_t top = argmax(logits);
    EXPECT_EQ(top, (sequence.back() + 97) % peaked.vocab) << "step " << step;
    smallest = std::min(smallest, margin(logits));
    sequence.push_back(top);
  }
  EXPECT_GT(smallest, 3.0);
  DecoderTensors flat = tensors;
  for (auto& [name, t] : flat) {
    if (name.ends_with(".post_attention_norm.weight") || name.ends_with(".post_ffw_norm.weight")) {
      std::fill(t.values.begin(), t.values.end(), 0.0f);
    }
  }
  const std::vector<double> with = reference.logits(kPrompt);
  const std::vector<double> without = DecoderReference(peaked, flat).logits(kPrompt);
  double moved = 0;
  for (size_t i = 0; i < with.size(); ++i) moved = std::max(moved, std::abs(with[i] - without[i]));
  EXPECT_GT(moved, 0.5);
  std::cout << "gemma3 peaked: smallest margin " << smallest << ", largest logit moved by the layers "
            << moved << "\n";
}

// scripts/oracle/compare_gemma3.sh: with FERRITE_GEMMA3_ORACLE (the output
// of llama_cpp_greedy_top.mjs) and FERRITE_GEMMA3_MODEL (the file it ran)
// set, feeds each prompt and llama.cpp's greedy tokens to Ferrite (cpu.fast,
// as `ferrite run` runs) and prints, per prompt, how many of Ferrite's
// argmaxes equal llama.cpp's tokens and the largest and mean difference of
// the log-probabilities of llama.cpp's five most likely ids (else skipped).
TEST_F(Gemma3FamilyTest, ComparesWithLlamaCppTopLogProbabilities) {
  const char* oracle = std::getenv("FERRITE_GEMMA3_ORACLE");
  const char* model = std::getenv("FERRITE_GEMMA3_MODEL");
  if (oracle == nullptr || model == nullptr) {
    GTEST_SKIP() << "FERRITE_GEMMA3_ORACLE / FERRITE_GEMMA3_MODEL are not set (the oracle sets them)";
  }
  std::ifstream in(oracle);
  ASSERT_TRUE(in) << oracle;
  struct Run {
    std::vector<uint32_t> prompt, tokens;
    std::vector<std::vector<std::pair<uint32_t, double>>> top;
  };
  std::vector<Run> runs;
  std::string line;
  auto numbers = [](const std::string& text) {
    std::vector<uint32_t> out;
    std::istringstream words(text);
    for (uint32_t v; words >> v;) out.push_back(v);
    return out;
  };
  while (std::getline(in, line)) {
    if (line.starts_with("prompt ")) runs.push_back({numbers(line.substr(7)), {}, {}});
    if (runs.empty()) continue;
    if (line.starts_with("tokens ")) runs.back().tokens = numbers(line.substr(7));
    if (line.starts_with("top ")) {
      std::istringstream words(line.substr(4));
      std::string step, pair;
      words >> step;
      std::vector<std::pair<uint32_t, double>> top;
      while (words >> pair) {
        const size_t colon = pair.find(':');
        top.emplace_back(static_cast<uint32_t>(std::stoul(pair.substr(0, colon))),
                         std::stod(pair.substr(colon + 1)));
      }
      runs.back().top.push_back(std::move(top));
    }
  }
  ASSERT_FALSE(runs.empty());
  // FERRITE_GEMMA3_PROVIDER=reference: cpu.reference instead of cpu.fast.
  const char* provider = std::getenv("FERRITE_GEMMA3_PROVIDER");
  const bool fast = provider == nullptr || std::string(provider) != "reference";
  auto loaded = load(model, 8, fast);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  for (const Run& run : runs) {
    ASSERT_EQ(run.top.size(), run.tokens.size());
    (*loaded)->executor->reset_states();
    std::vector<uint32_t> input = run.prompt;
    uint32_t position = 0;
    uint64_t equal = 0, compared = 0;
    double worst = 0, total = 0, worst_margin = 0;
    uint64_t worst_step = 0;
    for (size_t s = 0; s < run.tokens.size(); ++s) {
      auto logits = step(*(*loaded)->executor, input, position);
      ASSERT_TRUE(logits) << logits.error().to_string();
      position += static_cast<uint32_t>(input.size());
      double top = -INFINITY, sum = 0;
      for (float v : *logits) top = std::max(top, static_cast<double>(v));
      for (float v : *logits) sum += std::exp(static_cast<double>(v) - top);
      const double log_total = top + std::log(sum);
      for (const auto& [id, expected] : run.top[s]) {
        ASSERT_LT(id, logits->size());
        const double difference =
            std::fabs(static_cast<double>((*logits)[id]) - log_total - expected);
        if (difference > worst) {
          worst = difference;
          worst_step = s;
        }
        total += difference;
        ++compared;
      }
      // llama.cpp's top-1 minus top-2, against Ferrite's for the same two ids.
      if (run.top[s].size() >= 2) {
        const double theirs = run.top[s][0].second - run.top[s][1].second;
        const double ours = static_cast<double>((*logits)[run.top[s][0].first]) -
                            (*logits)[run.top[s][1].first];
        worst_margin = std::max(worst_margin, std::fabs(theirs - ours));
      }
      if (argmax(*logits) == run.tokens[s]) ++equal;
      input = {run.tokens[s]};
    }
    std::string prompt;
    for (uint32_t id : run.prompt) prompt += (prompt.empty() ? "" : " ") + std::to_string(id);
    std::cout << "gemma3 vs llama.cpp [" << prompt << "]: " << equal << " of " << run.tokens.size()
              << " argmaxes equal (fed llama.cpp's tokens); top-5 log-probability |difference| "
              << "max " << worst << " (step " << worst_step << "), mean "
              << total / static_cast<double>(std::max<uint64_t>(compared, 1))
              << "; top-1 minus top-2 |difference| max " << worst_margin << " ("
              << (fast ? "cpu.fast" : "cpu.reference") << ")\n";
  }
}

// The oracle's investigation: with FERRITE_GEMMA3_ORACLE (llama.cpp's reply
// on the F32 gemma3.gguf) set, the double-precision reference fed
// llama.cpp's tokens, once with the exact tanh GELU and once emulating
// llama.cpp's f16 GELU table, and the largest difference of llama.cpp's
// top-5 log-probabilities from each (else skipped). If the table explains
// the F32 differences, the second is far smaller.
TEST_F(Gemma3FamilyTest, LlamaCppsF16GeluTableExplainsTheF32Differences) {
  const char* oracle = std::getenv("FERRITE_GEMMA3_ORACLE");
  const char* model = std::getenv("FERRITE_GEMMA3_MODEL");
  if (oracle == nullptr || model == nullptr || std::string(model).ends_with("q8_0.gguf")) {
    GTEST_SKIP() << "FERRITE_GEMMA3_ORACLE / FERRITE_GEMMA3_MODEL (F32) are not set";
  }
  std::ifstream in(oracle);
  ASSERT_TRUE(in) << oracle;
  const DecoderShape shape = gemma3_shape();
  DecoderShape table = shape;
  table.gelu_f16 = true;
  const DecoderTensors tensors = testing::synthetic_decoder_tensors(shape);
  const DecoderReference exact(shape, tensors), emulated(table, tensors);
  std::vector<uint32_t> sequence;
  std::string line;
  double worst[2] = {0, 0};
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string kind;
    words >> kind;
    if (kind == "prompt") {
      sequence.clear();
      for (uint32_t v; words >> v;) sequence.push_back(v);
    } else if (kind == "tokens") {
      // (Replayed with the top lines, which come next.)
    } else if (kind == "top") {
      std::string step, pair;
      words >> step;
      std::vector<std::pair<uint32_t, double>> top;
      while (words >> pair) {
        const size_t colon = pair.find(':');
        top.emplace_back(static_cast<uint32_t>(std::stoul(pair.substr(0, colon))),
                         std::stod(pair.substr(colon + 1)));
      }
      ASSERT_FALSE(top.empty());
      const DecoderReference* references[2] = {&exact, &emulated};
      for (int r = 0; r < 2; ++r) {
        const std::vector<double> logits = references[r]->logits(sequence);
        double high = -INFINITY, sum = 0;
        for (double v : logits) high = std::max(high, v);
        for (double v : logits) sum += std::exp(v - high);
        const double log_total = high + std::log(sum);
        for (const auto& [id, expected] : top) {
          worst[r] = std::max(worst[r], std::fabs(logits[id] - log_total - expected));
        }
      }
      sequence.push_back(top.front().first);  // llama.cpp's greedy token
    }
  }
  std::cout << "gemma3 reference vs llama.cpp, top-5 log-probability |difference| max: exact "
            << "tanh GELU " << worst[0] << ", llama.cpp's f16 GELU table " << worst[1] << "\n";
}

}  // namespace gemma3_family_test
}  // namespace ferrite
