// tests/support/synthetic_decoder.h — small GGUF decoders of every Llama-like
// family (llama, qwen2, qwen3, phi3 — whose fused attn_qkv and gate+up
// ffn_up the writer makes from the separate matrices — and gemma3: scaled
// embeddings, q/k norms, post-attention and post-FFN norms, GeGLU,
// sliding-window layers with their own rope base), and an independent double-precision forward
// pass of them, written from the architectures' definitions (llama.cpp's
// graphs), sharing no code with Ferrite's kernels.
//
// `synthetic_decoder_tensors(shape)` makes the tensors (GGUF names, GGUF dims
// innermost first, f32 values from a fixed xorshift stream per name; norms
// 1 ± 0.25, biases ±0.5, the classifier scaled by `output_scale` so the
// greedy top-1 margin is large), `write_synthetic_decoder(path, shape,
// tensors)` the file: the `<arch>.*` keys and a SentencePiece-style vocabulary
// (<unk> <s> </s>, the 256 byte tokens <0x00>..<0xFF>, then pieces, with
// scores and token types) that Ferrite and llama.cpp both load.
// `DecoderReference(shape, tensors).logits(tokens)` is the last token's
// logits of the whole sequence.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ferrite/models/ggml_blocks.h"
#include "ferrite/models/gguf_reader.h"
#include "ferrite/models/gguf_writer.h"
#include "support/synthetic_llama.h"

