// families/phi3/phi3_family.h — the `phi3` model family (Phi-3 / Phi-3.5 /
// Phi-4 mini): a Llama decoder whose q/k/v projections are one fused matrix
// and whose gate and up projections are one fused matrix, with half-split
// (NeoX) RoPE.
//
// Contract: `phi3_family_room()` reads GGUF architecture `phi3` (the
// `phi3.*` keys of llama_config_from_gguf) and config.json
// `Phi3ForCausalLM` (the Llama keys). The fused matrices are split when the
// checkpoint is opened, as row slices served as the Llama tensors
// (FamilyRoom::tensor_slices; a block-quantized matrix is sliced in whole
// block rows, so Q8_0/Q4_0 files stay in their blocks):
//   blk.N.attn_qkv.weight [q_dim + 2 kv_dim, dim] → attn_q (rows 0..q_dim),
//     attn_k (next kv_dim), attn_v (last kv_dim);
//   blk.N.ffn_up.weight [2 ffn, dim] → ffn_gate (first ffn rows), ffn_up
//     (last ffn rows) — llama.cpp's fused SwiGLU applies SiLU to the first half.
// A fused matrix with another row count is kInvalidModelConfig naming the
// tensor. `phi3.attention.sliding_window` is ignored, as llama.cpp does
// (it disables Phi-3's sliding window); files with LongRoPE factors
// (`rope_factors_long.weight` / `rope_factors_short.weight`, the 128k
// variants) are refused.
//
// Example:
//   FERRITE_RETURN_IF_ERROR(register_family_phi3(registry));
#pragma once

#include "families/llama/llama_checkpoint.h"

namespace ferrite {

FamilyRoom phi3_family_room();
Result<void> register_family_phi3(FamilyRegistry& registry);

}  // namespace ferrite
