// family_kernel_shapes.h — the bind-time checks every provider's add_bias,
// head_rms_norm and rope_factors kernels share, so cpu.reference and cpu.fast
// accept exactly the same nodes.
//
// Contract: `add_bias_shape(node)` checks x [T, N] against bias [N];
// `head_norm_shape(node)` reads epsilon and head_dim and checks the weight
// [head_dim] and a width of whole heads; `rope_factor_count(node, shape)`
// checks the factors [head_dim / 2]; `sliding_attention_shape(node)` is
// attention_shape plus the score scale 1/sqrt(scale_base) and the window;
// `elementwise_shape(node)` checks equal [T, F] inputs and output (geglu,
// scale); `gather_shape(node)` checks gather_rows' [T, D], u32[S] → [S, D]
// and `gathered_row` one row index against the step's tokens. Errors name the node (field `node_id`).
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(const HeadNormShape shape, head_norm_shape(node));
#pragma once

#include "providers/support/llama_kernel_shapes.h"

namespace ferrite {

inline Error node_shape_error(const KernelNode& node, std::string_view what) {
  return make_error(ErrorCode::kInvalidArgument, "node `{}`: {}", node.node_id->str(), what)
      .with_field("node_id", node.node_id->str());
}

struct RowShape {
  uint64_t capacity, width;
};

inline Result<RowShape> add_bias_shape(const KernelNode& node) {
  const RowShape s{dim(node.inputs[0], 0), dim(node.inputs[0], 1)};
  if (dim(node.inputs[1], 0) != s.width || dim(node.outputs[0], 1) != s.width) {
    return node_shape_error(node, "the bias width disagrees with the rows");
  }
  return s;
}

struct HeadNormShape {
  double epsilon;
  uint64_t head_dim, capacity, width;
};

inline Result<HeadNormShape> head_norm_shape(const KernelNode& node) {
  FERRITE_ASSIGN_OR_RETURN(double epsilon, rational_attribute(node, "epsilon"));
  FERRITE_ASSIGN_OR_RETURN(uint64_t head_dim, unsigned_attribute(node, "head_dim"));
  const HeadNormShape s{epsilon, head_dim, dim(node.inputs[0], 0), dim(node.inputs[0], 1)};
  if (head_dim == 0 || dim(node.inputs[1], 0) != head_dim || s.width % head_dim != 0) {
    return node_shape_error(
        node, fmt::format("width {} is not whole heads of the weight's head_dim {}", s.width,
                          head_dim));
  }
  return s;
}

inline Result<void> rope_factor_count(const KernelNode& node, const RopeShape& shape) {
  if (node.inputs.size() < 3 || dim(node.inputs[2], 0) != shape.head_dim / 2) {
    return node_shape_error(
        node, fmt::format("rope factors must be head_dim / 2 = {} values", shape.head_dim / 2));
  }
  return {};
}

struct SlidingAttentionShape {
  AttentionShape heads;
  uint64_t scale_base, window;
};

inline Result<SlidingAttentionShape> sliding_attention_shape(const KernelNode& node) {
  FERRITE_ASSIGN_OR_RETURN(const AttentionShape heads, attention_shape(node));
  FERRITE_ASSIGN_OR_RETURN(uint64_t scale_base, unsigned_attribute(node, "scale_base"));
  FERRITE_ASSIGN_OR_RETURN(uint64_t window, unsigned_attribute(node, "window"));
  if (scale_base == 0) return node_shape_error(node, "scale_base must be positive");
  return SlidingAttentionShape{heads, scale_base, window};
}

// The first cache row a query at `pos` attends to: pos - window + 1, or 0.
inline uint64_t first_visible_row(uint64_t pos, uint64_t window) {
  return window != 0 && pos + 1 > window ? pos + 1 - window : 0;
}

// gather_rows: x [T, D] (capacity T), rows u32[S], output [S, D].
struct GatherShape {
  uint64_t capacity, width, rows;
};

inline Result<GatherShape> gather_shape(const KernelNode& node) {
  const GatherShape s{dim(node.inputs[0], 0), dim(node.inputs[0], 1), dim(node.inputs[1], 0)};
  if (dim(node.outputs[0], 0) != s.rows || dim(node.outputs[0], 1) != s.width) {
    return node_shape_error(node, "the output must be [rows, width of x]");
  }
  return s;
}

// Row index `s` of a gather, checked against the step's tokens.
inline Result<uint32_t> gathered_row(const NodeId& node_id, const KernelTensor& rows, uint64_t s,
                                     uint64_t tokens) {
  const uint32_t row = rows.as<uint32_t>()[s];
  if (row >= tokens) {
    return make_error(ErrorCode::kInvalidArgument,
                      "node `{}`: row {} gathers token {}; the step has {} tokens",
                      node_id.str(), s, row, tokens)
        .with_field("node_id", node_id.str())
        .with_field("ordinal", std::to_string(s));
  }
  return row;
}

inline Result<RowShape> elementwise_shape(const KernelNode& node) {
  const RowShape s{dim(node.inputs[0], 0), dim(node.inputs[0], 1)};
  for (const KernelTensor& t : node.inputs) {
    if (dim(t, 0) != s.capacity || dim(t, 1) != s.width) {
      return node_shape_error(node, "the inputs' shapes disagree");
    }
  }
  if (dim(node.outputs[0], 0) != s.capacity || dim(node.outputs[0], 1) != s.width) {
    return node_shape_error(node, "the output's shape disagrees with the inputs");
  }
  return s;
}

}  // namespace ferrite
