#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "ferrite/operations/operation_table.h"
#include "providers/cpu_reference/cpu_reference.h"
#include "ferrite/runtime/kernel_attributes.h"
#include "providers/support/family_kernel_shapes.h"
#include "providers/support/llama_kernel_shapes.h"
#include "providers/support/weight_storage.h"

namespace ferrite {
namespace {

// ---- kernels ------------------------------------------------------------

Result<BoundKernel> token_embedding(const KernelNode& node) {
  const KernelTensor ids = node.inputs[0], table = node.inputs[1], out = node.outputs[0];
  const uint64_t capacity = dim(ids, 0), vocab = dim(table, 0), width = dim(table, 1);
  FERRITE_ASSIGN_OR_RETURN(const GgmlBlockFormat* blocks, stored_blocks(node, table));
  const NodeId* id = node.node_id;
  return BoundKernel{[=, &node_name = *id](uint64_t tokens) -> Result<void> {
    if (tokens == 0 || tokens > capacity) {
      return make_error(ErrorCode::kInvalidArgument, "node `{}`: {} tokens outside capacity",
                        node_name.str(), tokens);
    }
    const uint32_t* t = ids.as<uint32_t>();
    for (uint64_t i = 0; i < tokens; ++i) {
      if (t[i] >= vocab) {
        return make_error(ErrorCode::kInvalidArgument,
                          "node `{}`: token id {} at row {} is outside the vocabulary of {}",
                          node_name.str(), t[i], i, vocab);
      }
      float* row = out.as<float>() + i * width;
      if (blocks == nullptr) {
        std::copy_n(table.as<float>() + t[i] * width, width, row);
        continue;
      }
      const uint64_t per_row = width / blocks->values_per_block;
      const std::byte* block = table.data + t[i] * per_row * blocks->bytes_per_block;
      for (uint64_t b = 0; b < per_row; ++b, block += blocks->bytes_per_block) {
        dequantize_ggml_block(*blocks, block, row + b * blocks->values_per_block);
      }
    }
    return {};
  }};
}

Result<BoundKernel> rms_norm(const KernelNode& node) {
  FERRITE_ASSIGN_OR_RETURN(double eps, rational_attribute(node, "epsilon"));
  const KernelTensor x = node.inputs[0], w = node.inputs[1], y = node.outputs[0];
  const uint64_t capacity = dim(x, 0), width = dim(x, 1);
  return BoundKernel{[=](uint64_t tokens) -> Result<void> {
    tokens = std::min(tokens, capacity);
    for (uint64_t t = 0; t < tokens; ++t) {
      const float* row = x.as<float>() + t * width;
      double sum = 0;
      for (uint64_t i = 0; i < width; ++i) sum += static_cast<double>(row[i]) * row[i];
      const double scale = 1.0 / std::sqrt(sum / static_cast<double>(width) + eps);
      float* out = y.as<float>() + t * width;
      for (uint64_t i = 0; i < width; ++i) {
        out[i] = static_cast<float>(row[i] * scale * w.as<float>()[i]);
      }
    }
    return {};
  }};
}

// Block-quantized weights are dequantized block by block (exactly) as they
// are read; the sum is in double either way.
Result<BoundKernel> linear(const KernelNode& node) {
  const KernelTensor x = node.inputs[0], w = node.inputs[1], y = node.outputs[0];
  const uint64_t capacity = dim(x, 0), in = dim(x, 1), out = dim(w, 0);
  FERRITE_ASSIGN_OR_RETURN(const GgmlBlockFormat* blocks, stored_blocks(node, w));
  return BoundKernel{[=](uint64_t tokens) -> Result<void> {
    tokens = std::min(tokens, capacity);
    float values[256];  // one block (values_per_block <= 256)
    for (uint64_t t = 0; t < tokens; ++t) {
      const float* row = x.as<float>() + t * in;
      for (uint64_t o = 0; o < out; ++o) {
        double acc = 0;
        if (blocks == nullptr) {
          const float* weights = w.as<float>() + o * in;
          for (uint64_t i = 0; i < in; ++i) acc += static_cast<double>(row[i]) * weights[i];
        } else {
          const uint64_t per_row = in / blocks->values_per_block;
          const std::byte* block = w.data + o * per_row * blocks->bytes_per_block;
          for (uint64_t b = 0; b < per_row; ++b, block += blocks->bytes_per_block) {
            dequantize_ggml_block(*blocks, block, values);
            for (uint64_t i = 0; i < blocks->values_per_block; ++i) {
              acc += static_cast<double>(row[b * blocks->values_per_block + i]) * values[i];
            }
          }
        }
        y.as<float>()[t * out + o] = static_cast<float>(acc);
      }
    }
    return {};
  }};
}

// RoPE; with `factors` (rope_factors, input 2) pair i's frequency is divided
// by factors[i].
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
  return BoundKernel{[=](uint64_t tokens) -> Result<void> {
    tokens = std::min(tokens, capacity);
    const uint64_t half = head_dim / 2;
    for (uint64_t t = 0; t < tokens; ++t) {
      const double pos = positions.as<uint32_t>()[t];
      const float* in = x.as<float>() + t * width;
      float* out = y.as<float>() + t * width;
      for (uint64_t head = 0; head < width; head += head_dim) {
        for (uint64_t i = 0; i < half; ++i) {
          double freq = std::pow(theta, -2.0 * static_cast<double>(i) /
                                            static_cast<double>(head_dim));
          if (with_factors) freq /= static_cast<double>(factors.as<float>()[i]);
          const double angle = scaled ? pos * freq / divisor : pos * freq;
          const double c = std::cos(angle), s = std::sin(angle);
          const uint64_t a = interleaved ? head + 2 * i : head + i;
          const uint64_t b = interleaved ? head + 2 * i + 1 : head + i + half;
          const double xa = in[a], xb = in[b];
          out[a] = static_cast<float>(xa * c - xb * s);
          out[b] = static_cast<float>(xa * s + xb * c);
        }
      }
    }
    return {};
  }};
}

Result<BoundKernel> rope(const KernelNode& node) { return rope_kernel(node, false); }
Result<BoundKernel> rope_factors(const KernelNode& node) { return rope_kernel(node, true); }
Result<BoundKernel> rope_scaled(const KernelNode& node) { return rope_kernel(node, false, true); }

Result<BoundKernel> add_bias(const KernelNode& node) {
  FERRITE_ASSIGN_OR_RETURN(const RowShape shape, add_bias_shape(node));
  const KernelTensor x = node.inputs[0], bias = node.inputs[1], y = node.outputs[0];
  return BoundKernel{[=](uint64_t tokens) -> Result<void> {
    tokens = std::min(tokens, shape.capacity);
    for (uint64_t t = 0; t < tokens; ++t) {
      for (uint64_t i = 0; i < shape.width; ++i) {
        y.as<float>()[t * shape.width + i] =
            x.as<float>()[t * shape.width + i] + bias.as<float>()[i];
      }
    }
    return {};
  }};
}

Result<BoundKernel> head_rms_norm(const KernelNode& node) {
  FERRITE_ASSIGN_OR_RETURN(const HeadNormShape shape, head_norm_shape(node));
  const KernelTensor x = node.inputs[0], w = node.inputs[1], y = node.outputs[0];
  return BoundKernel{[=](uint64_t tokens) -> Result<void> {
    tokens = std::min(tokens, shape.capacity);
    const uint64_t n = shape.head_dim;
    for (uint64_t start = 0; start < tokens * shape.width; start += n) {
      const float* row = x.as<float>() + start;
      double sum = 0;
      for (uint64_t i = 0; i < n; ++i) sum += static_cast<double>(row[i]) * row[i];
      const double scale = 1.0 / std::sqrt(sum / static_cast<double>(n) + shape.epsilon);
      float* out = y.as<float>() + start;
      for (uint64_t i = 0; i < n; ++i) {
        out[i] = static_cast<float>(row[i] * scale * w.as<float>()[i]);
      }
    }
    return {};
  }};
}

// Causal attention over the cache rows first_visible_row(pos, window) ..
// pos, scores scaled by 1/sqrt(scale_base) (attention: head_dim, window 0).
Result<BoundKernel> attention_kernel(const KernelNode& node, const AttentionShape& shape,
                                     uint64_t scale_base, uint64_t window) {
  const uint64_t n_heads = shape.n_heads, n_kv_heads = shape.n_kv_heads,
                 head_dim = shape.head_dim, capacity = shape.capacity, q_width = shape.q_width,
                 context = shape.context;
  const AttentionOperands operands = attention_operands(node);
  const KernelTensor q = operands.q, k_cache = operands.k_cache, v_cache = operands.v_cache,
                     out = operands.out;
  // Scores for one head over the whole context, in the node's planned
  // scratch (reference_scratch below declares it).
  if (node.scratch == nullptr || node.scratch_bytes / sizeof(double) < context ||
      reinterpret_cast<uintptr_t>(node.scratch) % alignof(double) != 0) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "node `{}`: the plan gives {} bytes of scratch; attention over a context "
                      "of {} needs {}",
                      node.node_id->str(), node.scratch == nullptr ? 0 : node.scratch_bytes,
                      context, context * sizeof(double))
        .with_field("node_id", node.node_id->str());
  }
  double* const scores = reinterpret_cast<double*>(node.scratch);
  const NodeId* id = node.node_id;
  return BoundKernel{[=, &node_id = *id](uint64_t tokens) -> Result<void> {
    tokens = std::min(tokens, capacity);
    const uint64_t group = n_heads / n_kv_heads;
    const double scale = 1.0 / std::sqrt(static_cast<double>(scale_base));
    for (uint64_t t = 0; t < tokens; ++t) {
      FERRITE_ASSIGN_OR_RETURN(const KvRowAt at, append_kv_row(node_id, shape, operands, t));
      const uint64_t pos = at.pos, slot = at.slot;
      const uint64_t first = first_visible_row(pos, window);
      for (uint64_t h = 0; h < n_heads; ++h) {
        const uint64_t kv = (h / group) * head_dim;
        const float* query = q.as<float>() + t * q_width + h * head_dim;
        double max_score = -INFINITY;
        for (uint64_t p = first; p <= pos; ++p) {
          const float* key = kv_row(k_cache, shape, slot, p) + kv;
          double dot = 0;
          for (uint64_t i = 0; i < head_dim; ++i) dot += static_cast<double>(query[i]) * key[i];
          scores[p] = dot * scale;
          max_score = std::max(max_score, scores[p]);
        }
        double total = 0;
        for (uint64_t p = first; p <= pos; ++p) {
          scores[p] = std::exp(scores[p] - max_score);
          total += scores[p];
        }
        float* result = out.as<float>() + t * q_width + h * head_dim;
        for (uint64_t i = 0; i < head_dim; ++i) {
          double acc = 0;
          for (uint64_t p = first; p <= pos; ++p) {
            acc += scores[p] * kv_row(v_cache, shape, slot, p)[kv + i];
          }
          result[i] = static_cast<float>(acc / total);
        }
      }
    }
    return {};
  }};
}

