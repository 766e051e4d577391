// The `cpu.fast` kernels: f32_kernels.h for the arithmetic, the shared pool
// for threads. Every kernel checks its bound tensors once, at bind time.
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "f32_kernels.h"
#include "ferrite/core/checked_math.h"
#include "ferrite/operations/operation_table.h"
#include "providers/cpu_fast/cpu_fast.h"
#include "ferrite/runtime/kernel_attributes.h"
#include "ferrite/runtime/thread_pool.h"
#include "providers/support/family_kernel_shapes.h"
#include "providers/support/llama_kernel_shapes.h"
#include "providers/support/weight_storage.h"
#include "sub_block_kernels.h"

namespace ferrite {
namespace {

struct FastContext {
  fast::Isa isa;
  ThreadPool pool;
  FastContext(fast::Isa i, uint32_t threads) : isa(i), pool(threads) {}
};
using Context = std::shared_ptr<FastContext>;

// Below this many multiply-adds a matrix product runs on the calling thread:
// waking the pool costs more than the work. Shape-only, so results do not
// depend on it.
constexpr uint64_t kParallelMultiplyAdds = uint64_t{1} << 15;
// Rows per parallel task: whole cache lines of output per thread.
constexpr uint64_t kRowBlock = 16;

// Parallel lanes of a product on block weights, each with its own unpack
// buffer in the node's scratch. A fixed number, so plans do not depend on the
// thread count: a pool of more threads leaves the extra ones idle there.
constexpr uint64_t kLinearLanes = 32;

// The node's planned scratch, checked to hold `bytes` and be 64-byte aligned
// (the provider declares its scratch in add_cpu_fast_providers).
Result<std::byte*> carve_scratch(const KernelNode& node, uint64_t bytes) {
  if (bytes == 0) return node.scratch;
  if (node.scratch == nullptr || node.scratch_bytes < bytes ||
      reinterpret_cast<uintptr_t>(node.scratch) % 64 != 0) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "node `{}`: the plan gives {} bytes of scratch; the kernel needs {} "
                      "(64-byte aligned)",
                      node.node_id->str(), node.scratch == nullptr ? 0 : node.scratch_bytes, bytes)
        .with_field("node_id", node.node_id->str());
  }
  return node.scratch;
}

// linear on block weights: capacity x ceil(in / 64) activation pairs of 192
// bytes, then kLinearLanes unpack buffers of ceil(in / 64) x 512 bytes.
struct LinearScratch {
  uint64_t activation_bytes, total;
};
Result<LinearScratch> linear_scratch(const KernelNode& node, uint64_t capacity, uint64_t in) {
  const uint64_t pairs = fast::QuantizedActivations::pairs_for(in);
  auto activations = checked_mul(capacity, pairs * sizeof(fast::ActivationPair));
  auto unpack = checked_mul(kLinearLanes * fast::kUnpackBytesPerPair, pairs);
  auto total = activations && unpack ? checked_add(*activations, *unpack) : std::nullopt;
  if (!total) {
    return make_error(ErrorCode::kInvalidArgument, "node `{}`: linear scratch size overflows",
                      node.node_id->str())
        .with_field("node_id", node.node_id->str());
  }
  return LinearScratch{*activations, *total};
}