namespace ferrite::testing {

struct DecoderShape {
  std::string arch = "llama";  // llama, qwen2, qwen3, phi3, gemma3
  uint64_t dim = 64, layers = 2, heads = 4, kv_heads = 2, head_dim = 16, ffn = 96, vocab = 280,
           context = 64;
  float theta = 10000.0f, eps = 1e-5f;
  bool rope_freqs = false, qkv_bias = false, qk_norm = false, tied = false;
  float output_scale = 16.0f;
  // A model whose greedy choices are far from ties (for token-by-token
  // comparisons of quantized files): with `peaked_stride` > 0 the classifier
  // (untied files) is the token embedding shifted by the stride — row o is
  // token (o - stride) mod vocab's embedding, unscaled — so token t scores
  // t + stride highest (a tied file scores t itself highest), and every
  // attn_output / ffn_down is scaled by `residual_scale` so the layers move
  // the residual stream without overturning that choice (gemma3: every
  // post_attention_norm / post_ffw_norm, whose RMSNorm would undo a scaled
  // projection).
  uint64_t peaked_stride = 0;
  float residual_scale = 1.0f;
  // gemma3: the window of the sliding layers (0: none), every
  // `sliding_period`-th layer global (layer i when i % period == period - 1),
  // the local layers' rope base, and the output norm's scale (the classifier
  // is tied, so this is what makes the logits' margins large).
  uint64_t sliding_window = 0, sliding_period = 6;
  float theta_local = 10000.0f, output_norm_scale = 1.0f;
  // gemma3: linear RoPE scaling of the global layers (angles / rope_scale).
  float rope_scale = 1.0f;
  // gemma3, for the oracle's investigation only: the reference computes
  // GeGLU as llama.cpp's CPU backend does (GGML_GELU_FP16: the gate rounded
  // to f16, GELU read from a table of f16 values; 0 below -10, x above 10).
  bool gelu_f16 = false;
  bool gemma() const { return arch == "gemma3"; }
  bool sliding(uint64_t layer) const {
    return gemma() && sliding_window != 0 && layer % sliding_period < sliding_period - 1;
  }
  // The GGUF type of every matrix (2-D tensor) as written: F32, or a block
  // type such as Q8_0 (the oracle's files; the reference reads the f32
  // values, so only the F32 files are compared with it).
  uint32_t matrix_type = kGgmlTypeF32;
  bool half_split() const { return arch != "llama"; }
  uint64_t q_dim() const { return heads * head_dim; }
  uint64_t kv_dim() const { return kv_heads * head_dim; }
};

struct DecoderTensor {
  std::vector<uint64_t> dims;  // GGUF order (innermost first)
  std::vector<float> values;
};
using DecoderTensors = std::map<std::string, DecoderTensor>;

inline DecoderTensors synthetic_decoder_tensors(const DecoderShape& s) {
  DecoderTensors out;
  auto matrix = [&](const std::string& name, uint64_t rows, uint64_t cols, float scale = 1.0f) {
    std::vector<float> v = synthetic_weights(name, rows * cols, cols);
    for (float& x : v) x *= scale;
    out[name] = {{cols, rows}, std::move(v)};
  };
  auto vector = [&](const std::string& name, uint64_t n, float base, float spread) {
    std::vector<float> v = synthetic_weights(name, n, 1);
    for (float& x : v) x = base + spread * x;
    out[name] = {{n}, std::move(v)};
  };
  matrix("token_embd.weight", s.vocab, s.dim);
  vector("output_norm.weight", s.dim, s.output_norm_scale, 0.25f * s.output_norm_scale);
  if (!s.tied) matrix("output.weight", s.vocab, s.dim, s.output_scale);
  if (s.rope_freqs) {
    // Llama 3's shape: 1 for the fast pairs, up to 8 for the slow ones.
    std::vector<float> f(s.head_dim / 2);
    for (size_t i = 0; i < f.size(); ++i) {
      f[i] = 1.0f + 7.0f * static_cast<float>(i) / static_cast<float>(f.size());
    }
    out["rope_freqs.weight"] = {{s.head_dim / 2}, std::move(f)};
  }
  for (uint64_t l = 0; l < s.layers; ++l) {
    const std::string p = fmt::format("blk.{}.", l);
    vector(p + "attn_norm.weight", s.dim, 1.0f, 0.25f);
    matrix(p + "attn_q.weight", s.q_dim(), s.dim);
    matrix(p + "attn_k.weight", s.kv_dim(), s.dim);
    matrix(p + "attn_v.weight", s.kv_dim(), s.dim);
    matrix(p + "attn_output.weight", s.dim, s.q_dim());
    if (s.qkv_bias) {
      vector(p + "attn_q.bias", s.q_dim(), 0.0f, 0.5f);
      vector(p + "attn_k.bias", s.kv_dim(), 0.0f, 0.5f);
      vector(p + "attn_v.bias", s.kv_dim(), 0.0f, 0.5f);
    }
    if (s.qk_norm || s.gemma()) {
      vector(p + "attn_q_norm.weight", s.head_dim, 1.0f, 0.25f);
      vector(p + "attn_k_norm.weight", s.head_dim, 1.0f, 0.25f);
    }
    vector(p + "ffn_norm.weight", s.dim, 1.0f, 0.25f);
    matrix(p + "ffn_gate.weight", s.ffn, s.dim);
    matrix(p + "ffn_up.weight", s.ffn, s.dim);
    matrix(p + "ffn_down.weight", s.dim, s.ffn);
    if (s.gemma()) {
      // (GGUF's Gemma norms hold 1 + w: llama.cpp's converter adds the 1.)
      vector(p + "post_attention_norm.weight", s.dim, 1.0f, 0.25f);
      vector(p + "post_ffw_norm.weight", s.dim, 1.0f, 0.25f);
    }
  }
  if (s.peaked_stride != 0) {
    const std::vector<float>& e = out.at("token_embd.weight").values;
    if (!s.tied) {
      std::vector<float>& o = out.at("output.weight").values;
      for (uint64_t row = 0; row < s.vocab; ++row) {
        const uint64_t from = (row + s.vocab - s.peaked_stride % s.vocab) % s.vocab;
        std::copy_n(e.begin() + static_cast<std::ptrdiff_t>(from * s.dim), s.dim,
                    o.begin() + static_cast<std::ptrdiff_t>(row * s.dim));
      }
    }
    // gemma3 normalizes each branch again before the residual add
    // (post_attention_norm, post_ffw_norm), which would undo a scaled
    // projection: there the scale goes on those norms' weights instead.
    for (auto& [name, t] : out) {
      const bool branch_end =
          s.gemma() ? name.ends_with(".post_attention_norm.weight") ||
                          name.ends_with(".post_ffw_norm.weight")
                    : name.ends_with(".attn_output.weight") || name.ends_with(".ffn_down.weight");
      if (branch_end) {
        for (float& x : t.values) x *= s.residual_scale;
      }
    }
  }
  return out;
}

// The vocabulary: <unk> <s> </s>, 256 byte tokens, then pieces "▁a", "▁b", ….
inline void add_synthetic_vocabulary(GgufFileSpec& file, uint64_t vocab) {
  std::vector<std::string> tokens{"<unk>", "<s>", "</s>"};
  std::vector<float> scores{0.0f, 0.0f, 0.0f};
  std::vector<int32_t> types{2, 3, 3};  // unknown, control, control
  for (int b = 0; b < 256; ++b) {
    tokens.push_back(fmt::format("<0x{:02X}>", b));
    scores.push_back(0.0f);
    types.push_back(6);  // byte
  }
  for (uint64_t i = 0; tokens.size() < vocab; ++i) {
    std::string piece = "\xe2\x96\x81";  // ▁
    for (uint64_t n = i; ; n = n / 26 - 1) {
      piece += static_cast<char>('a' + n % 26);
      if (n < 26) break;
    }
    tokens.push_back(piece);
    scores.push_back(-static_cast<float>(i));
    types.push_back(1);  // normal
  }
  file.metadata.push_back({"tokenizer.ggml.model", {std::string("llama")}});
  file.metadata.push_back({"tokenizer.ggml.tokens", GgufValue{GgufArray{tokens}}});
  file.metadata.push_back({"tokenizer.ggml.scores", GgufValue{GgufArray{scores}}});
  file.metadata.push_back({"tokenizer.ggml.token_type", GgufValue{GgufArray{types}}});
  file.metadata.push_back({"tokenizer.ggml.bos_token_id", {uint32_t{1}}});
  file.metadata.push_back({"tokenizer.ggml.eos_token_id", {uint32_t{2}}});
  file.metadata.push_back({"tokenizer.ggml.unknown_token_id", {uint32_t{0}}});
}

// `drop_key`: a metadata key left out, `extra`: keys added (for the
// config-mapping tests).
inline Result<void> write_synthetic_decoder(
    const std::filesystem::path& path, const DecoderShape& s, const DecoderTensors& tensors,
    const std::string& drop_key = "",
    std::vector<std::pair<std::string, GgufValue>> extra = {}) {
  GgufFileSpec file;
  const std::string a = s.arch;
  auto u32 = [](uint64_t v) { return GgufValue{static_cast<uint32_t>(v)}; };
  std::vector<std::pair<std::string, GgufValue>> keys{
      {"general.architecture", {a}},
      // (Not naming the family: llama.cpp keys token attributes off the
      // name, and a "phi3" name makes it look up Phi-3's own special tokens.)
      {"general.name", {std::string("ferrite synthetic decoder")}},
      {"general.file_type", {uint32_t{s.matrix_type == kGgmlTypeQ8_0 ? 7u : 0u}}},
      {a + ".context_length", u32(s.context)},
      {a + ".embedding_length", u32(s.dim)},
      {a + ".feed_forward_length", u32(s.ffn)},
      {a + ".block_count", u32(s.layers)},
      {a + ".attention.head_count", u32(s.heads)},
      {a + ".attention.head_count_kv", u32(s.kv_heads)},
      {a + ".rope.dimension_count", u32(s.head_dim)},
      {a + ".rope.freq_base", {s.theta}},
      {a + ".attention.layer_norm_rms_epsilon", {s.eps}}};
  if (s.head_dim * s.heads != s.dim || s.gemma()) {
    keys.push_back({a + ".attention.key_length", u32(s.head_dim)});
    keys.push_back({a + ".attention.value_length", u32(s.head_dim)});
  }
  if (s.gemma() && s.sliding_window != 0) {
    keys.push_back({a + ".attention.sliding_window", u32(s.sliding_window)});
    keys.push_back({a + ".attention.sliding_window_pattern", u32(s.sliding_period)});
    keys.push_back({a + ".rope.freq_base_swa", {s.theta_local}});
  }
  if (s.gemma() && s.rope_scale != 1.0f) {
    keys.push_back({a + ".rope.scaling.type", {std::string("linear")}});
    keys.push_back({a + ".rope.scaling.factor", {s.rope_scale}});
  }
  for (auto& [key, value] : keys) {
    if (key != drop_key) file.metadata.push_back({key, std::move(value)});
  }
  for (auto& entry : extra) file.metadata.push_back(std::move(entry));
  add_synthetic_vocabulary(file, s.vocab);
  DecoderTensors stored = tensors;
  if (s.arch == "phi3") {
    // Phi-3 stores q/k/v as one matrix and gate/up as one (gate first).
    auto fuse = [&](const std::string& into, std::vector<std::string> parts) {
      DecoderTensor fused{{stored.at(parts[0]).dims[0], 0}, {}};
      for (const std::string& part : parts) {
        const DecoderTensor& t = stored.at(part);
        fused.dims[1] += t.dims[1];
        fused.values.insert(fused.values.end(), t.values.begin(), t.values.end());
        stored.erase(part);
      }
      stored[into] = std::move(fused);
    };
    for (uint64_t l = 0; l < s.layers; ++l) {
      const std::string p = fmt::format("blk.{}.", l);
      if (!stored.contains(p + "attn_q.weight")) continue;
      fuse(p + "attn_qkv.weight", {p + "attn_q.weight", p + "attn_k.weight", p + "attn_v.weight"});
      fuse(p + "ffn_up.weight", {p + "ffn_gate.weight", p + "ffn_up.weight"});
    }
  }
  for (const auto& [name, t] : stored) {
    const uint32_t type = t.dims.size() == 2 ? s.matrix_type : kGgmlTypeF32;
    std::vector<std::byte> bytes;
    if (type == kGgmlTypeF32) {
      bytes.resize(t.values.size() * 4);
      std::memcpy(bytes.data(), t.values.data(), bytes.size());
    } else {
      const GgmlBlockFormat* format = ggml_block_format_of_type(type);
      if (format == nullptr) return make_error(ErrorCode::kInvalidArgument, "no block type {}", type);
      FERRITE_ASSIGN_OR_RETURN(bytes, quantize_ggml_blocks(*format, t.values));
    }
    file.tensors.push_back({name, t.dims, type, std::move(bytes)});
  }
  FERRITE_ASSIGN_OR_RETURN(std::vector<std::byte> bytes, serialize_gguf(file));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) return make_error(ErrorCode::kIo, "cannot write {}", path.string());
  return {};
}

