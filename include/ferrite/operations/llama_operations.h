// ferrite/operations/llama_operations.h — the operations a Llama decoder program uses.
//
// Contract: `llama_operations()` returns the eight operation descriptors of
// the `llama` model family, all f32, contiguous, 64-byte minimum alignment,
// with a symbolic token axis T:
//   operation.token_embedding  u32[T], [V,D] → [T,D]
//   operation.rms_norm         [T,D], [D] → [T,D]          attribute epsilon (rational)
//   operation.linear           [T,K], [N,K] (weights stored [out, in]) → [T,N]
//   operation.rope             [T,E], u32[T] positions → [T,E]
//                              attributes head_dim, theta, convention ∈ {interleaved, half_split}
//   operation.attention        q [T,QD], k [T,KD], v [T,KD], u32[T] positions,
//                              k_cache [C,KD] rw, v_cache [C,KD] rw → [T,QD]
//                              attributes n_heads, n_kv_heads, head_dim
//   operation.swiglu           gate [T,F], up [T,F] → [T,F]
//   operation.add              [T,D], [T,D] → [T,D] (may alias input 0)
//   operation.take_last_token  [T,D] → [1,D]
// They equal the operations of examples/llama-decoder.catalog.json.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto ops, llama_operations());
#pragma once

#include <vector>

#include "ferrite/catalog/operation_descriptor.h"

namespace ferrite {

Result<std::vector<OperationDescriptor>> llama_operations();

}  // namespace ferrite