// linear on the sub-block formats (Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K;
// f32_kernels.h "Sub-block formats"): the activations are quantized once per
// run into the node's scratch (SubBlockActivations fits in the activation
// part of the linear scratch), then threads split whole row blocks.
Result<BoundKernel> sub_block_linear(const Context& ctx, const KernelNode& node,
                                     fast::SubBlocks kind, uint64_t capacity, uint64_t in,
                                     uint64_t out) {
  const KernelTensor x = node.inputs[0], w = node.inputs[1], y = node.outputs[0];
  FERRITE_ASSIGN_OR_RETURN(const LinearScratch layout, linear_scratch(node, capacity, in));
  const auto needed = checked_mul(capacity, fast::SubBlockActivations::token_bytes(in));
  if (!needed || *needed > layout.activation_bytes) {
    return make_error(ErrorCode::kInvalidArgument, "node `{}`: linear scratch size overflows",
                      node.node_id->str())
        .with_field("node_id", node.node_id->str());
  }
  FERRITE_ASSIGN_OR_RETURN(std::byte* const base, carve_scratch(node, layout.total));
  const fast::SubBlockActivations activations(base, in);
  const uint64_t per_token = in * out;
  return BoundKernel{[=](uint64_t tokens) -> Result<void> {
    tokens = std::min(tokens, capacity);
    const float* xp = x.as<float>();
    float* yp = y.as<float>();
    const bool parallel = per_token * tokens >= kParallelMultiplyAdds;
    if (parallel && tokens > 1) {
      ctx->pool.parallel_for(tokens, [&](uint64_t begin, uint64_t end) {
        fast::quantize_sub_block_activations(xp, begin, end, activations);
      });
    } else {
      fast::quantize_sub_block_activations(xp, 0, tokens, activations);
    }
    auto rows = [&](uint64_t begin, uint64_t end) {
      fast::matmul_sub_block_rows(ctx->isa, kind, w.data, activations, yp, out, tokens, begin, end);
    };
    if (!parallel) {
      rows(0, out);
      return {};
    }
    const uint64_t row_blocks = (out + kRowBlock - 1) / kRowBlock;
    ctx->pool.parallel_for(row_blocks, [&](uint64_t begin, uint64_t end) {
      rows(begin * kRowBlock, std::min(end * kRowBlock, out));
    });
    return {};
  }};
}

