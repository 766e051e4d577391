// llama_kernel_shapes.h — the bind-time checks every provider's attention and
// RoPE kernels share, so cpu.reference and cpu.fast accept exactly the same
// nodes.
//
// Contract: `attention_shape(node)` reads n_heads, n_kv_heads and head_dim,
// and checks q [T, n_heads*head_dim], k and v [T, n_kv_heads*head_dim], and
// the K/V caches: token-scaled states of one kv row each with the same
// number of rows (the context). `rope_shape(node)` reads head_dim, theta and
// the convention, and checks that the width is a whole number of even-sized
// heads. Errors name the node (field `node_id`). `append_kv_row(...)` is the
// first step of attention for token t in every provider: it checks the
// token's position against the context and copies its k and v rows into
// the caches at that position of the token's sequence slot (sequence
// attention's `slots` input; slot 0 otherwise), returning both; a slot the
// caches do not hold, or a position whose page is not mapped (a paged cache,
// KernelTensor::pages), is an error too. `kv_row(cache, shape, slot, p)` is
// row p of a slot's cache, paged or not.
#pragma once

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "ferrite/runtime/kernel_attributes.h"

namespace ferrite {

// Attention's operands: q, k, v, positions[, slots], k_cache, v_cache → out.
// `slots` (sequence attention only; data null otherwise) names each token's
// sequence slot.
struct AttentionOperands {
  KernelTensor q, k, v, positions, slots, k_cache, v_cache, out;
};

inline AttentionOperands attention_operands(const KernelNode& node) {
  const auto& in = node.inputs;
  if (in.size() == 7) return {in[0], in[1], in[2], in[3], in[4], in[5], in[6], node.outputs[0]};
  return {in[0], in[1], in[2], in[3], KernelTensor{}, in[4], in[5], node.outputs[0]};
}

struct AttentionShape {
  uint64_t n_heads, n_kv_heads, head_dim;
  uint64_t capacity, q_width, kv_width, context;  // context: positions per sequence
};

inline Result<AttentionShape> attention_shape(const KernelNode& node) {
  FERRITE_ASSIGN_OR_RETURN(uint64_t n_heads, unsigned_attribute(node, "n_heads"));
  FERRITE_ASSIGN_OR_RETURN(uint64_t n_kv_heads, unsigned_attribute(node, "n_kv_heads"));
  FERRITE_ASSIGN_OR_RETURN(uint64_t head_dim, unsigned_attribute(node, "head_dim"));
  const AttentionOperands o = attention_operands(node);
  const AttentionShape s{n_heads, n_kv_heads, head_dim, dim(o.q, 0), dim(o.q, 1), dim(o.k, 1),
                         o.k_cache.token_rows};
  if (n_kv_heads == 0 || n_heads % n_kv_heads != 0 || s.q_width != n_heads * head_dim ||
      s.kv_width != n_kv_heads * head_dim || dim(o.k_cache, 0) != s.kv_width ||
      dim(o.v_cache, 0) != s.kv_width) {
    return make_error(ErrorCode::kInvalidArgument, "node `{}`: head counts and widths disagree",
                      node.node_id->str())
        .with_field("node_id", node.node_id->str());
  }
  if (s.context == 0 || o.v_cache.token_rows != s.context ||
      o.k_cache.slot_count() != o.v_cache.slot_count()) {
    return make_error(ErrorCode::kInvalidArgument,
                      "node `{}`: the K and V caches must be token-scaled states of equal capacity",
                      node.node_id->str())
        .with_field("node_id", node.node_id->str());
  }
  if (o.slots.data != nullptr && dim(o.slots, 0) < s.capacity) {
    return make_error(ErrorCode::kInvalidArgument,
                      "node `{}`: the slots hold fewer tokens than the queries",
                      node.node_id->str())
        .with_field("node_id", node.node_id->str());
  }
  return s;
}

// Row p of slot `slot` of a K or V cache (paged or not; KernelTensor::row).
// Every row at or before a position append_kv_row accepted is mapped: a
// sequence's pages are a prefix of its positions.
inline float* kv_row(const KernelTensor& cache, const AttentionShape& s, uint64_t slot,
                     uint64_t p) {
  return cache.row<float>(slot, p, s.kv_width * sizeof(float));
}

// Where token t of a step attends: its sequence slot and its position.
struct KvRowAt {
  uint32_t slot, pos;
};

inline Result<KvRowAt> append_kv_row(const NodeId& node_id, const AttentionShape& s,
                                     const AttentionOperands& o, uint64_t t) {
  const uint32_t pos = o.positions.as<uint32_t>()[t];
  const uint32_t slot = o.slots.data == nullptr ? 0 : o.slots.as<uint32_t>()[t];
  if (slot >= o.k_cache.slot_count()) {
    return make_error(ErrorCode::kInvalidArgument,
                      "node `{}`: token {} names sequence slot {}; the caches hold {}",
                      node_id.str(), t, slot, o.k_cache.slot_count())
        .with_field("node_id", node_id.str());
  }
  if (pos >= s.context) {
    return make_error(ErrorCode::kInvalidArgument,
                      "node `{}`: position {} is outside the context of {}", node_id.str(), pos,
                      s.context);
  }
  if (!o.k_cache.row_mapped(slot, pos) || !o.v_cache.row_mapped(slot, pos)) {
    return make_error(ErrorCode::kInvalidArgument,
                      "node `{}`: position {} has no KV block: the sequence in slot {} holds {} "
                      "blocks of {} positions",
                      node_id.str(), pos, slot, o.k_cache.pages->slots[slot].size(),
                      uint64_t{1} << o.k_cache.pages->block_shift)
        .with_field("node_id", node_id.str());
  }
  std::copy_n(o.k.as<float>() + t * s.kv_width, s.kv_width, kv_row(o.k_cache, s, slot, pos));
  std::copy_n(o.v.as<float>() + t * s.kv_width, s.kv_width, kv_row(o.v_cache, s, slot, pos));
  return KvRowAt{slot, pos};
}

struct RopeShape {
  uint64_t head_dim;
  double theta;
  bool interleaved;  // pairs (2i, 2i+1); else (i, i + head_dim/2)
  uint64_t capacity, width;
};

inline Result<RopeShape> rope_shape(const KernelNode& node) {
  FERRITE_ASSIGN_OR_RETURN(uint64_t head_dim, unsigned_attribute(node, "head_dim"));
  FERRITE_ASSIGN_OR_RETURN(double theta, rational_attribute(node, "theta"));
  FERRITE_ASSIGN_OR_RETURN(std::string convention, text_attribute(node, "convention"));
  const RopeShape s{head_dim, theta, convention == "interleaved", dim(node.inputs[0], 0),
                    dim(node.inputs[0], 1)};
  if (head_dim == 0 || head_dim % 2 != 0 || s.width % head_dim != 0) {
    return make_error(ErrorCode::kInvalidArgument,
                      "node `{}`: width {} is not a multiple of an even head_dim {}",
                      node.node_id->str(), s.width, head_dim)
        .with_field("node_id", node.node_id->str());
  }
  return s;
}

}  // namespace ferrite
