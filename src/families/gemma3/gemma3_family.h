// families/gemma3/gemma3_family.h — the `gemma3` model family (Gemma 3's
// text decoder): config → program, and the room that reads its checkpoints.
//
// Contract: `build_gemma3_family(config)` returns the prepared family of a
// Gemma 3 decoder with the decoder interface of runtime/generation.h
// (inputs `value.tokens`, `value.positions`; output `value.logits`
// f32[1, vocab]): token embedding times sqrt(dim) (operation `scale`, the
// f32 value of sqrtf(dim) stated exactly), then per layer
//   RMSNorm(attn_norm) → q/k/v linear → per-head RMSNorm of q and k
//   (attn_q_norm, attn_k_norm) → half-split RoPE (theta `rope_theta_local`
//   on sliding-window layers, `rope_theta` on global ones, whose angles are
//   divided by `rope_scale` when it is not 1: operation `rope_scaled`) →
//   sliding_attention (scores × 1/sqrt(query_scale_base); window
//   `sliding_window` on local layers, none on global ones) → output linear →
//   RMSNorm(post_attention_norm) → residual add → RMSNorm(ffn_norm) →
//   gate/up linear → GeGLU (tanh GELU) → down linear → RMSNorm(post_ffw_norm)
//   → residual add;
// then take-last-token → RMSNorm(output_norm) → output linear (tied to the
// embedding when the file has no `output.weight`). Every RMSNorm multiplies
// by its weight as stored in GGUF, where llama.cpp's converter has already
// added Gemma's 1 (Gemma applies x·(1 + w)); the Hugging Face reader serves
// w + 1 (FamilyRoom::hf_tensor_offset), so both read the same program.
// Weights are named as in GGUF (`blk.N.post_attention_norm.weight`,
// `blk.N.post_ffw_norm.weight`, …); matrices may be block-quantized as in
// the llama family.
//
// The room (`gemma3_family_room()`): GGUF architecture `gemma3` and
// config.json `Gemma3ForCausalLM` (`model_type` gemma3_text);
// `Gemma3ForConditionalGeneration` (the vision-language checkpoint) is
// refused naming what is read instead. Config mapping:
//   * GGUF (`gemma3.` keys): embedding_length, feed_forward_length,
//     block_count, attention.head_count, context_length,
//     attention.layer_norm_rms_epsilon, attention.key_length (the head size)
//     required; attention.head_count_kv (head_count), rope.freq_base (10000,
//     llama.cpp's default), rope.freq_base_swa (10000),
//     attention.sliding_window (absent or 0: every layer global),
//     attention.sliding_window_pattern (a period n: layer i is global when
//     i % n == n - 1, default 6; or one bool per layer, true = sliding);
//     rope.scaling.factor (or rope.scale_linear; 0 or 1: none) with
//     rope.scaling.type linear when stated; attention.value_length must
//     equal key_length; a final logit soft-cap other than 0 is refused. The query scale base is key_length (llama.cpp's rule; its
//     62-layer 27B uses embedding_length / head_count).
//   * config.json: hidden_size, intermediate_size, num_hidden_layers,
//     num_attention_heads, vocab_size required; num_key_value_heads (4),
//     head_dim (256), max_position_embeddings (131072), rms_norm_eps (1e-6),
//     rope_theta (1e6), rope_local_base_freq (10000), sliding_window (4096),
//     layer_types (else sliding_window_pattern, 6), query_pre_attn_scalar
//     (head_dim), tie_word_embeddings (true); hidden_activation must be
//     gelu_pytorch_tanh; rope_scaling of type linear (its factor) or none;
//     soft-capping and rope_parameters are refused.
// Errors: kInvalidModelConfig / kSerialization naming the key or tensor.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto family, build_gemma3_family(config));
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ferrite/families/checkpoint.h"
#include "ferrite/families/family_registry.h"
#include "ferrite/program/prepared_model_family.h"

namespace ferrite {

struct Gemma3Config {
  uint64_t dim = 0;
  uint64_t hidden_dim = 0;
  uint64_t n_layers = 0;
  uint64_t n_heads = 0;
  uint64_t n_kv_heads = 0;
  uint64_t head_dim = 0;
  uint64_t vocab_size = 0;
  uint64_t context_length = 0;
  std::string norm_eps = "1/1000000";    // exact decimal or fraction text
  std::string rope_theta = "1000000";    // global layers
  std::string rope_theta_local = "10000";  // sliding-window layers
  std::string rope_scale = "1";          // global layers' linear RoPE scaling factor (1: none)
  uint64_t sliding_window = 0;           // 0: no sliding-window layers
  std::vector<bool> sliding_layers;      // per layer: true = sliding window
  uint64_t query_scale_base = 0;         // attention scores × 1/sqrt(this)
  bool tied_output = true;
  // Matrices stored block-quantized (weight id → format id), as LlamaConfig.
  std::map<std::string, std::string> block_formats;

  uint64_t q_dim() const { return head_dim * n_heads; }
  uint64_t kv_dim() const { return head_dim * n_kv_heads; }
  // The f32 value of sqrtf(dim) as an exact fraction ("a/b").
  std::string embedding_scale() const;
  Result<void> validate() const;
};

Result<PreparedModelFamily> build_gemma3_family(const Gemma3Config& config);

Result<Gemma3Config> gemma3_config_from_gguf(const GgufModel& m, const CheckpointTensors& stored);
Result<Gemma3Config> gemma3_config_from_hf(const HfConfig& json);
// `model.layers.N.<part>` and the fixed names → GGUF names (nullopt: unused).
std::optional<std::string> gemma3_gguf_tensor_name(std::string_view hf_name, uint64_t n_layers);

FamilyRoom gemma3_family_room();
Result<void> register_family_gemma3(FamilyRegistry& registry);

}  // namespace ferrite