// The forward pass of the architectures, in double, on the tensors as
// written (matrices [out, in] row-major).
class DecoderReference {
 public:
  DecoderReference(DecoderShape shape, const DecoderTensors& tensors) : s_(std::move(shape)) {
    for (const auto& [name, t] : tensors) w_[name] = std::vector<double>(t.values.begin(), t.values.end());
    if (s_.tied) w_["output.weight"] = w_["token_embd.weight"];
  }

  // The last token's logits after the whole sequence `tokens` (positions 0..n-1).
  std::vector<double> logits(const std::vector<uint32_t>& tokens) const {
    const uint64_t n = tokens.size(), hd = s_.head_dim;
    std::vector<std::vector<double>> x(n);
    for (uint64_t t = 0; t < n; ++t) {
      const auto& e = w_.at("token_embd.weight");
      x[t].assign(e.begin() + tokens[t] * s_.dim, e.begin() + (tokens[t] + 1) * s_.dim);
      // Gemma scales the embeddings by sqrt(dim) (llama.cpp: the f32 sqrtf).
      if (s_.gemma()) {
        for (double& v : x[t]) v *= static_cast<double>(std::sqrt(static_cast<float>(s_.dim)));
      }
    }
    for (uint64_t l = 0; l < s_.layers; ++l) {
      const std::string p = fmt::format("blk.{}.", l);
      std::vector<std::vector<double>> q(n), k(n), v(n);
      for (uint64_t t = 0; t < n; ++t) {
        const auto h = norm(x[t], w_.at(p + "attn_norm.weight"));
        q[t] = matvec(p + "attn_q.weight", h, s_.q_dim());
        k[t] = matvec(p + "attn_k.weight", h, s_.kv_dim());
        v[t] = matvec(p + "attn_v.weight", h, s_.kv_dim());
        if (s_.qkv_bias) {
          add_to(q[t], w_.at(p + "attn_q.bias"));
          add_to(k[t], w_.at(p + "attn_k.bias"));
          add_to(v[t], w_.at(p + "attn_v.bias"));
        }
        if (s_.qk_norm || s_.gemma()) {
          q[t] = per_head_norm(q[t], w_.at(p + "attn_q_norm.weight"));
          k[t] = per_head_norm(k[t], w_.at(p + "attn_k_norm.weight"));
        }
        const double theta = s_.sliding(l) ? s_.theta_local : s_.theta;
        const double scale = s_.gemma() && !s_.sliding(l) ? s_.rope_scale : 1.0;
        rotate(q[t], t, theta, scale);
        rotate(k[t], t, theta, scale);
      }
      for (uint64_t t = 0; t < n; ++t) {
        std::vector<double> att(s_.q_dim(), 0.0);
        const uint64_t group = s_.heads / s_.kv_heads;
        for (uint64_t h = 0; h < s_.heads; ++h) {
          const uint64_t kvh = h / group;
          // Sliding layers see the last `sliding_window` positions.
          const uint64_t first =
              s_.sliding(l) && t + 1 > s_.sliding_window ? t + 1 - s_.sliding_window : 0;
          std::vector<double> score(t + 1, -INFINITY);
          double top = -INFINITY;
          for (uint64_t u = first; u <= t; ++u) {
            double dot = 0;
            for (uint64_t i = 0; i < hd; ++i) dot += q[t][h * hd + i] * k[u][kvh * hd + i];
            score[u] = dot / std::sqrt(static_cast<double>(hd));
            top = std::max(top, score[u]);
          }
          double total = 0;
          for (uint64_t u = first; u <= t; ++u) total += (score[u] = std::exp(score[u] - top));
          for (uint64_t u = first; u <= t; ++u) {
            for (uint64_t i = 0; i < hd; ++i) att[h * hd + i] += score[u] / total * v[u][kvh * hd + i];
          }
        }
        auto att_out = matvec(p + "attn_output.weight", att, s_.dim);
        if (s_.gemma()) att_out = norm(att_out, w_.at(p + "post_attention_norm.weight"));
        add_to(x[t], att_out);
        const auto h2 = norm(x[t], w_.at(p + "ffn_norm.weight"));
        auto gate = matvec(p + "ffn_gate.weight", h2, s_.ffn);
        const auto up = matvec(p + "ffn_up.weight", h2, s_.ffn);
        for (uint64_t i = 0; i < s_.ffn; ++i) {
          const double g = gate[i];
          if (s_.gemma() && s_.gelu_f16) {
            const auto x = static_cast<float>(g);
            float gelu = x <= -10.0f ? 0.0f : x;
            if (x > -10.0f && x < 10.0f) {
              const float h = f16_bits_to_f32(f32_to_f16_bits(x));
              const float v =
                  0.5f * h * (1.0f + std::tanh(0.7978845608f * h * (1.0f + 0.044715f * h * h)));
              gelu = f16_bits_to_f32(f32_to_f16_bits(v));
            }
            gate[i] = static_cast<double>(gelu) * up[i];
          } else if (s_.gemma()) {
            // GELU, tanh approximation (Hugging Face's gelu_pytorch_tanh).
            const double inner = std::sqrt(2.0 / 3.14159265358979323846) * (g + 0.044715 * g * g * g);
            gate[i] = 0.5 * g * (1.0 + std::tanh(inner)) * up[i];
          } else {
            gate[i] = g / (1.0 + std::exp(-g)) * up[i];
          }
        }
        auto down = matvec(p + "ffn_down.weight", gate, s_.dim);
        if (s_.gemma()) down = norm(down, w_.at(p + "post_ffw_norm.weight"));
        add_to(x[t], down);
      }
    }
    return matvec("output.weight", norm(x[n - 1], w_.at("output_norm.weight")), s_.vocab);
  }

