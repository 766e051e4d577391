// stories260K through the plan, checked against a straightforward
// double-precision forward pass written here (not sharing any kernel code):
// every layer's residual stream (read back through --retain-all) and the
// logits; .bin and .gguf give bit-identical logits; a safetensors directory
// written here from the same weights gives bit-identical logits too; the decode loop
// allocates nothing.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>

#include <malloc.h>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ferrite/models/gguf_reader.h"
#include "families/llama/llama_checkpoint.h"
#include "support/sanitizers.h"
#include "support/synthetic_llama.h"
#include "ferrite/runtime/generation.h"
#include "ferrite/runtime/sampler.h"
#include "ferrite/plan/program_plan_compiler.h"
#include "providers/cpu_fast/cpu_fast.h"
#include "providers/cpu_reference/cpu_reference.h"

// Counts heap allocations while `g_counting` is set (the whole test binary
// shares this operator new; counting is off except inside one test). Under
// AddressSanitizer the replacement is left out — the sanitizer owns operator
// new there — and the counting test is skipped.
#define FERRITE_COUNT_ALLOCATIONS (!FERRITE_UNDER_ASAN)

namespace allocation_counter {
std::atomic<bool> g_counting{false};
std::atomic<uint64_t> g_allocations{0};
// Bytes allocated and not yet freed while counting (malloc_usable_size).
std::atomic<int64_t> g_live_bytes{0};
inline void record(void* p) {
  if (g_counting.load(std::memory_order_relaxed)) {
    g_allocations.fetch_add(1);
    g_live_bytes.fetch_add(static_cast<int64_t>(malloc_usable_size(p)));
  }
}
inline void release(void* p) {
  if (p != nullptr && g_counting.load(std::memory_order_relaxed)) {
    g_live_bytes.fetch_sub(static_cast<int64_t>(malloc_usable_size(p)));
  }
}
}  // namespace allocation_counter

