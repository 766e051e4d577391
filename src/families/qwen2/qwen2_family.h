// families/qwen2/qwen2_family.h — the `qwen2` model family: a Llama decoder
// with biases on the q, k and v projections and half-split (NeoX) RoPE.
//
// Contract: `qwen2_family_room()` reads GGUF architecture `qwen2` (the
// `qwen2.*` keys of llama_config_from_gguf: embedding_length,
// feed_forward_length, block_count, attention.head_count[_kv],
// context_length, attention.layer_norm_rms_epsilon, rope.freq_base) and
// config.json `Qwen2ForCausalLM` (the Llama keys; biases always). Tensors are
// the Llama ones plus `blk.N.attn_{q,k,v}.bias` (f32 [q_dim], [kv_dim],
// [kv_dim]); a GGUF file without `blk.0.attn_q.bias` is read as bias-free,
// one with it must have every layer's three biases. The classifier is tied
// when `output.weight` is absent. The program is build_llama_family's with
// `family = "qwen2"`, `rope_convention = "half_split"` (llama.cpp's NeoX rope
// for qwen2; its converter does not permute q/k) and `qkv_bias`.
//
// Example:
//   FERRITE_RETURN_IF_ERROR(register_family_qwen2(registry));
#pragma once

#include "families/llama/llama_checkpoint.h"

namespace ferrite {

FamilyRoom qwen2_family_room();
Result<void> register_family_qwen2(FamilyRegistry& registry);

}  // namespace ferrite