// Dense f32 or block-quantized (Q8_0, Q4_0; the sub-block formats above)
// weights; the blocks are read as stored, never expanded in memory.
Result<BoundKernel> linear(const Context& ctx, const KernelNode& node) {
  const KernelTensor x = node.inputs[0], w = node.inputs[1], y = node.outputs[0];
  const uint64_t capacity = dim(x, 0), in = dim(x, 1), out = dim(w, 0);
  if (dim(w, 1) != in || dim(y, 0) != capacity || dim(y, 1) != out) {
    return make_error(ErrorCode::kInvalidArgument,
                      "node `{}`: input, weight and output extents disagree", node.node_id->str())
        .with_field("node_id", node.node_id->str());
  }
  auto work = checked_mul(in, out);
  if (!work || in == 0 || out == 0) {
    return make_error(ErrorCode::kInvalidArgument, "node `{}`: empty or oversized weight",
                      node.node_id->str())
        .with_field("node_id", node.node_id->str());
  }
  FERRITE_ASSIGN_OR_RETURN(const GgmlBlockFormat* stored, stored_blocks(node, w));
  if (stored != nullptr) {
    if (const auto kind = fast::sub_blocks_of(*stored)) {
      return sub_block_linear(ctx, node, *kind, capacity, in, out);
    }
  }
  const std::optional<fast::Blocks> blocks =
      stored == nullptr ? std::nullopt
                        : std::optional(stored == &kGgmlQ8_0 ? fast::Blocks::kQ8_0 : fast::Blocks::kQ4_0);
  const uint64_t per_token = *work;
  // Block weights: the activations are quantized once per run (threads split
  // the tokens), before the rows are split (f32_kernels.h), into this node's
  // scratch, followed by one unpack buffer per lane (kLinearLanes).
  std::optional<fast::QuantizedActivations> quantized;
  std::byte* unpack = nullptr;
  uint64_t unpack_stride = 0;
  if (blocks) {
    const uint64_t pairs = fast::QuantizedActivations::pairs_for(in);
    FERRITE_ASSIGN_OR_RETURN(const LinearScratch layout, linear_scratch(node, capacity, in));
    FERRITE_ASSIGN_OR_RETURN(std::byte* const base, carve_scratch(node, layout.total));
    quantized.emplace(reinterpret_cast<fast::ActivationPair*>(base), in, *blocks);
    unpack = base + layout.activation_bytes;
    unpack_stride = pairs * fast::kUnpackBytesPerPair;
  }
  // A plain value for the closure (GCC 12 misreads a captured optional).
  const fast::Blocks block_kind = blocks.value_or(fast::Blocks::kQ8_0);
  const bool has_blocks = blocks.has_value();
  const fast::QuantizedActivations activations =
      quantized.value_or(fast::QuantizedActivations(nullptr, in, block_kind));
  return BoundKernel{[=](uint64_t tokens) -> Result<void> {
    tokens = std::min(tokens, capacity);
    const float* xp = x.as<float>();
    float* yp = y.as<float>();
    const bool parallel = per_token * tokens >= kParallelMultiplyAdds;
    const uint64_t row_blocks = (out + kRowBlock - 1) / kRowBlock;
    if (has_blocks) {
      fast::QuantizedActivations q = activations;
      if (parallel && tokens > 1) {
        ctx->pool.parallel_for(tokens, [&](uint64_t begin, uint64_t end) {
          fast::quantize_activations(xp, begin, end, q);
        });
      } else {
        fast::quantize_activations(xp, 0, tokens, q);
      }
      // Lane l owns rows [split(l), split(l + 1)) of whole row blocks and
      // unpack buffer l: the buffers belong to the plan, not to threads.
      const uint64_t lanes = parallel ? std::min(kLinearLanes, row_blocks) : 1;
      auto lane_rows = [&](uint64_t begin, uint64_t end) {
        for (uint64_t lane = begin; lane < end; ++lane) {
          const uint64_t first = row_blocks * lane / lanes * kRowBlock;
          const uint64_t last = std::min(row_blocks * (lane + 1) / lanes * kRowBlock, out);
          fast::matmul_block_rows(ctx->isa, block_kind, w.data, q, yp, out, tokens, first, last,
                                  unpack + lane * unpack_stride);
        }
      };
      if (lanes == 1) {
        lane_rows(0, 1);
      } else {
        ctx->pool.parallel_for(lanes, lane_rows);
      }
      return {};
    }
    auto rows = [&](uint64_t begin, uint64_t end) {
      fast::matmul_rows(ctx->isa, w.as<float>(), xp, yp, in, out, tokens, begin, end);
    };
    if (!parallel) {
      rows(0, out);
      return {};
    }
    ctx->pool.parallel_for(row_blocks, [&](uint64_t begin, uint64_t end) {
      rows(begin * kRowBlock, std::min(end * kRowBlock, out));
    });
    return {};
  }};
}

Result<BoundKernel> rms_norm(const Context& ctx, const KernelNode& node) {
  FERRITE_ASSIGN_OR_RETURN(double eps, rational_attribute(node, "epsilon"));
  const KernelTensor x = node.inputs[0], w = node.inputs[1], y = node.outputs[0];
  const uint64_t capacity = dim(x, 0), width = dim(x, 1);
  if (dim(w, 0) != width || width == 0) {
    return make_error(ErrorCode::kInvalidArgument, "node `{}`: weight width disagrees",
                      node.node_id->str())
        .with_field("node_id", node.node_id->str());
  }
  return BoundKernel{[=](uint64_t tokens) -> Result<void> {
    tokens = std::min(tokens, capacity);
    const float* weight = w.as<float>();
    for (uint64_t t = 0; t < tokens; ++t) {
      const float* row = x.as<float>() + t * width;
      const float sum = fast::dot(ctx->isa, row, row, width);
      const float scale = static_cast<float>(
          1.0 / std::sqrt(static_cast<double>(sum) / static_cast<double>(width) + eps));
      float* out = y.as<float>() + t * width;
      for (uint64_t i = 0; i < width; ++i) out[i] = (row[i] * scale) * weight[i];
    }
    return {};
  }};
}