#if FERRITE_COUNT_ALLOCATIONS
void* operator new(std::size_t size) {
  if (void* p = std::malloc(size == 0 ? 1 : size)) {
    allocation_counter::record(p);
    return p;
  }
  throw std::bad_alloc();
}
// Over-aligned types (the kernels' 64-byte activation blocks) come here.
void* operator new(std::size_t size, std::align_val_t align) {
  const std::size_t a = static_cast<std::size_t>(align);
  if (void* p = std::aligned_alloc(a, (std::max<std::size_t>(size, 1) + a - 1) / a * a)) {
    allocation_counter::record(p);
    return p;
  }
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  allocation_counter::release(p);
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept { operator delete(p); }
void operator delete(void* p, std::align_val_t) noexcept { operator delete(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { operator delete(p); }
#endif

namespace ferrite {
namespace llama_forward_test {

namespace fs = std::filesystem;
const fs::path kModels = fs::path(FERRITE_SOURCE_DIR) / ".." / "shared" / "models";

struct Loaded {
  LlamaCheckpoint checkpoint;
  PreparedModelFamily family;
  CpuProviderRegistry providers;
  ExecutablePlan executable;
  std::unique_ptr<Executor> executor;
  uint64_t load_heap_bytes = 0;  // heap bytes Executor::load allocated and kept
  const ExecutionPlan& plan() const { return executable.execution_plan(); }
};

// `fast`: cpu.fast (2 threads) registered and preferred, as `ferrite run` does.
Result<std::unique_ptr<Loaded>> load(const fs::path& model, uint64_t capacity, bool retain_all,
                                     bool fast = false) {
  FERRITE_ASSIGN_OR_RETURN(auto checkpoint, open_llama_checkpoint(model, std::nullopt));
  FERRITE_ASSIGN_OR_RETURN(auto family, build_llama_family(checkpoint.config));
  CpuProviderRegistry providers;
  FERRITE_RETURN_IF_ERROR(add_cpu_reference_providers(providers));
  if (fast) FERRITE_RETURN_IF_ERROR(add_cpu_fast_providers(providers, {.threads = 2}));
  FERRITE_ASSIGN_OR_RETURN(auto target, providers.target(host_cpu_device(uint64_t{1} << 32)));
  FERRITE_ASSIGN_OR_RETURN(auto options,
                           ProgramPlanCompileOptions::create(decoder_compile_inputs(capacity)));
  if (retain_all) options.retain_all_outputs_for_determinism(family);
  if (fast) prefer_providers(kCpuFastProviderPrefix, family, options);
  const RuntimePolicy policy{PolicyId::literal("policy.test"), {1, 0}, uint64_t{1} << 32, 0, 1,
                             capacity, {DynamicStorageProfile::linear_contiguous()}};
  FERRITE_ASSIGN_OR_RETURN(auto compiled,
                           ProgramPlanCompiler::compile(family, target.catalog, policy,
                                                        target.estimators,
                                                        WeightMaterializerRegistry::identity_only(),
                                                        options));
  auto out = std::unique_ptr<Loaded>(new Loaded{std::move(checkpoint), std::move(family),
                                                std::move(providers), std::move(compiled.executable),
                                                nullptr, 0});
  // Heap use of the load itself (plan resources come from the device
  // allocator, not operator new): bookkeeping only, no kernel buffers.
  ::allocation_counter::g_live_bytes = 0;
  ::allocation_counter::g_allocations = 0;
  ::allocation_counter::g_counting = true;
  auto executor =
      Executor::load(out->executable, out->family, out->providers, *out->checkpoint.weights);
  ::allocation_counter::g_counting = false;
  out->load_heap_bytes =
      static_cast<uint64_t>(std::max<int64_t>(0, ::allocation_counter::g_live_bytes.load()));
  FERRITE_ASSIGN_OR_RETURN(out->executor, std::move(executor));
  return out;
}

Result<void> prefill(Executor& executor, const std::vector<uint32_t>& tokens) {
  std::vector<uint32_t> positions(tokens.size());
  for (uint32_t i = 0; i < positions.size(); ++i) positions[i] = i;
  executor.reset_states();
  FERRITE_RETURN_IF_ERROR(executor.write_input(ProgramValueId::literal("value.tokens"), tokens));
  FERRITE_RETURN_IF_ERROR(
      executor.write_input(ProgramValueId::literal("value.positions"), positions));
  return executor.run(tokens.size());
}

// ---- the independent double-precision reference ------------------------------

struct Reference {
  uint64_t dim, hidden, layers, heads, kv_heads, vocab;
  std::map<std::string, std::vector<double>> w;  // row-major [out, in]

  const std::vector<double>& at(const std::string& name) const { return w.at(name); }

  static Reference from_gguf(const fs::path& path) {
    auto file = GgufFile::open(path);
    EXPECT_TRUE(file) << file.error().to_string();
    Reference r{64, 172, 5, 8, 4, 512, {}};
    for (const auto& t : file->model().tensors) {
      auto bytes = file->tensor_data(t);
      std::vector<double> values(bytes->size() / 4);
      for (size_t i = 0; i < values.size(); ++i) {
        float f;
        std::memcpy(&f, bytes->data() + 4 * i, 4);
        values[i] = f;
      }
      r.w[t.name] = std::move(values);
    }
    return r;
  }

  // Residual stream after each layer for every token, and the last token's logits.
  std::pair<std::vector<std::vector<double>>, std::vector<double>> forward(
      const std::vector<uint32_t>& tokens) const {
    const uint64_t hd = dim / heads, kv_dim = hd * kv_heads, n = tokens.size();
    auto matvec = [](const std::vector<double>& m, const std::vector<double>& x, uint64_t out) {
      std::vector<double> y(out, 0.0);
      const uint64_t in = x.size();
      for (uint64_t o = 0; o < out; ++o) {
        for (uint64_t i = 0; i < in; ++i) y[o] += m[o * in + i] * x[i];
      }
      return y;
    };
    auto rmsnorm = [](const std::vector<double>& x, const std::vector<double>& g) {
      double ss = 0;
      for (double v : x) ss += v * v;
      const double s = 1.0 / std::sqrt(ss / static_cast<double>(x.size()) + 1e-5);
      std::vector<double> y(x.size());
      for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * s * g[i];
      return y;
    };
    auto rope = [&](std::vector<double>& v, uint64_t pos) {
      for (uint64_t i = 0; i < v.size(); i += 2) {
        const uint64_t j = i % hd;
        const double angle = static_cast<double>(pos) * std::pow(10000.0, -static_cast<double>(j) / static_cast<double>(hd));
        const double a = v[i], b = v[i + 1];
        v[i] = a * std::cos(angle) - b * std::sin(angle);
        v[i + 1] = a * std::sin(angle) + b * std::cos(angle);
      }
    };
    std::vector<std::vector<double>> x(n, std::vector<double>(dim));
    for (uint64_t t = 0; t < n; ++t) {
      for (uint64_t i = 0; i < dim; ++i) x[t][i] = at("token_embd.weight")[tokens[t] * dim + i];
    }
    std::vector<std::vector<double>> after_layer;
    for (uint64_t l = 0; l < layers; ++l) {
      const std::string b = fmt::format("blk.{}.", l);
      std::vector<std::vector<double>> keys(n), values(n);
      for (uint64_t t = 0; t < n; ++t) {
        auto xb = rmsnorm(x[t], at(b + "attn_norm.weight"));
        auto q = matvec(at(b + "attn_q.weight"), xb, dim);
        keys[t] = matvec(at(b + "attn_k.weight"), xb, kv_dim);
        values[t] = matvec(at(b + "attn_v.weight"), xb, kv_dim);
        rope(q, t);
        rope(keys[t], t);
        std::vector<double> att(dim, 0.0);
        for (uint64_t h = 0; h < heads; ++h) {
          const uint64_t kvh = h / (heads / kv_heads);
          std::vector<double> s(t + 1);
          double mx = -INFINITY;
          for (uint64_t p = 0; p <= t; ++p) {
            double d = 0;
            for (uint64_t i = 0; i < hd; ++i) d += q[h * hd + i] * keys[p][kvh * hd + i];
            s[p] = d / std::sqrt(static_cast<double>(hd));
            mx = std::max(mx, s[p]);
          }
          double sum = 0;
          for (auto& e : s) sum += (e = std::exp(e - mx));
          for (uint64_t p = 0; p <= t; ++p) {
            for (uint64_t i = 0; i < hd; ++i) att[h * hd + i] += s[p] / sum * values[p][kvh * hd + i];
          }
        }
        auto o = matvec(at(b + "attn_output.weight"), att, dim);
        for (uint64_t i = 0; i < dim; ++i) x[t][i] += o[i];
        auto xf = rmsnorm(x[t], at(b + "ffn_norm.weight"));
        auto g = matvec(at(b + "ffn_gate.weight"), xf, hidden);
        auto u = matvec(at(b + "ffn_up.weight"), xf, hidden);
        for (uint64_t i = 0; i < hidden; ++i) g[i] = g[i] / (1.0 + std::exp(-g[i])) * u[i];
        auto d = matvec(at(b + "ffn_down.weight"), g, dim);
        for (uint64_t i = 0; i < dim; ++i) x[t][i] += d[i];
      }
      std::vector<double> flat;
      for (const auto& row : x) flat.insert(flat.end(), row.begin(), row.end());
      after_layer.push_back(std::move(flat));
    }
    auto last = rmsnorm(x[n - 1], at("output_norm.weight"));
    return {after_layer, matvec(at("output.weight"), last, vocab)};
  }
};

class StoriesForwardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kModels / "stories260K.gguf")) GTEST_SKIP() << "no model files";
  }
  const std::vector<uint32_t> prompt{1, 403, 407, 261, 378, 432, 383};  // "<s> Once upon a time, there"
};

TEST_F(StoriesForwardTest, EveryLayerMatchesADoublePrecisionForwardPass) {
  auto loaded = load(kModels / "stories260K.gguf", 16, /*retain_all=*/true);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  ASSERT_TRUE(prefill(*(*loaded)->executor, prompt));
  const auto reference = Reference::from_gguf(kModels / "stories260K.gguf");
  const auto [layers, logits] = reference.forward(prompt);
  for (uint64_t l = 0; l < layers.size(); ++l) {
    auto got = (*loaded)->executor->output_f32(
        ProgramValueId::literal(fmt::format("value.blk.{}.ffn_residual", l)));
    ASSERT_TRUE(got) << got.error().to_string();
    double worst = 0;
    for (size_t i = 0; i < layers[l].size(); ++i) {
      worst = std::max(worst, std::abs(static_cast<double>((*got)[i]) - layers[l][i]) /
                                  (1.0 + std::abs(layers[l][i])));
    }
    EXPECT_LT(worst, 1e-5) << "layer " << l;
  }
  auto got = (*loaded)->executor->output_f32(ProgramValueId::literal("value.logits"));
  ASSERT_TRUE(got);
  ASSERT_EQ(got->size(), logits.size());
  double worst = 0;
  for (size_t i = 0; i < logits.size(); ++i) {
    worst = std::max(worst, std::abs(static_cast<double>((*got)[i]) - logits[i]));
  }
  EXPECT_LT(worst, 1e-4);
}

TEST_F(StoriesForwardTest, BinAndGgufGiveBitIdenticalLogits) {
  auto bin = load(kModels / "stories260K.bin", 16, false);
  auto gguf = load(kModels / "stories260K.gguf", 16, false);
  ASSERT_TRUE(bin && gguf);
  ASSERT_TRUE(prefill(*(*bin)->executor, prompt));
  ASSERT_TRUE(prefill(*(*gguf)->executor, prompt));
  auto a = (*bin)->executor->output_f32(ProgramValueId::literal("value.logits"));
  auto b = (*gguf)->executor->output_f32(ProgramValueId::literal("value.logits"));
  ASSERT_TRUE(a && b);
  ASSERT_EQ(a->size(), b->size());
  EXPECT_EQ(std::memcmp(a->data(), b->data(), a->size_bytes()), 0);
}

// A Hugging Face directory written from the GGUF weights: q/k rows go back to
// the half-split order HF uses (the GGUF converter interleaves them), so the
// same model runs with the half-split RoPE convention.
TEST_F(StoriesForwardTest, SafetensorsDirectoryGivesBitIdenticalLogits) {
  auto file = GgufFile::open(kModels / "stories260K.gguf");
  ASSERT_TRUE(file);
  const fs::path dir = fs::temp_directory_path() / fmt::format("ferrite-hf-{}", ::getpid());
  fs::create_directories(dir);
  const uint64_t heads = 8, kv_heads = 4, hd = 8;
  nlohmann::json header = nlohmann::json::object();
  std::string data;
  auto hf_name = [](const std::string& gguf) -> std::string {
    if (gguf == "token_embd.weight") return "model.embed_tokens.weight";
    if (gguf == "output_norm.weight") return "model.norm.weight";
    if (gguf == "output.weight") return "lm_head.weight";
    const size_t dot = gguf.find('.', 4);
    const std::string layer = gguf.substr(4, dot - 4), rest = gguf.substr(dot + 1);
    const std::map<std::string, std::string> names{
        {"attn_norm.weight", "input_layernorm.weight"}, {"attn_q.weight", "self_attn.q_proj.weight"},
        {"attn_k.weight", "self_attn.k_proj.weight"}, {"attn_v.weight", "self_attn.v_proj.weight"},
        {"attn_output.weight", "self_attn.o_proj.weight"},
        {"ffn_norm.weight", "post_attention_layernorm.weight"},
        {"ffn_gate.weight", "mlp.gate_proj.weight"}, {"ffn_up.weight", "mlp.up_proj.weight"},
        {"ffn_down.weight", "mlp.down_proj.weight"}};
    return "model.layers." + layer + "." + names.at(rest);
  };
  std::vector<std::pair<std::string, const GgufTensorInfo*>> sorted;
  for (const auto& t : file->model().tensors) sorted.emplace_back(hf_name(t.name), &t);
  std::sort(sorted.begin(), sorted.end());
  for (const auto& [name, t] : sorted) {
    auto bytes = *file->tensor_data(*t);
    std::vector<uint64_t> shape(t->dims.rbegin(), t->dims.rend());
    std::string block(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    const bool q = t->name.ends_with("attn_q.weight"), k = t->name.ends_with("attn_k.weight");
    if (q || k) {
      const uint64_t n_heads = q ? heads : kv_heads, cols = shape[1], half = hd / 2;
      std::string permuted(block.size(), '\0');
      for (uint64_t h = 0; h < n_heads; ++h) {
        for (uint64_t i = 0; i < half; ++i) {
          for (uint64_t part = 0; part < 2; ++part) {
            const uint64_t from = h * hd + 2 * i + part, to = h * hd + part * half + i;
            std::memcpy(permuted.data() + to * cols * 4, block.data() + from * cols * 4, cols * 4);
          }
        }
      }
      block = std::move(permuted);
    }
    header[name] = {{"dtype", "F32"},
                    {"shape", shape},
                    {"data_offsets", {data.size(), data.size() + block.size()}}};
    data += block;
  }
  const std::string text = header.dump();
  {
    std::ofstream out(dir / "model.safetensors", std::ios::binary);
    const uint64_t n = text.size();
    out.write(reinterpret_cast<const char*>(&n), 8);
    out << text << data;
    std::ofstream config(dir / "config.json");
    config << R"({"hidden_size":64,"intermediate_size":172,"num_hidden_layers":5,)"
              R"("num_attention_heads":8,"num_key_value_heads":4,"vocab_size":512,)"
              R"("max_position_embeddings":512,"rms_norm_eps":1e-05,"rope_theta":10000.0})";
    // A tokenizer.json gives the directory its vocabulary (families/hf_tokenizer.h).
    std::ofstream tokenizer(dir / "tokenizer.json");
    tokenizer << R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2},)"
                 R"( "merges": ["a b"]}, "pre_tokenizer": {"type": "ByteLevel"}})";
  }
  auto hf = load(dir, 16, false);
  auto gguf = load(kModels / "stories260K.gguf", 16, false);
  fs::remove_all(dir);
  ASSERT_TRUE(hf) << hf.error().to_string();
  ASSERT_TRUE(gguf);
  EXPECT_EQ((*hf)->checkpoint.config.rope_convention, "half_split");
  ASSERT_TRUE((*hf)->checkpoint.vocabulary.has_value());
  EXPECT_EQ((*hf)->checkpoint.vocabulary->kind, VocabularyKind::kByteLevelBpe);
  EXPECT_EQ((*hf)->checkpoint.vocabulary->tokens.size(), 3u);
  ASSERT_TRUE(prefill(*(*hf)->executor, prompt));
  ASSERT_TRUE(prefill(*(*gguf)->executor, prompt));
  auto a = *(*hf)->executor->output_f32(ProgramValueId::literal("value.logits"));
  auto b = *(*gguf)->executor->output_f32(ProgramValueId::literal("value.logits"));
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size_bytes()), 0);
}

