// ferrite/operations/operation_builders.h — typed ProgramBuilder calls, one per
// operation of the operation table.
//
// Contract: each helper adds one node of its `OpKind` to the builder's
// current block, with the operation id and version of the table row, and
// returns the node's output. Attribute texts are parsed at the call: a theta
// or epsilon that is not an exact decimal or fraction becomes the builder's
// first error, naming the node (see program_builder.h for the sticky-error
// rule). Attribute *ranges* are checked where they always were, when the
// compiler resolves the node against the catalog, so a program builds
// exactly as its program file would read. `Named` gives the node id, the
// output value id and how the node's work scales.
//
// Layering: program (generic ProgramBuilder) ← catalog ← operations (these
// helpers) ← families (model programs).
//
// Example:
//   ValueRef q = linear(b, {"node.blk.0.attn_q", "value.blk.0.q"}, x, wq);
//   ValueRef y = rms_norm(b, {"node.output_norm", "value.output_norm", NodeWork::kFixed}, q, g,
//                         "1/100000");
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ferrite/operations/operation_table.h"
#include "ferrite/program/program_builder.h"

namespace ferrite {

struct Named {
  std::string node;
  std::string output;
  NodeWork work = NodeWork::kTokensOfOutput;
};

struct RopeAttributes {
  uint64_t head_dim = 0;
  std::string_view theta;       // exact decimal or fraction text
  std::string_view convention;  // "interleaved" or "half_split"
};

struct AttentionAttributes {
  uint64_t n_heads = 0;
  uint64_t n_kv_heads = 0;
  uint64_t head_dim = 0;
};

// Any operation of the table, attributes by name (checked against the row).
ValueRef add_operation(ProgramBuilder& b, OpKind kind, const Named& name,
                       std::vector<ValueRef> inputs,
                       std::map<std::string, SemanticValue> attributes = {});

ValueRef token_embedding(ProgramBuilder& b, const Named& name, ValueRef tokens, ValueRef table);
ValueRef rms_norm(ProgramBuilder& b, const Named& name, ValueRef x, ValueRef weight,
                  std::string_view epsilon);
ValueRef linear(ProgramBuilder& b, const Named& name, ValueRef x, ValueRef weight);
ValueRef rope(ProgramBuilder& b, const Named& name, ValueRef x, ValueRef positions,
              const RopeAttributes& attributes);
ValueRef attention(ProgramBuilder& b, const Named& name, ValueRef q, ValueRef k, ValueRef v,
                   ValueRef positions, ValueRef k_cache, ValueRef v_cache,
                   const AttentionAttributes& attributes);
ValueRef swiglu(ProgramBuilder& b, const Named& name, ValueRef gate, ValueRef up);
// x [T,N] + bias [N] on every token.
ValueRef add_bias(ProgramBuilder& b, const Named& name, ValueRef x, ValueRef bias);
// RMSNorm of each head_dim-wide head of x with the shared weight [head_dim].
ValueRef head_rms_norm(ProgramBuilder& b, const Named& name, ValueRef x, ValueRef weight,
                       std::string_view epsilon, uint64_t head_dim);
// RoPE whose pair i turns at theta^(-2i/head_dim) / factors[i].
ValueRef rope_factors(ProgramBuilder& b, const Named& name, ValueRef x, ValueRef positions,
                      ValueRef factors, const RopeAttributes& attributes);
// RoPE whose angles are divided by `factor` (linear scaling; exact text).
ValueRef rope_scaled(ProgramBuilder& b, const Named& name, ValueRef x, ValueRef positions,
                     const RopeAttributes& attributes, std::string_view factor);
// gelu_tanh(gate) * up (Gemma's GeGLU).
ValueRef geglu(ProgramBuilder& b, const Named& name, ValueRef gate, ValueRef up);
// x times `factor` (exact decimal or fraction text).
ValueRef scale(ProgramBuilder& b, const Named& name, ValueRef x, std::string_view factor);
// attention with scores scaled by 1/sqrt(scale_base) and, for window > 0, a
// query at position p seeing the keys at positions p - window + 1 .. p.
struct SlidingAttentionAttributes {
  AttentionAttributes heads;
  uint64_t scale_base = 0;
  uint64_t window = 0;
};
ValueRef sliding_attention(ProgramBuilder& b, const Named& name, ValueRef q, ValueRef k,
                           ValueRef v, ValueRef positions, ValueRef k_cache, ValueRef v_cache,
                           const SlidingAttentionAttributes& attributes);
ValueRef add(ProgramBuilder& b, const Named& name, ValueRef a, ValueRef c);
ValueRef take_last_token(ProgramBuilder& b, const Named& name, ValueRef x);

}  // namespace ferrite
