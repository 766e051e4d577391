// ferrite/operations/operation_table.h — every operation Ferrite knows, as one
// typed table.
//
// Contract: `OpKind` enumerates the operations (in operation-id order);
// `kOpKindIds` names them (a static_assert keeps the two the same length, in
// the spirit of ggml's `enum ggml_op` + `GGML_OP_NAME`). Each kind has one row
// in src/operations/operation_table.cc, written with typed constructors
// (operand dims / dtypes / layouts / access / alias, attribute schema,
// resource rules); `operation_descriptor(kind)` derives the
// `OperationDescriptor` from that row and `operation_descriptors()` returns
// all of them in id order. The descriptors are model-neutral and today all
// f32, contiguous, 64-byte minimum alignment, persistent workspace forbidden,
// with a symbolic token axis T:
//   add              [T,D], [T,D] → [T,D] (may alias input 0)
//   add_bias         [T,N], [N] → [T,N] (may alias input 0): a bias row added to every token
//   attention        q [T,QD], k [T,KD], v [T,KD], u32[T] positions,
//                    k_cache [KD] rw, v_cache [KD] rw → [T,QD]
//                    attributes n_heads, n_kv_heads, head_dim
//   gather_rows      x [T,D], u32[S] rows → [S,D]: output row s is x's row rows[s]
//                    (a multi-sequence step's last token of each sequence)
//   geglu            gate [T,F], up [T,F] → [T,F]: gelu_tanh(gate) * up (Gemma's
//                    GeGLU; GELU with the tanh approximation)
//   head_rms_norm    [T,E], [H] → [T,E]: RMSNorm of every head_dim-wide head
//                    (Qwen3/Gemma q and k norms), attributes epsilon, head_dim (= H)
//   linear           [T,K], [N,K] (weights stored [out, in]) → [T,N]
//   rms_norm         [T,D], [D] → [T,D]          attribute epsilon (rational)
//   rope             [T,E], u32[T] positions → [T,E]
//                    attributes head_dim, theta, convention ∈ {interleaved, half_split}
//   rope_factors     [T,E], u32[T] positions, [P] factors → [T,E]: rope whose pair i
//                    turns at theta^(-2i/head_dim) / factors[i] (P = head_dim/2;
//                    GGUF `rope_freqs.weight`, Llama 3 rope scaling); rope's attributes
//   rope_scaled      rope whose angles are divided by the rational attribute
//                    factor (linear RoPE scaling: llama.cpp's freq_scale = 1/factor;
//                    Gemma 3's global layers); rope's attributes and factor
//   scale            [T,D] → [T,D] (may alias input 0): every value times the
//                    rational attribute factor (Gemma's embedding scale sqrt(dim),
//                    stated as the exact f32 value)
//   sequence_attention attention over several sequences' caches: q, k, v,
//                    u32[T] positions, u32[T] slots, k_cache [KD] rw, v_cache [KD] rw
//                    → [T,QD]; token t reads and writes only the cache of sequence
//                    slot slots[t] (attention's attributes)
//   sequence_sliding_attention  sliding_attention's attributes on
//                    sequence_attention's operands
//   sliding_attention attention's operands; attributes n_heads, n_kv_heads,
//                    head_dim, scale_base (scores scaled by 1/sqrt(scale_base)) and
//                    window (a query at position p sees keys at p - window + 1 .. p;
//                    0: every earlier key) — Gemma's local layers
//   swiglu           gate [T,F], up [T,F] → [T,F]
//   take_last_token  [T,D] → [1,D]
//   token_embedding  u32[T], [V,D] → [T,D]
// `operations_markdown_table()` renders the table for docs/operations.md
// (tests/operations checks that the doc holds exactly this text).
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(OperationDescriptor linear, operation_descriptor(OpKind::kLinear));
//   if (auto kind = find_op_kind(node.operation_id); kind == OpKind::kRope) { ... }
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ferrite/catalog/operation_descriptor.h"

namespace ferrite {

// Keep in operation-id order; add the id to kOpKindIds and a row to
// src/operations/operation_table.cc (docs/adding-an-operation.md).
enum class OpKind : uint8_t {
  kAdd,
  kAddBias,
  kAttention,
  kGatherRows,
  kGeglu,
  kHeadRmsNorm,
  kLinear,
  kRmsNorm,
  kRope,
  kRopeFactors,
  kRopeScaled,
  kScale,
  kSequenceAttention,
  kSequenceSlidingAttention,
  kSlidingAttention,
  kSwiglu,
  kTakeLastToken,
  kTokenEmbedding,
  kCount,
};

inline constexpr size_t kOpKindCount = static_cast<size_t>(OpKind::kCount);

inline constexpr std::string_view kOpKindIds[] = {
    "operation.add",          "operation.add_bias",          "operation.attention",
    "operation.gather_rows",  "operation.geglu",        "operation.head_rms_norm",     "operation.linear",
    "operation.rms_norm",     "operation.rope",              "operation.rope_factors",
    "operation.rope_scaled",  "operation.scale",             "operation.sequence_attention",
    "operation.sequence_sliding_attention",                  "operation.sliding_attention",
    "operation.swiglu",
    "operation.take_last_token", "operation.token_embedding",
};
static_assert(std::size(kOpKindIds) == kOpKindCount, "every OpKind needs an id in kOpKindIds");

constexpr std::string_view op_kind_id(OpKind kind) { return kOpKindIds[static_cast<size_t>(kind)]; }
// The id without the "operation." prefix ("linear"): provider and kernel names.
constexpr std::string_view op_kind_name(OpKind kind) {
  return op_kind_id(kind).substr(std::string_view("operation.").size());
}
std::optional<OpKind> find_op_kind(std::string_view operation_id);
std::optional<OpKind> find_op_kind(const OperationId& operation_id);

// Every kind, in order (for range-for).
std::vector<OpKind> all_op_kinds();

// The descriptor of one row (validated); the same value on every call.
Result<OperationDescriptor> operation_descriptor(OpKind kind);
// Every row's descriptor, in operation-id order.
Result<std::vector<OperationDescriptor>> operation_descriptors();

// One Markdown table row per operation: kind, id, version, inputs, outputs,
// attributes (the operations section of docs/operations.md).
Result<std::string> operations_markdown_table();

}  // namespace ferrite