// Both providers: cpu.fast's pool hands out work without allocating, and
// its kernels allocate nothing per step either. 190 steps reach positions
// where attention splits heads across threads.
TEST_F(StoriesForwardTest, DecodeLoopAllocatesNothing) {
  if (!FERRITE_COUNT_ALLOCATIONS) GTEST_SKIP() << "operator new belongs to the sanitizer here";
  for (bool fast : {false, true}) {
    auto loaded = load(kModels / "stories260K.gguf", 16, false, fast);
    ASSERT_TRUE(loaded) << loaded.error().to_string();
    Executor& executor = *(*loaded)->executor;
    ASSERT_TRUE(prefill(executor, prompt));
    const auto tokens = ProgramValueId::literal("value.tokens");
    const auto positions = ProgramValueId::literal("value.positions");
    const auto logits_id = ProgramValueId::literal("value.logits");
    ::allocation_counter::g_allocations = 0;
    ::allocation_counter::g_counting = true;
    bool ok = true;
    for (uint32_t pos = static_cast<uint32_t>(prompt.size()); pos < 200 && ok; ++pos) {
      auto logits = executor.output_f32(logits_id);
      uint32_t next = 0;
      for (uint32_t i = 1; i < logits->size(); ++i) {
        if ((*logits)[i] > (*logits)[next]) next = i;
      }
      ok = executor.write_input(tokens, std::span(&next, 1)) &&
           executor.write_input(positions, std::span(&pos, 1)) && executor.run(1);
    }
    ::allocation_counter::g_counting = false;
    EXPECT_TRUE(ok);
    EXPECT_EQ(::allocation_counter::g_allocations.load(), 0u) << (fast ? "cpu.fast" : "cpu.reference");
  }
}