Result<BoundKernel> attention(const KernelNode& node) {
  FERRITE_ASSIGN_OR_RETURN(const AttentionShape shape, attention_shape(node));
  return attention_kernel(node, shape, shape.head_dim, 0);
}

Result<BoundKernel> sliding_attention(const KernelNode& node) {
  FERRITE_ASSIGN_OR_RETURN(const SlidingAttentionShape shape, sliding_attention_shape(node));
  return attention_kernel(node, shape.heads, shape.scale_base, shape.window);
}

// GELU with the tanh approximation, in double:
// 0.5 g (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3))).
Result<BoundKernel> geglu(const KernelNode& node) {
  FERRITE_ASSIGN_OR_RETURN(const RowShape shape, elementwise_shape(node));
  const KernelTensor gate = node.inputs[0], up = node.inputs[1], y = node.outputs[0];
  return BoundKernel{[=](uint64_t tokens) -> Result<void> {
    const uint64_t n = std::min(tokens, shape.capacity) * shape.width;
    const double k = std::sqrt(2.0 / 3.14159265358979323846);
    for (uint64_t i = 0; i < n; ++i) {
      const double g = gate.as<float>()[i];
      const double gelu = 0.5 * g * (1.0 + std::tanh(k * (g + 0.044715 * g * g * g)));
      y.as<float>()[i] = static_cast<float>(gelu * up.as<float>()[i]);
    }
    return {};
  }};
}

