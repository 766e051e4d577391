// tests/support/synthetic_llama.h — a deterministic Llama GGUF for tests that
// need a model larger than stories260K.
//
// `write_synthetic_llama(path, vocab_from, shape)` writes a GGUF with the
// tokenizer (every `tokenizer.*` key) of `vocab_from`, matrices uniform in
// ±1/sqrt(fan_in) from a fixed xorshift stream per tensor name (the weights of
// bench/make_llama_gguf, which calls synthetic_weights), stored as
// `shape.ggml_type` (norms stay f32).
// `kSynthetic24M` is the 24M-parameter model of docs/performance.md
// (dim 512, 8 layers, 8 heads, 4 kv heads, ffn 1376, context 512), Q8_0.
// `kSynthetic24MQ4KM` is the same model typed as llama.cpp's Q4_K_M mixes
// types (synthetic_q4_k_m_type): Q4_K matrices, Q6_K output and the attn_v /
// ffn_down of every other layer, and, where a row is not whole 256-value
// super-blocks (ffn_down's 1376), Q5_0 for Q4_K and Q8_0 for Q6_K.
#pragma once

#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ferrite/models/ggml_blocks.h"
#include "ferrite/models/gguf_reader.h"
#include "ferrite/models/gguf_writer.h"

namespace ferrite::testing {

struct SyntheticLlamaShape {
  uint64_t dim, layers, heads, kv_heads, ffn, context;
  uint32_t ggml_type, file_type;
  bool q4_k_m = false;  // per-tensor types of synthetic_q4_k_m_type (ggml_type unused)
};
inline constexpr SyntheticLlamaShape kSynthetic24M{512, 8, 8, 4, 1376, 512, kGgmlTypeQ8_0, 7};
inline constexpr SyntheticLlamaShape kSynthetic24MQ4KM{512, 8, 8, 4, 1376, 512, kGgmlQ4_K.ggml_type,
                                                      15, true};

// The type of matrix `name` whose rows hold `cols` values in the Q4_K_M mix.
inline uint32_t synthetic_q4_k_m_type(const std::string& name, uint64_t cols) {
  bool more_bits = name == "output.weight";
  const auto layer_of = [&]() -> uint64_t { return std::stoull(name.substr(4)); };
  if (name.starts_with("blk.") &&
      (name.ends_with(".attn_v.weight") || name.ends_with(".ffn_down.weight"))) {
    more_bits = layer_of() % 2 == 0;
  }
  if (cols % 256 != 0) return more_bits ? kGgmlQ8_0.ggml_type : kGgmlQ5_0.ggml_type;
  return more_bits ? kGgmlQ6_K.ggml_type : kGgmlQ4_K.ggml_type;
}

inline std::vector<float> synthetic_weights(const std::string& name, uint64_t count,
                                            uint64_t fan_in) {
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (char c : name) state = (state ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  const float scale = 1.0f / std::sqrt(static_cast<float>(fan_in));
  std::vector<float> v(count);
  for (auto& x : v) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    x = (static_cast<float>(state >> 40) / static_cast<float>(1 << 24) * 2.0f - 1.0f) * scale;
  }
  return v;
}

// `edit`, when given, may change the file (add metadata, say) before it is written.
inline Result<void> write_synthetic_llama(
    const std::filesystem::path& path, const std::filesystem::path& vocab_from,
    const SyntheticLlamaShape& s, const std::function<void(GgufFileSpec&)>& edit = {}) {
  FERRITE_ASSIGN_OR_RETURN(auto source, GgufFile::open(vocab_from));
  const GgufModel& vocab = source.model();
  FERRITE_ASSIGN_OR_RETURN(auto tokens, vocab.get_array<std::string>("tokenizer.ggml.tokens"));
  const uint64_t vocab_size = tokens->size(), head_dim = s.dim / s.heads,
                 kv_dim = head_dim * s.kv_heads;
  GgufFileSpec file;
  file.metadata = {{"general.architecture", {std::string("llama")}},
                   {"general.name", {std::string("ferrite-test-synthetic")}},
                   {"general.file_type", {s.file_type}},
                   {"llama.context_length", {static_cast<uint32_t>(s.context)}},
                   {"llama.embedding_length", {static_cast<uint32_t>(s.dim)}},
                   {"llama.feed_forward_length", {static_cast<uint32_t>(s.ffn)}},
                   {"llama.attention.head_count", {static_cast<uint32_t>(s.heads)}},
                   {"llama.attention.head_count_kv", {static_cast<uint32_t>(s.kv_heads)}},
                   {"llama.block_count", {static_cast<uint32_t>(s.layers)}},
                   {"llama.rope.dimension_count", {static_cast<uint32_t>(head_dim)}},
                   {"llama.rope.freq_base", {10000.0f}},
                   {"llama.attention.layer_norm_rms_epsilon", {1e-5f}}};
  for (const auto& key : vocab.metadata_order) {
    if (key.starts_with("tokenizer.")) file.metadata.emplace_back(key, vocab.metadata.at(key));
  }
  struct Tensor {
    std::string name;
    std::vector<uint64_t> dims;  // GGUF order
    bool norm;
  };
  std::vector<Tensor> tensors{{"token_embd.weight", {s.dim, vocab_size}, false},
                              {"output_norm.weight", {s.dim}, true},
                              {"output.weight", {s.dim, vocab_size}, false}};
  for (uint64_t l = 0; l < s.layers; ++l) {
    const std::string p = fmt::format("blk.{}.", l);
    tensors.push_back({p + "attn_norm.weight", {s.dim}, true});
    tensors.push_back({p + "attn_q.weight", {s.dim, s.dim}, false});
    tensors.push_back({p + "attn_k.weight", {s.dim, kv_dim}, false});
    tensors.push_back({p + "attn_v.weight", {s.dim, kv_dim}, false});
    tensors.push_back({p + "attn_output.weight", {s.dim, s.dim}, false});
    tensors.push_back({p + "ffn_norm.weight", {s.dim}, true});
    tensors.push_back({p + "ffn_gate.weight", {s.dim, s.ffn}, false});
    tensors.push_back({p + "ffn_up.weight", {s.dim, s.ffn}, false});
    tensors.push_back({p + "ffn_down.weight", {s.ffn, s.dim}, false});
  }
  for (const Tensor& t : tensors) {
    uint64_t count = 1;
    for (uint64_t d : t.dims) count *= d;
    const std::vector<float> values =
        t.norm ? std::vector<float>(count, 1.0f) : synthetic_weights(t.name, count, t.dims[0]);
    std::vector<std::byte> bytes;
    const uint32_t type = t.norm       ? kGgmlTypeF32
                          : s.q4_k_m ? synthetic_q4_k_m_type(t.name, t.dims[0])
                                     : s.ggml_type;
    if (type == kGgmlTypeF32) {
      bytes.resize(count * 4);
      std::memcpy(bytes.data(), values.data(), bytes.size());
    } else {
      FERRITE_ASSIGN_OR_RETURN(bytes,
                               quantize_ggml_blocks(*ggml_block_format_of_type(type), values));
    }
    file.tensors.push_back({t.name, t.dims, type, std::move(bytes)});
  }
  if (edit) edit(file);
  FERRITE_ASSIGN_OR_RETURN(std::vector<std::byte> bytes, serialize_gguf(file));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) return make_error(ErrorCode::kIo, "cannot write {}", path.string());
  return {};
}

}  // namespace ferrite::testing