// Heap bytes Executor::load may use for its own bookkeeping (bound kernel
// closures, the value table, node ids): about 1 KiB per node. Kernel buffers
// (attention scores, quantized activations, unpack buffers) are planned
// scratch, so they are not here.
constexpr uint64_t kLoadHeapBytesPerNode = 2048;

// generate() allocates its own two buffers up front (the positions of one
// prefill chunk and the generated ids), and a sampling (not greedy)
// sampler reserves its two (probabilities, top-p order), then nothing: not
// per prefill chunk, not per decode step, not per sampled token.
constexpr uint64_t kGenerateAllocations = 2;
constexpr uint64_t kTopPSamplerAllocations = 2;

// Load, then a whole greedy generation (prefill in chunks of `capacity`, then
// `steps` decode steps) on each provider: the load's heap use is bookkeeping
// only, generation allocates nothing beyond generate()'s own buffers, and the
// executor allocates exactly the plan's memory total (what `explain` shows).
void expect_no_private_memory(const fs::path& model, uint64_t capacity, uint64_t steps) {
  std::vector<uint32_t> prompt;
  for (uint32_t i = 0; i < 21; ++i) prompt.push_back(1 + (i * 37) % 500);
  for (bool fast : {false, true}) {
    SCOPED_TRACE(fast ? "cpu.fast" : "cpu.reference");
    auto loaded = load(model, capacity, false, fast);
    ASSERT_TRUE(loaded) << loaded.error().to_string();
    Executor& executor = *(*loaded)->executor;
    const ExecutionPlan& plan = (*loaded)->plan();
    EXPECT_EQ(executor.allocated_bytes(), plan.memory().allocated_bytes);
    const uint64_t nodes = plan.nodes().size();
    fmt::print("{} {}: {} nodes, planned {} bytes, load heap {} bytes\n", model.filename().string(),
               fast ? "cpu.fast" : "cpu.reference", nodes, plan.memory().allocated_bytes,
               (*loaded)->load_heap_bytes);
    EXPECT_LE((*loaded)->load_heap_bytes, nodes * kLoadHeapBytesPerNode);
    for (const SamplerConfig config : {SamplerConfig{.temperature = 0.0f, .top_p = 1.0f, .seed = 1},
                                       SamplerConfig{.temperature = 0.8f, .top_p = 0.9f, .seed = 7}}) {
      SCOPED_TRACE(config.temperature == 0.0f ? "greedy" : "top-p");
      auto sampler = Sampler::create(config);
      ASSERT_TRUE(sampler);
      ::allocation_counter::g_allocations = 0;
      ::allocation_counter::g_counting = true;
      auto generated = generate(executor, prompt, steps, *sampler, std::nullopt, 512,
                                [](uint32_t) -> Result<void> { return {}; });
      ::allocation_counter::g_counting = false;
      ASSERT_TRUE(generated) << generated.error().to_string();
      EXPECT_EQ(generated->generated_tokens, steps);
      EXPECT_EQ(::allocation_counter::g_allocations.load(),
                kGenerateAllocations + (config.temperature == 0.0f ? 0 : kTopPSamplerAllocations));
    }
  }
}

TEST_F(StoriesForwardTest, NothingAllocatesAfterLoadAndPlanCoversEveryBuffer) {
  if (!FERRITE_COUNT_ALLOCATIONS) GTEST_SKIP() << "operator new belongs to the sanitizer here";
  expect_no_private_memory(kModels / "stories260K.gguf", 16, 150);
}

// The 24M-parameter Q8_0 model (written here, deterministically) at capacity
// 128: block-weight products quantize activations and unpack rows into
// planned scratch.
TEST_F(StoriesForwardTest, Synthetic24MAllocatesNothingAfterLoad) {
  if (!FERRITE_COUNT_ALLOCATIONS) GTEST_SKIP() << "operator new belongs to the sanitizer here";
  const fs::path path =
      fs::temp_directory_path() / fmt::format("ferrite-24m-{}.gguf", ::getpid());
  ASSERT_TRUE(ferrite::testing::write_synthetic_llama(path, kModels / "stories260K.gguf",
                                             ferrite::testing::kSynthetic24M));
  expect_no_private_memory(path, 128, 8);
  fs::remove(path);
}

}  // namespace llama_forward_test
}  // namespace ferrite
