// families/llama/llama_family.h — the `llama` model family: config → program.
//
// Contract: `build_llama_family(config)` returns the prepared family of a
// Llama decoder (the program file shape of examples/llama-decoder.program.json)
// with the decoder interface of runtime/generation.h: inputs `value.tokens`
// and `value.positions` (u32[T], T symbolic, bounded by the capacity the
// caller compiles for: `decoder_compile_inputs(T)`), per layer RMSNorm →
// q/k/v linear → RoPE(q, k) → attention with a KV cache (two sequence-lifetime states
// f32[context, kv_dim], zero-initialized) → output linear → residual add →
// RMSNorm → gate/up linear → SwiGLU → down linear → residual add; then
// take-last-token → RMSNorm → output linear → `value.logits` f32[1, vocab].
// Weights are dense f32 components named as in GGUF (`token_embd.weight`,
// `blk.N.attn_q.weight`, …, `output.weight`). `tied_output` (the classifier
// shares the embedding table) is recorded in the family config; checkpoint
// loaders serve `output.weight` from the embedding then.
// Variants (LlamaConfig's last fields, all off for Llama 2): frequency
// factors (`rope_factors` instead of `rope`, Llama 3), q/k/v biases
// (`add_bias` after each projection, Qwen2), per-head q/k RMSNorm
// (`head_rms_norm` before RoPE, Qwen3), and a head size that is not
// dim / n_heads (Qwen3's key_length).
// Validation (kInvalidModelConfig): every size > 0, dim % n_heads == 0,
// n_heads % n_kv_heads == 0, an even head_dim, eps and theta > 0, and caps
// (dim, hidden ≤ 65536, layers ≤ 1024, vocab ≤ 1,048,576, context ≤ 1,048,576).
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto family, build_llama_family(config));
//   FERRITE_ASSIGN_OR_RETURN(auto options, ProgramPlanCompileOptions::create(decoder_compile_inputs(256)));
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "ferrite/core/tensor_spec.h"
#include "ferrite/program/prepared_model_family.h"
#include "ferrite/runtime/generation.h"

namespace ferrite {

struct LlamaConfig {
  uint64_t dim = 0;
  uint64_t hidden_dim = 0;
  uint64_t n_layers = 0;
  uint64_t n_heads = 0;
  uint64_t n_kv_heads = 0;
  uint64_t vocab_size = 0;
  uint64_t context_length = 0;
  std::string norm_eps = "1/100000";  // exact decimal or fraction text
  std::string rope_theta = "10000";
  std::string rope_convention = "interleaved";  // or "half_split"
  bool tied_output = false;
  // Matrices stored block-quantized, by weight id ("weight.blk.0.attn_q") ->
  // quantization format id (models/ggml_blocks.h). Empty: every weight f32.
  std::map<std::string, std::string> block_formats;

  // Variants of the Llama decoder other families share (the qwen2 and qwen3
  // rooms build their programs here). At their defaults the program, its
  // config JSON and its fingerprint are the plain Llama's.
  std::string family = "llama";     // the program's family id is "family.<family>"
  uint64_t attention_head_dim = 0;  // 0: dim / n_heads; else q is n_heads * this wide
  bool rope_freq_factors = false;   // `rope_freqs.weight` [head_dim/2] divides the frequencies
  bool qkv_bias = false;            // `blk.N.attn_{q,k,v}.bias` added after the projections
  bool qk_norm = false;             // `blk.N.attn_{q,k}_norm.weight` [head_dim]: per-head RMSNorm before RoPE

  uint64_t head_dim() const {
    if (attention_head_dim != 0) return attention_head_dim;
    return n_heads == 0 ? 0 : dim / n_heads;
  }
  uint64_t q_dim() const { return head_dim() * n_heads; }
  uint64_t kv_dim() const { return head_dim() * n_kv_heads; }
  Result<void> validate() const;
};

Result<PreparedModelFamily> build_llama_family(const LlamaConfig& config);

}  // namespace ferrite