Result<BoundKernel> scale(const KernelNode& node) {
  FERRITE_ASSIGN_OR_RETURN(double factor, rational_attribute(node, "factor"));
  FERRITE_ASSIGN_OR_RETURN(const RowShape shape, elementwise_shape(node));
  const KernelTensor x = node.inputs[0], y = node.outputs[0];
  return BoundKernel{[=](uint64_t tokens) -> Result<void> {
    const uint64_t n = std::min(tokens, shape.capacity) * shape.width;
    for (uint64_t i = 0; i < n; ++i) {
      y.as<float>()[i] = static_cast<float>(x.as<float>()[i] * factor);
    }
    return {};
  }};
}

Result<BoundKernel> swiglu(const KernelNode& node) {
  const KernelTensor gate = node.inputs[0], up = node.inputs[1], y = node.outputs[0];
  const uint64_t capacity = dim(gate, 0), width = dim(gate, 1);
  return BoundKernel{[=](uint64_t tokens) -> Result<void> {
    const uint64_t n = std::min(tokens, capacity) * width;
    for (uint64_t i = 0; i < n; ++i) {
      const double g = gate.as<float>()[i];
      y.as<float>()[i] = static_cast<float>(g / (1.0 + std::exp(-g)) * up.as<float>()[i]);
    }
    return {};
  }};
}