// Bit-identical to cpu.reference: the same double-precision angles, computed
// once per token and shared by every head.
// With `factors` (rope_factors, input 2), pair i's frequency is divided by
// factors[i], in double as cpu.reference does.
Result<BoundKernel> rope_kernel(const KernelNode& node, bool with_factors, bool scaled = false) {
  FERRITE_ASSIGN_OR_RETURN(const RopeShape shape, rope_shape(node));
  // rope_scaled: every angle divided by `factor` (1 otherwise, unused).
  double divisor = 1.0;
  if (scaled) {
    FERRITE_ASSIGN_OR_RETURN(divisor, rational_attribute(node, "factor"));
  }
  if (with_factors) FERRITE_RETURN_IF_ERROR(rope_factor_count(node, shape));
  const KernelTensor factors = with_factors ? node.inputs[2] : KernelTensor{};
  const uint64_t head_dim = shape.head_dim, capacity = shape.capacity, width = shape.width;
  const double theta = shape.theta;
  const bool interleaved = shape.interleaved;
  const KernelTensor x = node.inputs[0], positions = node.inputs[1], y = node.outputs[0];
  const uint64_t half = head_dim / 2;
  // Scratch: the frequencies, then (cos, sin) per pair, all doubles; the
  // frequencies are recomputed every run (scratch is shared between nodes).
  FERRITE_ASSIGN_OR_RETURN(std::byte* const scratch, carve_scratch(node, 3 * half * sizeof(double)));
  double* const frequencies = reinterpret_cast<double*>(scratch);
  double* const cs = frequencies + half;
  return BoundKernel{[=](uint64_t tokens) -> Result<void> {
    tokens = std::min(tokens, capacity);
    for (uint64_t i = 0; i < half; ++i) {
      frequencies[i] = std::pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(head_dim));
      if (with_factors) frequencies[i] /= static_cast<double>(factors.as<float>()[i]);
    }
    for (uint64_t t = 0; t < tokens; ++t) {
      const double pos = positions.as<uint32_t>()[t];
      for (uint64_t i = 0; i < half; ++i) {
        const double angle = scaled ? pos * frequencies[i] / divisor : pos * frequencies[i];
        cs[2 * i] = std::cos(angle);
        cs[2 * i + 1] = std::sin(angle);
      }
      const float* in = x.as<float>() + t * width;
      float* out = y.as<float>() + t * width;
      for (uint64_t head = 0; head < width; head += head_dim) {
        for (uint64_t i = 0; i < half; ++i) {
          const uint64_t a = interleaved ? head + 2 * i : head + i;
          const uint64_t b = interleaved ? head + 2 * i + 1 : head + i + half;
          const double xa = in[a], xb = in[b], c = cs[2 * i], s = cs[2 * i + 1];
          out[a] = static_cast<float>(xa * c - xb * s);
          out[b] = static_cast<float>(xa * s + xb * c);
        }
      }
    }
    return {};
  }};
}

Result<BoundKernel> rope(const Context&, const KernelNode& node) {
  return rope_kernel(node, false);
}
Result<BoundKernel> rope_factors(const Context&, const KernelNode& node) {
  return rope_kernel(node, true);
}
Result<BoundKernel> rope_scaled(const Context&, const KernelNode& node) {
  return rope_kernel(node, false, true);
}

Result<BoundKernel> add_bias(const Context&, const KernelNode& node) {
  FERRITE_ASSIGN_OR_RETURN(const RowShape shape, add_bias_shape(node));
  const KernelTensor x = node.inputs[0], bias = node.inputs[1], y = node.outputs[0];
  return BoundKernel{[=](uint64_t tokens) -> Result<void> {
    tokens = std::min(tokens, shape.capacity);
    const float* b = bias.as<float>();
    for (uint64_t t = 0; t < tokens; ++t) {
      const float* in = x.as<float>() + t * shape.width;
      float* out = y.as<float>() + t * shape.width;
      for (uint64_t i = 0; i < shape.width; ++i) out[i] = in[i] + b[i];
    }
    return {};
  }};
}