 private:
  std::vector<double> matvec(const std::string& name, const std::vector<double>& in,
                             uint64_t rows) const {
    const auto& m = w_.at(name);
    std::vector<double> out(rows, 0.0);
    for (uint64_t r = 0; r < rows; ++r) {
      for (uint64_t c = 0; c < in.size(); ++c) out[r] += m[r * in.size() + c] * in[c];
    }
    return out;
  }
  static void add_to(std::vector<double>& a, const std::vector<double>& b) {
    for (size_t i = 0; i < a.size(); ++i) a[i] += b[i];
  }
  std::vector<double> norm(const std::vector<double>& x, const std::vector<double>& g) const {
    double sum = 0;
    for (double v : x) sum += v * v;
    const double scale = 1.0 / std::sqrt(sum / static_cast<double>(x.size()) + s_.eps);
    std::vector<double> out(x.size());
    for (size_t i = 0; i < x.size(); ++i) out[i] = x[i] * scale * g[i];
    return out;
  }
  std::vector<double> per_head_norm(const std::vector<double>& x, const std::vector<double>& g) const {
    std::vector<double> out;
    for (size_t h = 0; h < x.size(); h += s_.head_dim) {
      const auto head = norm({x.begin() + h, x.begin() + h + s_.head_dim}, g);
      out.insert(out.end(), head.begin(), head.end());
    }
    return out;
  }
  // llama: adjacent pairs (llama.cpp's "norm" rope; its converter permuted
  // q/k); qwen2/qwen3: pairs (i, i + head_dim/2) ("neox").
  void rotate(std::vector<double>& x, uint64_t pos, double theta, double scale) const {
    const uint64_t hd = s_.head_dim, half = hd / 2;
    for (uint64_t h = 0; h < x.size(); h += hd) {
      for (uint64_t i = 0; i < half; ++i) {
        double freq = std::pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(hd));
        if (s_.rope_freqs) freq /= w_.at("rope_freqs.weight")[i];
        const double angle = static_cast<double>(pos) * freq / scale, c = std::cos(angle), sn = std::sin(angle);
        const uint64_t a = s_.half_split() ? h + i : h + 2 * i;
        const uint64_t b = s_.half_split() ? h + i + half : h + 2 * i + 1;
        const double xa = x[a], xb = x[b];
        x[a] = xa * c - xb * sn;
        x[b] = xa * sn + xb * c;
      }
    }
  }

  DecoderShape s_;
  std::map<std::string, std::vector<double>> w_;
};

}  // namespace ferrite::testing