Result<BoundKernel> add(const KernelNode& node) {
  const KernelTensor a = node.inputs[0], b = node.inputs[1], y = node.outputs[0];
  const uint64_t capacity = dim(a, 0), width = dim(a, 1);
  return BoundKernel{[=](uint64_t tokens) -> Result<void> {
    const uint64_t n = std::min(tokens, capacity) * width;
    for (uint64_t i = 0; i < n; ++i) y.as<float>()[i] = a.as<float>()[i] + b.as<float>()[i];
    return {};
  }};
}

// Output row s is input row rows[s], for the first min(tokens, S) rows; a
// row index at or past the step's tokens is an error naming the node.
Result<BoundKernel> gather_rows(const KernelNode& node) {
  FERRITE_ASSIGN_OR_RETURN(const GatherShape shape, gather_shape(node));
  const KernelTensor x = node.inputs[0], rows = node.inputs[1], y = node.outputs[0];
  const NodeId* id = node.node_id;
  return BoundKernel{[=, &node_id = *id](uint64_t tokens) -> Result<void> {
    tokens = std::min(tokens, shape.capacity);
    const uint64_t count = std::min(tokens, shape.rows);
    for (uint64_t s = 0; s < count; ++s) {
      FERRITE_ASSIGN_OR_RETURN(const uint32_t row, gathered_row(node_id, rows, s, tokens));
      std::copy_n(x.as<float>() + row * shape.width, shape.width,
                  y.as<float>() + s * shape.width);
    }
    return {};
  }};
}

Result<BoundKernel> take_last_token(const KernelNode& node) {
  const KernelTensor x = node.inputs[0], y = node.outputs[0];
  const uint64_t capacity = dim(x, 0), width = dim(x, 1);
  return BoundKernel{[=](uint64_t tokens) -> Result<void> {
    tokens = std::clamp<uint64_t>(tokens, 1, capacity);
    std::copy_n(x.as<float>() + (tokens - 1) * width, width, y.as<float>());
    return {};
  }};
}