// rms_norm's arithmetic (a vector dot for the sum of squares) per head.
Result<BoundKernel> head_rms_norm(const Context& ctx, const KernelNode& node) {
  FERRITE_ASSIGN_OR_RETURN(const HeadNormShape shape, head_norm_shape(node));
  const KernelTensor x = node.inputs[0], w = node.inputs[1], y = node.outputs[0];
  return BoundKernel{[=](uint64_t tokens) -> Result<void> {
    tokens = std::min(tokens, shape.capacity);
    const uint64_t n = shape.head_dim;
    const float* weight = w.as<float>();
    for (uint64_t start = 0; start < tokens * shape.width; start += n) {
      const float* row = x.as<float>() + start;
      const float sum = fast::dot(ctx->isa, row, row, n);
      const float scale = static_cast<float>(
          1.0 / std::sqrt(static_cast<double>(sum) / static_cast<double>(n) + shape.epsilon));
      float* out = y.as<float>() + start;
      for (uint64_t i = 0; i < n; ++i) out[i] = (row[i] * scale) * weight[i];
    }
    return {};
  }};
}

// Per token: append k and v at the token's position, then every head
// attends causally over rows 0..position, heads split across threads.
// Rows first_visible_row(pos, window) .. pos, scores scaled by
// 1/sqrt(scale_base) (attention: head_dim, window 0).
Result<BoundKernel> attention_kernel(const Context& ctx, const KernelNode& node,
                                     const AttentionShape& shape, uint64_t scale_base,
                                     uint64_t window) {
  const uint64_t n_heads = shape.n_heads, n_kv_heads = shape.n_kv_heads,
                 head_dim = shape.head_dim, capacity = shape.capacity, q_width = shape.q_width,
                 context = shape.context;
  const AttentionOperands operands = attention_operands(node);
  const KernelTensor q = operands.q, k_cache = operands.k_cache, v_cache = operands.v_cache,
                     out = operands.out;
  auto count = checked_mul(n_heads, context);
  auto bytes = count ? checked_mul(*count, sizeof(float)) : std::nullopt;
  if (!bytes) {
    return make_error(ErrorCode::kInvalidArgument, "node `{}`: score buffer size overflows",
                      node.node_id->str())
        .with_field("node_id", node.node_id->str());
  }
  // One score row per head in the node's scratch, so threads never share one.
  FERRITE_ASSIGN_OR_RETURN(std::byte* const scratch, carve_scratch(node, *bytes));
  float* const scores = reinterpret_cast<float*>(scratch);
  const NodeId* id = node.node_id;
  return BoundKernel{[=, &node_id = *id](uint64_t tokens) -> Result<void> {
    tokens = std::min(tokens, capacity);
    const uint64_t group = n_heads / n_kv_heads;
    const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(scale_base)));
    for (uint64_t t = 0; t < tokens; ++t) {
      FERRITE_ASSIGN_OR_RETURN(const KvRowAt at, append_kv_row(node_id, shape, operands, t));
      const uint64_t pos = at.pos, slot = at.slot;
      const uint64_t first = first_visible_row(pos, window);
      auto heads = [&](uint64_t begin, uint64_t end) {
        for (uint64_t h = begin; h < end; ++h) {
          const uint64_t kv = (h / group) * head_dim;
          const float* query = q.as<float>() + t * q_width + h * head_dim;
          float* s = scores + h * context;
          float max_score = -INFINITY;
          for (uint64_t p = first; p <= pos; ++p) {
            s[p] = fast::dot(ctx->isa, query, kv_row(k_cache, shape, slot, p) + kv, head_dim) * scale;
            max_score = std::max(max_score, s[p]);
          }
          float total = 0;
          for (uint64_t p = first; p <= pos; ++p) {
            s[p] = std::exp(s[p] - max_score);
            total += s[p];
          }
          float* result = out.as<float>() + t * q_width + h * head_dim;
          std::fill_n(result, head_dim, 0.0f);
          for (uint64_t p = first; p <= pos; ++p) {
            fast::axpy(ctx->isa, s[p], kv_row(v_cache, shape, slot, p) + kv, result, head_dim);
          }
          for (uint64_t i = 0; i < head_dim; ++i) result[i] /= total;
        }
      };
      // Work grows with the position; one thread is enough for short rows.
      if ((pos + 1 - first) * q_width < kParallelMultiplyAdds / 4) {
        heads(0, n_heads);
      } else {
        ctx->pool.parallel_for(n_heads, heads);
      }
    }
    return {};
  }};
}

