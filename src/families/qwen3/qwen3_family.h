// families/qwen3/qwen3_family.h — the `qwen3` model family: a Llama decoder
// with per-head RMSNorm on q and k, half-split (NeoX) RoPE, no q/k/v biases,
// and a head size of its own.
//
// Contract: `qwen3_family_room()` reads GGUF architecture `qwen3` (the
// `qwen3.*` keys of llama_config_from_gguf, which reads
// `qwen3.attention.key_length` as the head size) and config.json
// `Qwen3ForCausalLM` (the Llama keys plus `head_dim`). Tensors are the Llama
// ones with q [heads*head_dim, dim] and the output [dim, heads*head_dim], plus
// `blk.N.attn_q_norm.weight` and `blk.N.attn_k_norm.weight` ([head_dim],
// applied to each head after the projection, before RoPE, with the model's
// RMS epsilon). The classifier is tied when `output.weight` is absent.
//
// Example:
//   FERRITE_RETURN_IF_ERROR(register_family_qwen3(registry));
#pragma once

#include "families/llama/llama_checkpoint.h"

namespace ferrite {

FamilyRoom qwen3_family_room();
Result<void> register_family_qwen3(FamilyRegistry& registry);

}  // namespace ferrite