// Attention's scores: one double per row of the K cache (input 4; 5 for
// sequence attention).
std::optional<ProviderWorkspaceRequirement> reference_scratch(std::string_view op) {
  const bool sequence = op == "sequence_attention" || op == "sequence_sliding_attention";
  if (op != "attention" && op != "sliding_attention" && !sequence) return std::nullopt;
  WorkspaceShape shape;
  const uint32_t k_cache = sequence ? 5 : 4;
  shape.terms = {{sizeof(double),
                  {WorkspaceShapeFactor{.source = WorkspaceShapeSource::kTokenRows,
                                        .role = ValueBindingRole::kInput,
                                        .ordinal = k_cache, .axis = 0, .attribute = {},
                                        .divisor = 1}}}};
  return ProviderWorkspaceRequirement{std::move(shape), 64, ProviderWorkspaceScope::kInvocation,
                                      DynamicStorageRequirement::contiguous()};
}

}  // namespace

Result<void> add_cpu_reference_providers(CpuProviderRegistry& registry) {
  FERRITE_ASSIGN_OR_RETURN(auto operations, operation_descriptors());
  const std::map<OpKind, KernelFactory> factories{
      {OpKind::kAdd, add},
      {OpKind::kAddBias, add_bias},
      {OpKind::kAttention, attention},
      {OpKind::kGatherRows, gather_rows},
      {OpKind::kGeglu, geglu},
      {OpKind::kHeadRmsNorm, head_rms_norm},
      {OpKind::kLinear, linear},
      {OpKind::kRmsNorm, rms_norm},
      {OpKind::kRope, rope},
      {OpKind::kRopeFactors, rope_factors},
      {OpKind::kRopeScaled, rope_scaled},
      {OpKind::kScale, scale},
      {OpKind::kSequenceAttention, attention},
      {OpKind::kSequenceSlidingAttention, sliding_attention},
      {OpKind::kSlidingAttention, sliding_attention},
      {OpKind::kSwiglu, swiglu},
      {OpKind::kTakeLastToken, take_last_token},
      {OpKind::kTokenEmbedding, token_embedding}};
  for (auto& op : operations) {
    auto factory = factories.find(*find_op_kind(op.id));
    if (factory == factories.end()) {
      return make_error(ErrorCode::kInvalidArgument, "no reference kernel for `{}`", op.id.str());
    }
    const std::string name(op.id.str().substr(std::string_view("operation.").size()));
    FERRITE_RETURN_IF_ERROR(registry.add(CpuProviderSpec{
        .provider_id = ProviderId::literal(fmt::format("{}.{}", kCpuReferenceProviderPrefix, name)),
        .operation = std::move(op),
        .version = {1, 0},
        .revision = "1",
        .capabilities = {CapabilityId::literal("capability.f32")},
        .weight_formats = {WeightFormatId::literal("weight-format.dense"),
                           WeightFormatId::literal(kGgmlBlocksWeightFormatId)},
        .quantization_formats = {QuantizationFormatId::literal(kGgmlQ8_0FormatId),
                                 QuantizationFormatId::literal(kGgmlQ4_0FormatId),
                                 QuantizationFormatId::literal(kGgmlQ4_1FormatId),
                                 QuantizationFormatId::literal(kGgmlQ5_0FormatId),
                                 QuantizationFormatId::literal(kGgmlQ5_1FormatId),
                                 QuantizationFormatId::literal(kGgmlQ4_KFormatId),
                                 QuantizationFormatId::literal(kGgmlQ5_KFormatId),
                                 QuantizationFormatId::literal(kGgmlQ6_KFormatId)},
        .estimate = DeclarativeEstimateSpec{.value_alignment_bytes = 64,
                                            .scratch = reference_scratch(name),
                                            .binding = std::nullopt,
                                            .persistent = std::nullopt},
        .factory = factory->second}));
  }
  return {};
}

NamedProvider cpu_reference_provider() {
  return NamedProvider{
      .name = "reference",
      .id_prefix = std::string(kCpuReferenceProviderPrefix),
      .summary = "cpu.reference: plain f32 kernels accumulating in double (the yardstick)",
      .allocator = host_allocator(),
      .fallbacks = {},
      .add_kernels = [](CpuProviderRegistry& kernels,
                        const ProviderSettings&) { return add_cpu_reference_providers(kernels); },
      .instruction_set = [](const ProviderSettings&) -> Result<std::string> { return "portable"; },
      .describe = [](const ProviderSettings&) -> Result<std::string> { return "cpu.reference"; }};
}

}  // namespace ferrite