Result<BoundKernel> attention(const Context& ctx, const KernelNode& node) {
  FERRITE_ASSIGN_OR_RETURN(const AttentionShape shape, attention_shape(node));
  return attention_kernel(ctx, node, shape, shape.head_dim, 0);
}

Result<BoundKernel> sliding_attention(const Context& ctx, const KernelNode& node) {
  FERRITE_ASSIGN_OR_RETURN(const SlidingAttentionShape shape, sliding_attention_shape(node));
  return attention_kernel(ctx, node, shape.heads, shape.scale_base, shape.window);
}

// GELU (tanh approximation) in f32, times up.
Result<BoundKernel> geglu(const Context&, const KernelNode& node) {
  FERRITE_ASSIGN_OR_RETURN(const RowShape shape, elementwise_shape(node));
  const KernelTensor gate = node.inputs[0], up = node.inputs[1], y = node.outputs[0];
  return BoundKernel{[=](uint64_t tokens) -> Result<void> {
    const uint64_t n = std::min(tokens, shape.capacity) * shape.width;
    const float* g = gate.as<float>();
    const float* u = up.as<float>();
    float* o = y.as<float>();
    constexpr float kRoot2OverPi = 0.7978845608028654f;
    for (uint64_t i = 0; i < n; ++i) {
      const float x = g[i];
      o[i] = 0.5f * x * (1.0f + std::tanh(kRoot2OverPi * (x + 0.044715f * x * x * x))) * u[i];
    }
    return {};
  }};
}

Result<BoundKernel> scale(const Context&, const KernelNode& node) {
  FERRITE_ASSIGN_OR_RETURN(double factor, rational_attribute(node, "factor"));
  FERRITE_ASSIGN_OR_RETURN(const RowShape shape, elementwise_shape(node));
  const KernelTensor x = node.inputs[0], y = node.outputs[0];
  const float f = static_cast<float>(factor);
  return BoundKernel{[=](uint64_t tokens) -> Result<void> {
    const uint64_t n = std::min(tokens, shape.capacity) * shape.width;
    const float* in = x.as<float>();
    float* o = y.as<float>();
    for (uint64_t i = 0; i < n; ++i) o[i] = in[i] * f;
    return {};
  }};
}

