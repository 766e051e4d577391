// The cross-provider conformance driver: every operation of every CPU
// provider is run against cpu.reference over many shapes, on the same
// deterministic inputs, and must agree within the operation's tolerance.
// Every variant of one provider (instruction sets, thread counts) must also
// agree with the others bit for bit, and leave rows past the step's tokens
// untouched. A new provider is added to `variants()` and nothing else.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ferrite/models/ggml_blocks.h"
#include "ferrite/models/half_float.h"
#include "ferrite/operations/operation_table.h"
#include "providers/cpu_fast/cpu_fast.h"
#include "providers/cpu_reference/cpu_reference.h"

namespace ferrite {
namespace conformance_test {

// One provider configuration under test.
struct Variant {
  std::string name;       // "fast/avx512/2 threads"
  std::string provider;   // provider id prefix, e.g. "provider.cpu.fast"
  std::function<Result<void>(CpuProviderRegistry&)> add;
};

std::vector<Variant> variants() {
  std::vector<Variant> out;
  for (const char* isa : {"avx512", "avx2", "portable"}) {
    for (uint32_t threads : {1u, 2u, 3u}) {
      CpuFastOptions options{.threads = threads, .isa = std::string(isa)};
      if (!cpu_fast_isa(options)) continue;  // not on this CPU
      out.push_back({fmt::format("fast/{}/{}", isa, threads), std::string(kCpuFastProviderPrefix),
                     [options](CpuProviderRegistry& r) { return add_cpu_fast_providers(r, options); }});
    }
  }
  return out;
}

// Largest |candidate - reference| allowed, relative to the case's scale
// (the largest |reference| value, at least 1). 0 means bit-identical.
double tolerance(const std::string& operation) {
  static const std::map<std::string, double> kTolerance{
      {"operation.linear", 2e-6},   {"operation.attention", 2e-6}, {"operation.rms_norm", 1e-6},
      {"operation.swiglu", 1e-6},   {"operation.rope", 0.0},       {"operation.add", 0.0},
      {"operation.token_embedding", 0.0}, {"operation.take_last_token", 0.0},
      {"operation.add_bias", 0.0},  {"operation.head_rms_norm", 1e-6},
      {"operation.rope_factors", 0.0}, {"operation.geglu", 2e-6},
      {"operation.scale", 0.0},     {"operation.rope_scaled", 0.0},     {"operation.sliding_attention", 2e-6},
      {"operation.sequence_attention", 2e-6}, {"operation.sequence_sliding_attention", 2e-6},
      {"operation.gather_rows", 0.0}};
  return kTolerance.at(operation);
}

// A tensor with its backing; `rows` > 0 makes it a token-scaled state;
// `component` makes it a weight stored in that component's encoding.
struct Buffer {
  ResolvedTensorSpec spec;
  std::vector<uint32_t> words;  // f32 bits, u32 values, or block bytes
  uint64_t rows = 0;
  std::optional<WeightComponentSpec> component;
};

struct Case {
  std::string operation;
  std::map<AttributeId, SemanticValue> attributes;
  std::vector<Buffer> inputs, outputs;
  uint64_t tokens = 1;
  std::string label;
  // When set: the largest |candidate - reference| allowed for each element of
  // outputs[0], replacing the operation's tolerance.
  std::vector<double> bound;
};

ResolvedTensorSpec spec(std::vector<uint64_t> dims, ElementType type = ElementType::kF32) {
  return *ResolvedTensorSpec::create(std::move(dims), type, ContiguousLayout{});
}

uint64_t elements(const ResolvedTensorSpec& s) {
  uint64_t n = 1;
  for (uint64_t d : s.dimensions()) n *= d;
  return n;
}

// Deterministic values in [-scale, scale).
struct Random {
  uint64_t state;
  float next(float scale) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return (static_cast<float>(state >> 40) / static_cast<float>(1 << 24) * 2.0f - 1.0f) * scale;
  }
};

Buffer f32(std::vector<uint64_t> dims, Random& random, float scale = 1.0f, uint64_t rows = 0) {
  Buffer b{spec(std::move(dims)), {}, rows, std::nullopt};
  b.words.resize(elements(b.spec) * std::max<uint64_t>(rows, 1));
  for (auto& w : b.words) {
    const float v = random.next(scale);
    std::memcpy(&w, &v, 4);
  }
  return b;
}

// A [rows, cols] weight of random ggml blocks: f16 scales between 2^-10 and
// 2^-2 with random signs, random integer values.
Buffer blocks(const GgmlBlockFormat& format, uint64_t rows, uint64_t cols, Random& random) {
  const uint64_t count = rows * cols / format.values_per_block;
  Buffer b{spec({rows, cols}), {}, 0, std::nullopt};
  b.words.resize((count * format.bytes_per_block + 3) / 4);
  auto* bytes = reinterpret_cast<uint8_t*>(b.words.data());
  for (uint64_t i = 0; i < count; ++i) {
    uint8_t* block = bytes + i * format.bytes_per_block;
    const auto scale_bits = static_cast<uint16_t>(
        (random.next(1.0f) < 0 ? 0x8000u : 0u) |
        (static_cast<uint32_t>(5 + (random.next(1.0f) + 1.0f) * 4.4f) << 10) |
        (static_cast<uint32_t>((random.next(1.0f) + 1.0f) * 511.0f) & 0x3ffu));
    block[0] = static_cast<uint8_t>(scale_bits);
    block[1] = static_cast<uint8_t>(scale_bits >> 8);
    for (uint64_t j = 2; j < format.bytes_per_block; ++j) {
      block[j] = static_cast<uint8_t>((random.next(1.0f) + 1.0f) * 127.9f);
    }
  }
  b.component = WeightComponentSpec{WeightId::literal("weight.conformance"),
                                    WeightComponentRole::kPackedValues,
                                    {"conformance.weight"},
                                    {rows, cols / format.values_per_block},
                                    BlockQuantizedEncoding{QuantizationFormatId::literal(format.format_id),
                                                           format.values_per_block,
                                                           format.bytes_per_block},
                                    true};
  return b;
}

// A [rows, cols] weight of the sub-block formats (Q4_1 ... Q6_K): random
// bytes, then every f16 field (d; m or dmin) a finite scale between 2^-10 and
// 2^-2 with a random sign (random int8 Q6_K scales include -128).
Buffer sub_blocks(const GgmlBlockFormat& format, uint64_t rows, uint64_t cols, Random& random) {
  Buffer b = blocks(format, rows, cols, random);
  auto* bytes = reinterpret_cast<uint8_t*>(b.words.data());
  const uint64_t count = rows * cols / format.values_per_block;
  std::vector<uint64_t> fields;  // offsets of the f16 fields
  if (format.ggml_type == kGgmlQ6_K.ggml_type) {
    fields = {208};
  } else if (format.ggml_type == kGgmlQ5_0.ggml_type) {
    fields = {0};
  } else {
    fields = {0, 2};
  }
  for (uint64_t i = 0; i < count; ++i) {
    for (uint64_t at : fields) {
      const auto bits = static_cast<uint16_t>(
          (random.next(1.0f) < 0 ? 0x8000u : 0u) |
          (static_cast<uint32_t>(5 + (random.next(1.0f) + 1.0f) * 4.4f) << 10) |
          (static_cast<uint32_t>((random.next(1.0f) + 1.0f) * 511.0f) & 0x3ffu));
      bytes[i * format.bytes_per_block + at] = static_cast<uint8_t>(bits);
      bytes[i * format.bytes_per_block + at + 1] = static_cast<uint8_t>(bits >> 8);
    }
  }
  return b;
}

// The error bound of cpu.fast's int8 activation contract (f32_kernels.h)
// against the exact product, per element of y [rows, out]: activation
// rounding moves each x_i by at most e/2 (e = amax/127 of its block) and the
// f16 scale d_a = f16(e) moves q_i * e by at most 127 |d_a - e|, so
// |y_fast - y_ref| <= sum_b (sum_{i in b} |w_i|) * (e_b/2 + 127 |d_a[b] - e_b|), times 1 + 1e-3
// for the f32 rounding of inv and the product, plus f32 summation rounding,
// 1e-5 * sum_i |w_i x_i| (+1e-30 for all-zero rows).
std::vector<double> quantized_linear_bound(const GgmlBlockFormat& format, const Buffer& x,
                                           const Buffer& w, uint64_t in, uint64_t out) {
  const uint64_t rows = x.words.size() / in, per_row = in / format.values_per_block;
  std::vector<float> weights(out * in);
  const auto* bytes = reinterpret_cast<const std::byte*>(w.words.data());
  for (uint64_t b = 0; b < out * per_row; ++b) {
    dequantize_ggml_block(format, bytes + b * format.bytes_per_block,
                          weights.data() + b * format.values_per_block);
  }
  // Formats with a min: the fast path sums the scale part d*u and the min
  // part separately, so its f32 rounding scales with both magnitudes:
  // `magnitude` = |d*u| + |min| per weight (the blocks with their mins
  // zeroed give d*u).
  std::vector<float> magnitude(weights);
  const bool has_min = format.ggml_type == kGgmlQ4_1.ggml_type ||
                       format.ggml_type == kGgmlQ5_1.ggml_type ||
                       format.ggml_type == kGgmlQ4_K.ggml_type ||
                       format.ggml_type == kGgmlQ5_K.ggml_type;
  if (has_min) {
    std::vector<std::byte> block(format.bytes_per_block);
    std::vector<float> scale_part(format.values_per_block);
    for (uint64_t b = 0; b < out * per_row; ++b) {
      std::copy_n(bytes + b * format.bytes_per_block, format.bytes_per_block, block.begin());
      block[2] = block[3] = std::byte{0};  // m / dmin
      dequantize_ggml_block(format, block.data(), scale_part.data());
      for (uint64_t i = 0; i < format.values_per_block; ++i) {
        float& v = magnitude[b * format.values_per_block + i];
        v = std::fabs(scale_part[i]) + std::fabs(v - scale_part[i]);
      }
    }
  }
  std::vector<double> bound(rows * out);
  for (uint64_t t = 0; t < rows; ++t) {
    const float* xt = reinterpret_cast<const float*>(x.words.data()) + t * in;
    for (uint64_t o = 0; o < out; ++o) {
      const float* wo = weights.data() + o * in;
      const float* mo = magnitude.data() + o * in;
      double activation = 0, rounding = 0;
      for (uint64_t b = 0; b < in / 32; ++b) {  // activation blocks of 32 (not weight blocks)
        double amax = 0, wsum = 0;
        for (uint64_t i = 32 * b; i < 32 * b + 32; ++i) {
          amax = std::max(amax, std::fabs(static_cast<double>(xt[i])));
          wsum += std::fabs(static_cast<double>(wo[i]));
          rounding += std::fabs(static_cast<double>(mo[i]) * xt[i]);
        }
        const float e = static_cast<float>(amax) / 127.0f;
        const double stored = f16_bits_to_f32(f32_to_f16_bits(e));
        activation += wsum * (e / 2.0 + 127.0 * std::fabs(stored - e));
      }
      bound[t * out + o] = activation * (1 + 1e-3) + 1e-5 * rounding + 1e-30;
    }
  }
  return bound;
}

Buffer u32(std::vector<uint32_t> values, uint64_t capacity) {
  Buffer b{spec({capacity}, ElementType::kU32), std::move(values), 0, std::nullopt};
  b.words.resize(capacity, 0);
  return b;
}

// Outputs start as a sentinel pattern, so rows a kernel must not write stay visible.
Buffer sentinel(std::vector<uint64_t> dims) {
  Buffer b{spec(std::move(dims)), {}, 0, std::nullopt};
  b.words.assign(elements(b.spec), 0x7fc0dead);
  return b;
}

SemanticValue rational(const char* text) {
  return SemanticRational{*CanonicalRational::parse_decimal(text)};
}

std::vector<Case> cases() {
  std::vector<Case> out;
  Random random{0x243f6a8885a308d3ull};
  const auto id = [](const char* s) { return AttributeId::literal(s); };
  // Matrix products: widths around the 16-lane blocks, tiles and the parallel threshold.
  for (uint64_t in : {1, 3, 15, 16, 17, 33, 64, 100, 257}) {
    for (uint64_t outw : {1, 5, 16, 17, 64, 130}) {
      for (uint64_t tokens : {1, 2, 3, 5, 9}) {
        Case c{"operation.linear", {}, {}, {}, tokens, fmt::format("in {} out {} tokens {}", in, outw, tokens)};
        c.inputs = {f32({tokens + 2, in}, random), f32({outw, in}, random, 0.5f)};
        c.outputs = {sentinel({tokens + 2, outw})};
        out.push_back(std::move(c));
      }
    }
  }
  for (auto [in, outw, tokens] : {std::tuple<uint64_t, uint64_t, uint64_t>{256, 300, 5},
                                  {512, 1376, 1}, {1376, 512, 4}, {288, 2048, 7}}) {
    Case c{"operation.linear", {}, {}, {}, tokens, fmt::format("in {} out {} tokens {} (threads)", in, outw, tokens)};
    c.inputs = {f32({tokens, in}, random), f32({outw, in}, random, 0.1f)};
    c.outputs = {sentinel({tokens, outw})};
    out.push_back(std::move(c));
  }
  // Block-quantized weights (Q8_0, Q4_0), read as stored; cpu.fast
  // quantizes the activations to int8 per block, so its difference from the
  // reference is bounded per element (quantized_linear_bound). Odd block
  // counts (in = 32, 96, 160, 480, 1376), 1-6 tokens, rows around the 4-row
  // tile, and shapes over the parallel threshold.
  std::vector<std::tuple<uint64_t, uint64_t, uint64_t>> block_shapes{
      {32, 1, 1},    {64, 5, 3},   {96, 17, 4},   {256, 33, 9},  {512, 300, 5},
      {768, 256, 1}, {1376, 64, 2}, {160, 130, 5}, {480, 51, 3},  {1376, 600, 1},
      {224, 7, 6}};
  for (uint64_t in : {32, 96, 160}) {
    for (uint64_t outw : {3, 6}) {
      for (uint64_t tokens = 1; tokens <= 6; ++tokens) block_shapes.emplace_back(in, outw, tokens);
    }
  }
  for (const GgmlBlockFormat* format : {&kGgmlQ8_0, &kGgmlQ4_0}) {
    for (auto [in, outw, tokens] : block_shapes) {
      Case c{"operation.linear", {}, {}, {}, tokens,
             fmt::format("{} in {} out {} tokens {}", format->name, in, outw, tokens)};
      c.inputs = {f32({tokens + 1, in}, random), blocks(*format, outw, in, random)};
      c.outputs = {sentinel({tokens + 1, outw})};
      c.bound = quantized_linear_bound(*format, c.inputs[0], c.inputs[1], in, outw);
      out.push_back(std::move(c));
    }
    // Activations with an all-zero block, a block of tiny values (127/amax
    // overflows to infinity), exact halves and one large value.
    for (auto [in, outw, tokens] : {std::tuple<uint64_t, uint64_t, uint64_t>{96, 9, 3}, {160, 40, 5}}) {
      Case c{"operation.linear", {}, {}, {}, tokens,
             fmt::format("{} in {} out {} tokens {} (special activations)", format->name, in, outw, tokens)};
      Buffer x = f32({tokens + 1, in}, random);
      const uint64_t width = in;  // (a structured binding: clang 14 cannot capture it)
      auto set = [&](uint64_t t, uint64_t i, float v) { std::memcpy(&x.words[t * width + i], &v, 4); };
      for (uint64_t i = 32; i < 64; ++i) set(0, i, 0.0f);
      for (uint64_t i = 0; i < 32; ++i) set(1, i, i % 3 == 0 ? 0.0f : (i % 2 ? 1e-38f : -2e-39f));
      for (uint64_t i = 64; i < 96; ++i) set(2, i, static_cast<float>(static_cast<int>(i) - 80) + 0.5f);
      set(2, 64, 127.0f);  // amax 127: x * inv == x, the halves round to even
      set(0, 5, 1e4f);
      c.inputs = {std::move(x), blocks(*format, outw, in, random)};
      c.outputs = {sentinel({tokens + 1, outw})};
      c.bound = quantized_linear_bound(*format, c.inputs[0], c.inputs[1], in, outw);
      out.push_back(std::move(c));
    }
    Case embed{"operation.token_embedding", {}, {}, {}, 3, fmt::format("{} table", format->name)};
    embed.inputs = {u32({7, 0, 63}, 4), blocks(*format, 64, 96, random)};
    embed.outputs = {sentinel({4, 96})};
    out.push_back(std::move(embed));
  }
  // The sub-block formats (f32_kernels.h "Sub-block formats"): the 32-value
  // ones on widths with a tail of fewer than 8 blocks (32, 96, 288, 1376),
  // the K ones on 1-5 super-blocks; 1-17 tokens (cpu.fast's AVX2 code keeps
  // up to 4 tokens' sums in registers, more in memory); shapes over the parallel
  // threshold; the special activations above.
  for (const GgmlBlockFormat* format :
       {&kGgmlQ4_1, &kGgmlQ5_0, &kGgmlQ5_1, &kGgmlQ4_K, &kGgmlQ5_K, &kGgmlQ6_K}) {
    const bool k = format->values_per_block == 256;
    std::vector<std::tuple<uint64_t, uint64_t, uint64_t>> shapes =
        k ? std::vector<std::tuple<uint64_t, uint64_t, uint64_t>>{{256, 1, 1}, {256, 7, 5},
                                                                  {512, 33, 9}, {768, 17, 3},
                                                                  {1280, 300, 2}, {512, 600, 1},
                                                                  {512, 20, 4}, {768, 40, 17}}
          : std::vector<std::tuple<uint64_t, uint64_t, uint64_t>>{{32, 1, 1},   {96, 7, 5},
                                                                  {256, 33, 9}, {288, 17, 3},
                                                                  {1376, 300, 2}, {512, 600, 1},
                                                                  {288, 20, 4}, {1376, 40, 17}};
    for (auto [in, outw, tokens] : shapes) {
      Case c{"operation.linear", {}, {}, {}, tokens,
             fmt::format("{} in {} out {} tokens {}", format->name, in, outw, tokens)};
      c.inputs = {f32({tokens + 1, in}, random), sub_blocks(*format, outw, in, random)};
      c.outputs = {sentinel({tokens + 1, outw})};
      c.bound = quantized_linear_bound(*format, c.inputs[0], c.inputs[1], in, outw);
      out.push_back(std::move(c));
    }
    {
      const uint64_t in = k ? 256 : 96, outw = 9, tokens = 3;
      Case c{"operation.linear", {}, {}, {}, tokens,
             fmt::format("{} in {} out {} tokens {} (special activations)", format->name, in, outw, tokens)};
      Buffer x = f32({tokens + 1, in}, random);
      auto set = [&](uint64_t t, uint64_t i, float v) { std::memcpy(&x.words[t * in + i], &v, 4); };
      for (uint64_t i = 32; i < 64; ++i) set(0, i, 0.0f);
      for (uint64_t i = 0; i < 32; ++i) set(1, i, i % 3 == 0 ? 0.0f : (i % 2 ? 1e-38f : -2e-39f));
      for (uint64_t i = 64; i < 96; ++i) set(2, i, static_cast<float>(static_cast<int>(i) - 80) + 0.5f);
      set(2, 64, 127.0f);
      set(0, 5, 1e4f);
      c.inputs = {std::move(x), sub_blocks(*format, outw, in, random)};
      c.outputs = {sentinel({tokens + 1, outw})};
      c.bound = quantized_linear_bound(*format, c.inputs[0], c.inputs[1], in, outw);
      out.push_back(std::move(c));
    }
    Case embed{"operation.token_embedding", {}, {}, {}, 3, fmt::format("{} table", format->name)};
    embed.inputs = {u32({7, 0, 63}, 4), sub_blocks(*format, 64, k ? 512 : 96, random)};
    embed.outputs = {sentinel({4, k ? 512u : 96u})};
    out.push_back(std::move(embed));
  }
  for (uint64_t width : {1, 7, 16, 64, 100, 768}) {
    for (uint64_t tokens : {1, 4}) {
      Case norm{"operation.rms_norm", {{id("epsilon"), rational("0.00001")}}, {}, {}, tokens,
                fmt::format("width {} tokens {}", width, tokens)};
      norm.inputs = {f32({tokens + 1, width}, random, 3.0f), f32({width}, random)};
      norm.outputs = {sentinel({tokens + 1, width})};
      out.push_back(std::move(norm));
      Case glu{"operation.swiglu", {}, {}, {}, tokens, fmt::format("width {} tokens {}", width, tokens)};
      glu.inputs = {f32({tokens + 1, width}, random, 6.0f), f32({tokens + 1, width}, random, 2.0f)};
      glu.outputs = {sentinel({tokens + 1, width})};
      out.push_back(std::move(glu));
      Case sum{"operation.add", {}, {}, {}, tokens, fmt::format("width {} tokens {}", width, tokens)};
      sum.inputs = {f32({tokens + 1, width}, random), f32({tokens + 1, width}, random)};
      sum.outputs = {sentinel({tokens + 1, width})};
      out.push_back(std::move(sum));
    }
  }
  for (const char* convention : {"interleaved", "half_split"}) {
    for (uint64_t head_dim : {2, 8, 64}) {
      for (uint64_t heads : {1, 3}) {
        const uint64_t tokens = 3;
        Case c{"operation.rope",
               {{id("head_dim"), SemanticUnsigned{head_dim}},
                {id("theta"), rational("10000")},
                {id("convention"), SemanticText{convention}}},
               {}, {}, tokens, fmt::format("{} head_dim {} heads {}", convention, head_dim, heads)};
        c.inputs = {f32({tokens + 1, heads * head_dim}, random), u32({0, 17, 4095}, tokens + 1)};
        c.outputs = {sentinel({tokens + 1, heads * head_dim})};
        out.push_back(std::move(c));
      }
    }
  }
  // The family operations: bias rows, per-head norms (head widths around the
  // 16-lane blocks), RoPE with frequency factors (Llama 3's divide the low
  // frequencies by up to 8).
  for (uint64_t width : {1, 7, 64, 100}) {
    for (uint64_t tokens : {1, 4}) {
      Case bias{"operation.add_bias", {}, {}, {}, tokens, fmt::format("width {} tokens {}", width, tokens)};
      bias.inputs = {f32({tokens + 1, width}, random), f32({width}, random)};
      bias.outputs = {sentinel({tokens + 1, width})};
      out.push_back(std::move(bias));
    }
  }
  for (uint64_t head_dim : {1, 8, 17, 64}) {
    for (uint64_t heads : {1, 3}) {
      const uint64_t tokens = 2;
      Case c{"operation.head_rms_norm",
             {{id("epsilon"), rational("0.000001")}, {id("head_dim"), SemanticUnsigned{head_dim}}},
             {}, {}, tokens, fmt::format("head_dim {} heads {}", head_dim, heads)};
      c.inputs = {f32({tokens + 1, heads * head_dim}, random, 3.0f), f32({head_dim}, random)};
      c.outputs = {sentinel({tokens + 1, heads * head_dim})};
      out.push_back(std::move(c));
    }
  }
  for (const char* convention : {"interleaved", "half_split"}) {
    for (uint64_t head_dim : {2, 8, 64}) {
      const uint64_t tokens = 3, heads = 2;
      Case c{"operation.rope_factors",
             {{id("head_dim"), SemanticUnsigned{head_dim}},
              {id("theta"), rational("500000")},
              {id("convention"), SemanticText{convention}}},
             {}, {}, tokens, fmt::format("{} head_dim {}", convention, head_dim)};
      Buffer factors = f32({head_dim / 2}, random);
      for (uint64_t i = 0; i < head_dim / 2; ++i) {
        const float f = 1.0f + 7.0f * static_cast<float>(i) / static_cast<float>(head_dim / 2);
        std::memcpy(&factors.words[i], &f, 4);
      }
      c.inputs = {f32({tokens + 1, heads * head_dim}, random), u32({0, 9, 4000}, tokens + 1),
                  std::move(factors)};
      c.outputs = {sentinel({tokens + 1, heads * head_dim})};
      out.push_back(std::move(c));
    }
  }
  // An attention case in sequence form (operation `op`): every token in
  // slot 0, the slots read after the positions (an unpaged cache holds one
  // sequence; tests/runtime/sequence_slots_test.cc runs many).
  auto in_sequence_form = [](Case c, const char* op) {
    c.operation = op;
    c.inputs.insert(c.inputs.begin() + 4,
                    u32(std::vector<uint32_t>(c.tokens, 0), c.tokens + 1));
    return c;
  };
  // Attention: grouped heads, head widths around the lanes, positions that
  // start mid-context (the caches hold earlier rows), and a long row that
  // crosses the parallel threshold; each also in sequence form.
  struct Shape { uint64_t heads, kv_heads, head_dim, context, start, tokens; };
  for (const Shape& s : {Shape{1, 1, 2, 8, 0, 1}, Shape{4, 2, 8, 40, 5, 3}, Shape{8, 4, 16, 40, 0, 4},
                         Shape{6, 3, 20, 40, 30, 2}, Shape{8, 4, 64, 96, 70, 3},
                         Shape{12, 4, 64, 64, 1, 2}}) {
    const uint64_t qd = s.heads * s.head_dim, kd = s.kv_heads * s.head_dim;
    Case c{"operation.attention",
           {{id("n_heads"), SemanticUnsigned{s.heads}},
            {id("n_kv_heads"), SemanticUnsigned{s.kv_heads}},
            {id("head_dim"), SemanticUnsigned{s.head_dim}}},
           {}, {}, s.tokens,
           fmt::format("heads {}/{} head_dim {} start {} tokens {}", s.heads, s.kv_heads, s.head_dim,
                       s.start, s.tokens)};
    std::vector<uint32_t> positions;
    for (uint64_t t = 0; t < s.tokens; ++t) positions.push_back(static_cast<uint32_t>(s.start + t));
    c.inputs = {f32({s.tokens + 1, qd}, random), f32({s.tokens + 1, kd}, random),
                f32({s.tokens + 1, kd}, random), u32(positions, s.tokens + 1),
                f32({kd}, random, 1.0f, s.context), f32({kd}, random, 1.0f, s.context)};
    c.outputs = {sentinel({s.tokens + 1, qd})};
    out.push_back(in_sequence_form(c, "operation.sequence_attention"));
    out.push_back(std::move(c));
  }
  // Gemma's operations: GeGLU around the tanh's saturation (gates up to
  // ±6), the embedding scale (the f32 sqrt(640) as an exact fraction), and
  // sliding-window attention: windows shorter than, equal to and longer than
  // the visible rows, positions past the window, a scale base that is not
  // head_dim, and window 0 (every earlier key).
  for (uint64_t width : {1, 7, 64, 100}) {
    for (uint64_t tokens : {1, 4}) {
      Case glu{"operation.geglu", {}, {}, {}, tokens, fmt::format("width {} tokens {}", width, tokens)};
      glu.inputs = {f32({tokens + 1, width}, random, 6.0f), f32({tokens + 1, width}, random, 2.0f)};
      glu.outputs = {sentinel({tokens + 1, width})};
      out.push_back(std::move(glu));
      Case scaled{"operation.scale", {{id("factor"), rational("13263554/524288")}}, {}, {}, tokens,
                  fmt::format("width {} tokens {}", width, tokens)};
      scaled.inputs = {f32({tokens + 1, width}, random)};
      scaled.outputs = {sentinel({tokens + 1, width})};
      out.push_back(std::move(scaled));
    }
  }
  for (const char* convention : {"interleaved", "half_split"}) {
    for (uint64_t head_dim : {2, 8, 64}) {
      for (const char* factor : {"8", "5/2"}) {
        const uint64_t tokens = 3, heads = 2;
        Case c{"operation.rope_scaled",
               {{id("head_dim"), SemanticUnsigned{head_dim}},
                {id("theta"), rational("1000000")},
                {id("convention"), SemanticText{convention}},
                {id("factor"), rational(factor)}},
               {}, {}, tokens, fmt::format("{} head_dim {} factor {}", convention, head_dim, factor)};
        c.inputs = {f32({tokens + 1, heads * head_dim}, random), u32({0, 9, 4000}, tokens + 1)};
        c.outputs = {sentinel({tokens + 1, heads * head_dim})};
        out.push_back(std::move(c));
      }
    }
  }
  struct Window { uint64_t heads, kv_heads, head_dim, context, start, tokens, scale_base, window; };
  for (const Window& s : {Window{1, 1, 2, 8, 0, 1, 2, 1}, Window{4, 2, 8, 40, 5, 3, 8, 4},
                          Window{8, 4, 16, 40, 0, 4, 24, 2}, Window{6, 3, 20, 40, 30, 2, 20, 31},
                          Window{8, 4, 64, 96, 70, 3, 256, 16}, Window{12, 4, 64, 64, 1, 2, 64, 0},
                          Window{8, 4, 64, 96, 60, 4, 64, 200}}) {
    const uint64_t qd = s.heads * s.head_dim, kd = s.kv_heads * s.head_dim;
    Case c{"operation.sliding_attention",
           {{id("n_heads"), SemanticUnsigned{s.heads}},
            {id("n_kv_heads"), SemanticUnsigned{s.kv_heads}},
            {id("head_dim"), SemanticUnsigned{s.head_dim}},
            {id("scale_base"), SemanticUnsigned{s.scale_base}},
            {id("window"), SemanticUnsigned{s.window}}},
           {}, {}, s.tokens,
           fmt::format("heads {}/{} head_dim {} start {} tokens {} scale_base {} window {}",
                       s.heads, s.kv_heads, s.head_dim, s.start, s.tokens, s.scale_base, s.window)};
    std::vector<uint32_t> positions;
    for (uint64_t t = 0; t < s.tokens; ++t) positions.push_back(static_cast<uint32_t>(s.start + t));
    c.inputs = {f32({s.tokens + 1, qd}, random), f32({s.tokens + 1, kd}, random),
                f32({s.tokens + 1, kd}, random), u32(positions, s.tokens + 1),
                f32({kd}, random, 1.0f, s.context), f32({kd}, random, 1.0f, s.context)};
    c.outputs = {sentinel({s.tokens + 1, qd})};
    out.push_back(in_sequence_form(c, "operation.sequence_sliding_attention"));
    out.push_back(std::move(c));
  }
  // gather_rows: rows in any order, repeated; fewer step tokens than rows
  // leave the rows past the step alone.
  for (uint64_t tokens : {2, 5}) {
    Case c{"operation.gather_rows", {}, {}, {}, tokens, fmt::format("tokens {}", tokens)};
    c.inputs = {f32({6, 7}, random), u32({1, 0, 1}, 3)};
    c.outputs = {sentinel({3, 7})};
    out.push_back(std::move(c));
  }
  return out;
}

// Runs one case on one registry's provider; returns every buffer's words
// after the step (inputs too: attention writes its caches).
Result<std::vector<std::vector<uint32_t>>> run_case(const CpuProviderRegistry& registry,
                                                    const std::string& provider, const Case& c) {
  const std::string name = c.operation.substr(std::string("operation.").size());
  const CpuProviderSpec* spec = registry.find(OperationId::literal(c.operation),
                                              ProviderId::literal(provider + "." + name));
  if (spec == nullptr) return make_error(ErrorCode::kInvalidArgument, "not registered");
  std::vector<Buffer> buffers = c.inputs;
  buffers.insert(buffers.end(), c.outputs.begin(), c.outputs.end());
  const NodeId node_id = NodeId::literal("node.conformance");
  KernelNode node{.node_id = &node_id, .attributes = &c.attributes};
  for (size_t i = 0; i < buffers.size(); ++i) {
    KernelTensor t{reinterpret_cast<std::byte*>(buffers[i].words.data()), &buffers[i].spec,
                   buffers[i].rows,
                   buffers[i].component ? &*buffers[i].component : nullptr};
    (i < c.inputs.size() ? node.inputs : node.outputs).push_back(t);
  }
  // Scratch as a plan would give it: the provider's declared formula for
  // this node, and nothing more.
  std::vector<std::byte> scratch;
  if (spec->estimate.scratch) {
    std::vector<WorkspaceShapeSlot> slots;
    for (size_t i = 0; i < buffers.size(); ++i) {
      const bool input = i < c.inputs.size();
      slots.push_back(WorkspaceShapeSlot{
          input ? ValueBindingRole::kInput : ValueBindingRole::kOutput,
          static_cast<uint32_t>(input ? i : i - c.inputs.size()), buffers[i].spec.dimensions(),
          buffers[i].rows});
    }
    const auto* shape = std::get_if<WorkspaceShape>(&spec->estimate.scratch->formula);
    if (shape == nullptr) return make_error(ErrorCode::kInvalidArgument, "unexpected formula");
    FERRITE_ASSIGN_OR_RETURN(uint64_t bytes,
                             evaluate_workspace_shape(*shape, node_id, c.attributes, slots));
    scratch.resize(bytes + 64);
  }
  if (!scratch.empty()) {
    const uintptr_t address = reinterpret_cast<uintptr_t>(scratch.data());
    node.scratch = scratch.data() + (64 - address % 64) % 64;
    node.scratch_bytes = scratch.size() - 64;
  }
  FERRITE_ASSIGN_OR_RETURN(BoundKernel kernel, spec->factory(node));
  FERRITE_RETURN_IF_ERROR(kernel.run(c.tokens));
  std::vector<std::vector<uint32_t>> words;
  for (auto& b : buffers) words.push_back(std::move(b.words));
  return words;
}

float as_float(uint32_t w) {
  float f;
  std::memcpy(&f, &w, 4);
  return f;
}

TEST(ProviderConformanceTest, EveryProviderAgreesWithTheReferenceOnEveryOperation) {
  CpuProviderRegistry reference;
  ASSERT_TRUE(add_cpu_reference_providers(reference));
  const auto all_variants = variants();
  ASSERT_FALSE(all_variants.empty());
  const auto all_cases = cases();
  std::map<std::string, uint64_t> checked;  // operation -> cases x variants
  uint64_t bounded = 0;  // elements checked against a per-element bound
  for (const Case& c : all_cases) {
    auto expected = run_case(reference, "provider.cpu.reference", c);
    ASSERT_TRUE(expected) << c.operation << " " << c.label << ": " << expected.error().to_string();
    std::optional<std::vector<std::vector<uint32_t>>> first;  // the first variant's bits
    for (const Variant& v : all_variants) {
      CpuProviderRegistry registry;
      ASSERT_TRUE(v.add(registry));
      auto got = run_case(registry, v.provider, c);
      if (!got && got.error().message() == "not registered") continue;
      ASSERT_TRUE(got) << v.name << " " << c.label << ": " << got.error().to_string();
      ASSERT_EQ(got->size(), expected->size());
      // Scale: the largest reference magnitude among the compared words.
      double scale = 1.0, worst = 0.0;
      for (size_t b = 0; b < got->size(); ++b) {
        for (size_t i = 0; i < (*got)[b].size(); ++i) {
          const uint32_t e = (*expected)[b][i], g = (*got)[b][i];
          if (e == 0x7fc0dead || g == 0x7fc0dead) {
            // A row past the step: both must have left it alone.
            ASSERT_EQ(e, g) << v.name << " " << c.operation << " " << c.label << " buffer " << b
                            << " word " << i;
            continue;
          }
          if (b < c.inputs.size() && (c.inputs[b].spec.element_type() == ElementType::kU32 ||
                                      c.inputs[b].component)) {
            ASSERT_EQ(e, g);
            continue;
          }
          const double difference = std::fabs(static_cast<double>(as_float(g)) - as_float(e));
          if (b == c.inputs.size() && !c.bound.empty()) {
            ASSERT_LT(i, c.bound.size());
            EXPECT_LE(difference, c.bound[i]) << v.name << " " << c.operation << " " << c.label
                                              << " word " << i << ": " << as_float(g) << " vs "
                                              << as_float(e);
            ++bounded;
            continue;
          }
          scale = std::max(scale, std::fabs(static_cast<double>(as_float(e))));
          worst = std::max(worst, difference);
        }
      }
      EXPECT_LE(worst / scale, tolerance(c.operation))
          << v.name << " " << c.operation << " " << c.label << ": max |difference| " << worst
          << " at scale " << scale;
      if (!first) {
        first = std::move(*got);
      } else {
        EXPECT_TRUE(*first == *got) << v.name << " differs in bits from " << all_variants[0].name
                                    << " on " << c.operation << " " << c.label;
      }
      ++checked[c.operation];
    }
  }
  EXPECT_GT(bounded, 0u);
  // Every fast operation was exercised by every variant.
  for (const char* op : {"operation.linear", "operation.attention", "operation.rms_norm",
                         "operation.rope", "operation.swiglu", "operation.add",
                         "operation.add_bias", "operation.head_rms_norm",
                         "operation.rope_factors", "operation.geglu", "operation.scale",
                         "operation.sliding_attention", "operation.rope_scaled",
                         "operation.sequence_attention", "operation.sequence_sliding_attention"}) {
    EXPECT_GT(checked[op], 0u) << op;
    EXPECT_EQ(checked[op] % all_variants.size(), 0u) << op;
  }
}

TEST(ProviderConformanceTest, UnknownOrUnsupportedInstructionSetsAreRefused) {
  CpuProviderRegistry registry;
  auto bad = add_cpu_fast_providers(registry, {.threads = 1, .isa = std::string("sse9")});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("sse9"), std::string::npos);
  EXPECT_TRUE(cpu_fast_isa({.threads = 1, .isa = std::string("portable")}));
}

}  // namespace conformance_test
}  // namespace ferrite
