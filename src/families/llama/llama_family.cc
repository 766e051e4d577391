#include "families/llama/llama_family.h"

#include "ferrite/core/checked_math.h"

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ferrite/models/ggml_blocks.h"
#include "ferrite/operations/operation_builders.h"
#include "ferrite/program/program_builder.h"

namespace ferrite {
namespace {

ProgramTensorSpec f32(std::vector<uint64_t> dims) {
  return {std::move(dims), ElementType::kF32, ContiguousLayout{}};
}

// (weight id, dims), sorted by id.
std::vector<std::pair<std::string, std::vector<uint64_t>>> llama_weights(const LlamaConfig& c) {
  const uint64_t kDim = c.dim, kQDim = c.q_dim(), kKvDim = c.kv_dim(), kHidden = c.hidden_dim,
                 kVocab = c.vocab_size;
  std::vector<std::pair<std::string, std::vector<uint64_t>>> out{
      {"weight.token_embd", {kVocab, kDim}},
      {"weight.output_norm", {kDim}},
      {"weight.output", {kVocab, kDim}}};
  if (c.rope_freq_factors) out.push_back({"weight.rope_freqs", {c.head_dim() / 2}});
  for (uint64_t i = 0; i < c.n_layers; ++i) {
    const std::string b = fmt::format("weight.blk.{}.", i);
    out.push_back({b + "attn_norm", {kDim}});
    out.push_back({b + "attn_q", {kQDim, kDim}});
    out.push_back({b + "attn_k", {kKvDim, kDim}});
    out.push_back({b + "attn_v", {kKvDim, kDim}});
    out.push_back({b + "attn_output", {kDim, kQDim}});
    if (c.qkv_bias) {
      out.push_back({b + "attn_q.bias", {kQDim}});
      out.push_back({b + "attn_k.bias", {kKvDim}});
      out.push_back({b + "attn_v.bias", {kKvDim}});
    }
    if (c.qk_norm) {
      out.push_back({b + "attn_q_norm", {c.head_dim()}});
      out.push_back({b + "attn_k_norm", {c.head_dim()}});
    }
    out.push_back({b + "ffn_norm", {kDim}});
    out.push_back({b + "ffn_gate", {kHidden, kDim}});
    out.push_back({b + "ffn_up", {kHidden, kDim}});
    out.push_back({b + "ffn_down", {kDim, kHidden}});
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string component_id(const std::string& weight) { return "component." + weight.substr(7); }

// One weight: dense f32, or stored in the block-quantized format the config
// names for it (validated by build_llama_family: a known format, a matrix,
// whole blocks).
ValueRef add_weight(ProgramBuilder& b, const std::string& id, const std::vector<uint64_t>& dims,
                    const std::map<std::string, std::string>& block_formats) {
  // GGUF names: `<name>.weight`, or a bias's own `<name>.bias`.
  const std::string external = id.ends_with(".bias") ? id.substr(7) : id.substr(7) + ".weight";
  auto block = block_formats.find(id);
  if (block == block_formats.end()) {
    return b.dense_f32_weight(id, "value." + id, dims, component_id(id), external);
  }
  const GgmlBlockFormat& format = *ggml_block_format(block->second);
  const WeightId component = WeightId::literal(component_id(id));
  return b.weight(id, "value." + id, f32(dims), WeightStorage{
      .components = {WeightComponentSpec{
          .id = component,
          .role = WeightComponentRole::kPackedValues,
          .external_names = {external},
          .dimensions = {dims[0], dims[1] / format.values_per_block},
          .encoding = BlockQuantizedEncoding{QuantizationFormatId::literal(format.format_id),
                                             format.values_per_block, format.bytes_per_block},
          .required = true}},
      .layout = BlockQuantizedLayout{component, 1}});
}

// LlamaConfig::validate without the "llama config" context of its errors.
Result<void> check_llama_config(const LlamaConfig& c) {
  if (c.dim == 0 || c.hidden_dim == 0 || c.n_layers == 0 || c.n_heads == 0 || c.n_kv_heads == 0 ||
      c.vocab_size == 0 || c.context_length == 0) {
    return make_error(ErrorCode::kInvalidModelConfig, "every size must be positive");
  }
  if (c.dim > 65536 || c.hidden_dim > 65536 || c.n_layers > 1024 || c.vocab_size > (1u << 20) ||
      c.context_length > (1u << 20)) {
    return make_error(ErrorCode::kInvalidModelConfig,
                      "sizes exceed the caps (dim {}, hidden {}, layers {}, vocab {}, context {})",
                      c.dim, c.hidden_dim, c.n_layers, c.vocab_size, c.context_length);
  }
  if ((c.attention_head_dim == 0 && c.dim % c.n_heads != 0) || c.n_heads % c.n_kv_heads != 0 ||
      c.head_dim() % 2 != 0 || c.head_dim() > 4096 || c.n_heads > 4096) {
    return make_error(ErrorCode::kInvalidModelConfig,
                      "dim {} / heads {} / kv heads {} do not give an even head size "
                      "shared by whole groups",
                      c.dim, c.n_heads, c.n_kv_heads);
  }
  for (const auto& [name, text] :
       {std::pair{"norm_eps", &c.norm_eps}, {"rope_theta", &c.rope_theta}}) {
    auto value = CanonicalRational::parse_decimal(*text);
    if (!value || value->numerator() <= 0) {
      return make_error(ErrorCode::kInvalidModelConfig, "{} `{}` must be > 0", name, *text);
    }
  }
  if (c.family.empty() || c.family.size() > 64 ||
      !std::all_of(c.family.begin(), c.family.end(), [](char ch) {
        return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_';
      })) {
    return make_error(ErrorCode::kInvalidModelConfig,
                      "family name `{}` is not 1-64 of [a-z0-9_]", c.family);
  }
  if (c.rope_convention != "interleaved" && c.rope_convention != "half_split") {
    return make_error(ErrorCode::kInvalidModelConfig,
                      "rope convention `{}` is not interleaved or half_split", c.rope_convention);
  }
  return {};
}

}  // namespace

Result<void> LlamaConfig::validate() const {
  FERRITE_RETURN_IF_ERROR(check_llama_config(*this), "llama config");
  return {};
}

Result<PreparedModelFamily> build_llama_family(const LlamaConfig& c) {
  FERRITE_RETURN_IF_ERROR(c.validate());
  const uint64_t kHeadDim = c.head_dim(), kKvDim = c.kv_dim();
  // The KV caches are token-scaled states: one f32 row of kv_dim per token.
  const auto kv_row = checked_mul(kKvDim, uint64_t{sizeof(float)});
  if (!kv_row) return make_error(ErrorCode::kInvalidArgument, "kv_dim overflows");
  const auto weights = llama_weights(c);
  // Block-quantized matrices: known formats, on matrices of whole blocks.
  for (const auto& [id, format_id] : c.block_formats) {
    const GgmlBlockFormat* format = ggml_block_format(format_id);
    // `weights` is sorted by id (llama_weights).
    auto it = std::lower_bound(weights.begin(), weights.end(), id,
                               [](const auto& w, const std::string& key) { return w.first < key; });
    if (format == nullptr || it == weights.end() || it->first != id || it->second.size() != 2 ||
        it->second[1] % format->values_per_block != 0) {
      return make_error(ErrorCode::kInvalidModelConfig,
                        "llama config: weight `{}` cannot be stored as `{}` (a known "
                        "block format, on a matrix whose rows are whole blocks)",
                        id, format_id);
    }
  }

  ProgramBuilder b("family." + c.family);
  const ValueRef tokens = b.input(kDecoderTokens);
  const ValueRef positions = b.input(kDecoderPositions);
  std::map<std::string, ValueRef> weight;  // by weight id
  for (const auto& [id, dims] : weights) {
    weight[id] = add_weight(b, id, dims, c.block_formats);
  }
  const RopeAttributes rope_attributes{kHeadDim, c.rope_theta, c.rope_convention};
  const AttentionAttributes attention_attributes{c.n_heads, c.n_kv_heads, kHeadDim};

  b.block("block.embed");
  ValueRef x = token_embedding(b, {"node.token_embd", "value.embed"}, tokens,
                               weight["weight.token_embd"]);
  for (uint64_t i = 0; i < c.n_layers; ++i) {
    const std::string blk = fmt::format("blk.{}.", i);
    // Node `node.blk.i.<node>` writes `value.blk.i.<output>`.
    auto at = [&](const char* node, const char* output) {
      return Named{"node." + blk + node, "value." + blk + output};
    };
    auto w = [&](const char* name) { return weight["weight." + blk + name]; };
    ValueRef caches[2];
    for (int k = 0; k < 2; ++k) {
      const std::string kind = k == 0 ? "k_cache" : "v_cache";
      caches[k] = b.state("state." + blk + kind, "value." + blk + kind, f32({kKvDim}),
                          StateLifetime::kSequence,
                          StateCapacityTokenScaled{*kv_row, c.context_length},
                          StateInitialization::kZero);
    }
    b.block(fmt::format("block.layer.{}", i));
    const ValueRef norm = rms_norm(b, at("attn_norm", "attn_norm"), x, w("attn_norm"), c.norm_eps);
    ValueRef q = linear(b, at("attn_q", "q"), norm, w("attn_q"));
    ValueRef k = linear(b, at("attn_k", "k"), norm, w("attn_k"));
    ValueRef v = linear(b, at("attn_v", "v"), norm, w("attn_v"));
    if (c.qkv_bias) {
      q = add_bias(b, at("attn_q_bias", "q_bias"), q, w("attn_q.bias"));
      k = add_bias(b, at("attn_k_bias", "k_bias"), k, w("attn_k.bias"));
      v = add_bias(b, at("attn_v_bias", "v_bias"), v, w("attn_v.bias"));
    }
    if (c.qk_norm) {
      q = head_rms_norm(b, at("attn_q_norm", "q_norm"), q, w("attn_q_norm"), c.norm_eps, kHeadDim);
      k = head_rms_norm(b, at("attn_k_norm", "k_norm"), k, w("attn_k_norm"), c.norm_eps, kHeadDim);
    }
    auto turn = [&](const char* node, const char* output, ValueRef in) {
      if (!c.rope_freq_factors) return rope(b, at(node, output), in, positions, rope_attributes);
      return rope_factors(b, at(node, output), in, positions, weight["weight.rope_freqs"],
                          rope_attributes);
    };
    const ValueRef q_rope = turn("rope_q", "q_rope", q);
    const ValueRef k_rope = turn("rope_k", "k_rope", k);
    const ValueRef att = attention(b, at("attention", "attention"), q_rope, k_rope, v, positions,
                                   caches[0], caches[1], attention_attributes);
    const ValueRef att_out = linear(b, at("attn_output", "attn_output"), att, w("attn_output"));
    const ValueRef residual = add(b, at("attn_residual", "attn_residual"), x, att_out);
    const ValueRef ffn_norm = rms_norm(b, at("ffn_norm", "ffn_norm"), residual, w("ffn_norm"),
                                       c.norm_eps);
    const ValueRef gate = linear(b, at("ffn_gate", "ffn_gate"), ffn_norm, w("ffn_gate"));
    const ValueRef up = linear(b, at("ffn_up", "ffn_up"), ffn_norm, w("ffn_up"));
    const ValueRef glu = swiglu(b, at("swiglu", "swiglu"), gate, up);
    const ValueRef down = linear(b, at("ffn_down", "ffn_down"), glu, w("ffn_down"));
    x = add(b, at("ffn_residual", "ffn_residual"), residual, down);
  }
  b.block("block.head");
  const ValueRef last = take_last_token(
      b, {"node.take_last_token", "value.last_token", NodeWork::kTokensOfInput}, x);
  const ValueRef norm = rms_norm(b, {"node.output_norm", "value.output_norm", NodeWork::kFixed},
                                 last, weight["weight.output_norm"], c.norm_eps);
  b.output(linear(b, {"node.output", std::string(kDecoderLogits), NodeWork::kFixed}, norm,
                  weight["weight.output"]));

  nlohmann::json config = {
      {"dim", c.dim},
      {"hidden_dim", c.hidden_dim},
      {"n_layers", c.n_layers},
      {"n_heads", c.n_heads},
      {"n_kv_heads", c.n_kv_heads},
      {"vocab_size", c.vocab_size},
      {"context_length", c.context_length},
      {"norm_eps", c.norm_eps},
      {"rope_theta", c.rope_theta},
      {"rope_convention", c.rope_convention},
      {"tied_output", c.tied_output}};
  if (!c.block_formats.empty()) config["block_formats"] = c.block_formats;
  // The variants, stated only when set (a plain Llama's config is unchanged).
  if (c.family != "llama") config["family"] = c.family;
  if (c.attention_head_dim != 0) config["attention_head_dim"] = c.attention_head_dim;
  if (c.rope_freq_factors) config["rope_freq_factors"] = true;
  if (c.qkv_bias) config["qkv_bias"] = true;
  if (c.qk_norm) config["qk_norm"] = true;
  return std::move(b).finish(
      {WeightFormatId::literal(c.block_formats.empty() ? std::string_view("weight-format.dense")
                                                       : kGgmlBlocksWeightFormatId),
       WeightLayoutId::literal("weight-layout." + c.family), {1, 0}},
      std::move(config));
}


}  // namespace ferrite