Result<BoundKernel> swiglu(const Context&, const KernelNode& node) {
  const KernelTensor gate = node.inputs[0], up = node.inputs[1], y = node.outputs[0];
  const uint64_t capacity = dim(gate, 0), width = dim(gate, 1);
  return BoundKernel{[=](uint64_t tokens) -> Result<void> {
    const uint64_t n = std::min(tokens, capacity) * width;
    const float* g = gate.as<float>();
    const float* u = up.as<float>();
    float* o = y.as<float>();
    for (uint64_t i = 0; i < n; ++i) o[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
    return {};
  }};
}

Result<BoundKernel> add(const Context&, const KernelNode& node) {
  const KernelTensor a = node.inputs[0], b = node.inputs[1], y = node.outputs[0];
  const uint64_t capacity = dim(a, 0), width = dim(a, 1);
  return BoundKernel{[=](uint64_t tokens) -> Result<void> {
    const uint64_t n = std::min(tokens, capacity) * width;
    const float* pa = a.as<float>();
    const float* pb = b.as<float>();
    float* o = y.as<float>();
    for (uint64_t i = 0; i < n; ++i) o[i] = pa[i] + pb[i];
    return {};
  }};
}

using FastFactory = Result<BoundKernel> (*)(const Context&, const KernelNode&);

WorkspaceShapeFactor input_dimension(uint32_t ordinal, uint32_t axis, uint64_t divisor = 1) {
  return WorkspaceShapeFactor{.source = WorkspaceShapeSource::kDimension,
                              .role = ValueBindingRole::kInput,
                              .ordinal = ordinal,
                              .axis = axis,
                              .attribute = {},
                              .divisor = divisor};
}

// The scratch each kernel above carves, as the catalog declares it (shape
// formulas of the node's tensors and attributes; see the header).
std::optional<ProviderWorkspaceRequirement> fast_scratch(std::string_view op) {
  WorkspaceShape shape;
  if (op == "linear") {
    // Quantized activations: capacity x ceil(in / 64) pairs of 192 bytes;
    // unpack buffers: kLinearLanes x ceil(in / 64) x 512 bytes. Declared
    // whatever the weight encoding (dense f32 weights use none of it).
    const uint64_t pair_bytes = sizeof(fast::ActivationPair);
    shape.terms = {{pair_bytes, {input_dimension(0, 0), input_dimension(0, 1, 64)}},
                   {kLinearLanes * fast::kUnpackBytesPerPair, {input_dimension(0, 1, 64)}}};
  } else if (op == "rope" || op == "rope_factors" || op == "rope_scaled") {
    // Frequencies and (cos, sin): 3 doubles per pair of a head.
    shape.terms = {{3 * sizeof(double),
                    {WorkspaceShapeFactor{.source = WorkspaceShapeSource::kAttribute,
                                          .attribute = "head_dim",
                                          .divisor = 2}}}};
  } else if (op == "attention" || op == "sliding_attention" || op == "sequence_attention" ||
             op == "sequence_sliding_attention") {
    // One f32 score row of the context (the K cache's rows: input 4, or 5
    // after sequence attention's slots) per head.
    const uint32_t k_cache = op.starts_with("sequence_") ? 5 : 4;
    shape.terms = {{sizeof(float),
                    {WorkspaceShapeFactor{.source = WorkspaceShapeSource::kAttribute,
                                          .attribute = "n_heads"},
                     WorkspaceShapeFactor{.source = WorkspaceShapeSource::kTokenRows,
                                          .role = ValueBindingRole::kInput,
                                          .ordinal = k_cache, .axis = 0, .attribute = {},
                                          .divisor = 1}}}};
  } else {
    return std::nullopt;
  }
  return ProviderWorkspaceRequirement{std::move(shape), 64, ProviderWorkspaceScope::kInvocation,
                                      DynamicStorageRequirement::contiguous()};
}

Result<fast::Isa> resolve_isa(const CpuFastOptions& options) {
  if (!options.isa) return fast::best_isa();
  auto isa = fast::parse_isa(*options.isa);
  if (!isa) {
    return make_error(ErrorCode::kInvalidArgument,
                      "unknown instruction set `{}` (expected avx512, avx2 or portable)",
                      *options.isa);
  }
  if (!fast::isa_supported(*isa)) {
    return make_error(ErrorCode::kInvalidArgument, "this CPU does not support `{}`", *options.isa);
  }
  return *isa;
}

}  // namespace

Result<std::string> cpu_fast_isa(const CpuFastOptions& options) {
  FERRITE_ASSIGN_OR_RETURN(fast::Isa isa, resolve_isa(options));
  return std::string(fast::isa_name(isa));
}

Result<void> add_cpu_fast_providers(CpuProviderRegistry& registry, const CpuFastOptions& options) {
  FERRITE_ASSIGN_OR_RETURN(fast::Isa isa, resolve_isa(options));
  const uint32_t threads = options.threads == 0 ? ThreadPool::hardware_threads() : options.threads;
  auto context = std::make_shared<FastContext>(isa, threads);
  FERRITE_ASSIGN_OR_RETURN(auto operations, operation_descriptors());
  const std::map<OpKind, FastFactory> factories{
      {OpKind::kAdd, add},       {OpKind::kAttention, attention},
      {OpKind::kLinear, linear}, {OpKind::kRmsNorm, rms_norm},
      {OpKind::kRope, rope},     {OpKind::kSwiglu, swiglu},
      {OpKind::kAddBias, add_bias}, {OpKind::kHeadRmsNorm, head_rms_norm},
      {OpKind::kRopeFactors, rope_factors}, {OpKind::kGeglu, geglu},
      {OpKind::kScale, scale},   {OpKind::kSlidingAttention, sliding_attention},
      {OpKind::kRopeScaled, rope_scaled},
      {OpKind::kSequenceAttention, attention},
      {OpKind::kSequenceSlidingAttention, sliding_attention}};
  for (auto& op : operations) {
    auto factory = factories.find(*find_op_kind(op.id));
    if (factory == factories.end()) continue;  // see the header: reference only
    const std::string name(op.id.str().substr(std::string_view("operation.").size()));
    FastFactory make = factory->second;
    FERRITE_RETURN_IF_ERROR(registry.add(CpuProviderSpec{
        .provider_id = ProviderId::literal(fmt::format("{}.{}", kCpuFastProviderPrefix, name)),
        .operation = std::move(op),
        .version = {1, 0},
        // linear 2: block weights take the int8 (VNNI) numerics contract;
        // 3: the activation scales are rounded to f16 (as llama.cpp's).
        .revision = name == "linear" ? "3" : "1",
        .capabilities = {CapabilityId::literal("capability.f32")},
        .weight_formats = {WeightFormatId::literal("weight-format.dense"),
                           WeightFormatId::literal(kGgmlBlocksWeightFormatId)},
        .quantization_formats = name == "linear"
                                    ? std::set<QuantizationFormatId>{
                                          QuantizationFormatId::literal(kGgmlQ8_0FormatId),
                                          QuantizationFormatId::literal(kGgmlQ4_0FormatId),
                                          QuantizationFormatId::literal(kGgmlQ4_1FormatId),
                                          QuantizationFormatId::literal(kGgmlQ5_0FormatId),
                                          QuantizationFormatId::literal(kGgmlQ5_1FormatId),
                                          QuantizationFormatId::literal(kGgmlQ4_KFormatId),
                                          QuantizationFormatId::literal(kGgmlQ5_KFormatId),
                                          QuantizationFormatId::literal(kGgmlQ6_KFormatId)}
                                    : std::set<QuantizationFormatId>{},
        .estimate = DeclarativeEstimateSpec{.value_alignment_bytes = 64,
                                            .scratch = fast_scratch(name),
                                            .binding = std::nullopt,
                                            .persistent = std::nullopt},
        .factory = [context, make](const KernelNode& node) { return make(context, node); }}));
  }
  return {};
}

NamedProvider cpu_fast_provider() {
  auto options = [](const ProviderSettings& settings) {
    return CpuFastOptions{.threads = settings.threads, .isa = settings.isa};
  };
  return NamedProvider{
      .name = "fast",
      .id_prefix = std::string(kCpuFastProviderPrefix),
      .summary = "cpu.fast: vectorized, multi-threaded f32 kernels with one fixed summation order",
      .allocator = host_allocator(),
      .fallbacks = {"reference"},
      .add_kernels = [options](CpuProviderRegistry& kernels, const ProviderSettings& settings) {
        return add_cpu_fast_providers(kernels, options(settings));
      },
      .instruction_set = [options](const ProviderSettings& settings) {
        return cpu_fast_isa(options(settings));
      },
      .describe = [options](const ProviderSettings& settings) -> Result<std::string> {
        FERRITE_ASSIGN_OR_RETURN(std::string isa, cpu_fast_isa(options(settings)));
        const uint32_t threads =
            settings.threads == 0 ? ThreadPool::hardware_threads() : settings.threads;
        return fmt::format("cpu.fast ({}, {} thread{})", isa, threads, threads == 1 ? "" : "s");
      }};
}

}  // namespace ferrite
