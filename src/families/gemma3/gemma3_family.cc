#include "families/gemma3/gemma3_family.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ferrite/core/checked_math.h"
#include "ferrite/models/ggml_blocks.h"
#include "ferrite/operations/operation_builders.h"
#include "ferrite/program/program_builder.h"
#include "ferrite/runtime/generation.h"

namespace ferrite {
namespace {

using WeightList = std::vector<std::pair<std::string, std::vector<uint64_t>>>;

// The per-layer tensors (GGUF names without `.weight`) and their shapes.
WeightList gemma3_weights(const Gemma3Config& c) {
  const uint64_t kDim = c.dim, kQ = c.q_dim(), kKv = c.kv_dim(), kFfn = c.hidden_dim;
  WeightList out{{"weight.token_embd", {c.vocab_size, kDim}},
                 {"weight.output_norm", {kDim}},
                 {"weight.output", {c.vocab_size, kDim}}};
  for (uint64_t i = 0; i < c.n_layers; ++i) {
    const std::string b = fmt::format("weight.blk.{}.", i);
    out.push_back({b + "attn_norm", {kDim}});
    out.push_back({b + "attn_q", {kQ, kDim}});
    out.push_back({b + "attn_k", {kKv, kDim}});
    out.push_back({b + "attn_v", {kKv, kDim}});
    out.push_back({b + "attn_q_norm", {c.head_dim}});
    out.push_back({b + "attn_k_norm", {c.head_dim}});
    out.push_back({b + "attn_output", {kDim, kQ}});
    out.push_back({b + "post_attention_norm", {kDim}});
    out.push_back({b + "ffn_norm", {kDim}});
    out.push_back({b + "ffn_gate", {kFfn, kDim}});
    out.push_back({b + "ffn_up", {kFfn, kDim}});
    out.push_back({b + "ffn_down", {kDim, kFfn}});
    out.push_back({b + "post_ffw_norm", {kDim}});
  }
  std::sort(out.begin(), out.end());
  return out;
}

constexpr const char* kLayerTensors[] = {
    "attn_norm", "attn_q",   "attn_k", "attn_v",   "attn_q_norm", "attn_k_norm",  "attn_output",
    "post_attention_norm",   "ffn_norm", "ffn_gate", "ffn_up",    "ffn_down",   "post_ffw_norm"};

ProgramTensorSpec f32(std::vector<uint64_t> dims) {
  return {std::move(dims), ElementType::kF32, ContiguousLayout{}};
}

// A weight: dense f32, or the block format the config names for it.
ValueRef add_weight(ProgramBuilder& b, const std::string& id, const std::vector<uint64_t>& dims,
                    const std::map<std::string, std::string>& block_formats) {
  const std::string component = "component." + id.substr(7);
  const std::string external = id.substr(7) + ".weight";
  auto block = block_formats.find(id);
  if (block == block_formats.end()) {
    return b.dense_f32_weight(id, "value." + id, dims, component, external);
  }
  const GgmlBlockFormat& format = *ggml_block_format(block->second);
  const WeightId component_id = WeightId::literal(component);
  return b.weight(id, "value." + id, f32(dims), WeightStorage{
      .components = {WeightComponentSpec{
          .id = component_id,
          .role = WeightComponentRole::kPackedValues,
          .external_names = {external},
          .dimensions = {dims[0], dims[1] / format.values_per_block},
          .encoding = BlockQuantizedEncoding{QuantizationFormatId::literal(format.format_id),
                                             format.values_per_block, format.bytes_per_block},
          .required = true}},
      .layout = BlockQuantizedLayout{component_id, 1}});
}

Error config_error(std::string message) {
  return make_error(ErrorCode::kInvalidModelConfig, "gemma3 config: {}", message);
}

}  // namespace

std::string Gemma3Config::embedding_scale() const {
  // sqrtf(dim) = m · 2^(e - 24) with m < 2^24 an integer (frexp: [0.5, 1)).
  const float root = std::sqrt(static_cast<float>(dim));
  int exponent = 0;
  const double mantissa = std::frexp(static_cast<double>(root), &exponent);
  auto numerator = static_cast<uint64_t>(std::ldexp(mantissa, 24));
  int shift = 24 - exponent;  // dim ≤ 65536: root ≤ 256, exponent ≤ 9
  while (shift > 0 && numerator % 2 == 0) {  // lowest terms: "16", not "8388608/524288"
    numerator /= 2;
    --shift;
  }
  if (shift <= 0) return fmt::format("{}", numerator << -shift);
  return fmt::format("{}/{}", numerator, uint64_t{1} << shift);
}

Result<void> Gemma3Config::validate() const {
  if (dim == 0 || hidden_dim == 0 || n_layers == 0 || n_heads == 0 || n_kv_heads == 0 ||
      head_dim == 0 || vocab_size == 0 || context_length == 0 || query_scale_base == 0) {
    return config_error("every size must be positive");
  }
  if (dim > 65536 || hidden_dim > 65536 || n_layers > 1024 || vocab_size > (1u << 20) ||
      context_length > (1u << 20) || head_dim > 4096 || n_heads > 4096 ||
      query_scale_base > (1u << 24) || sliding_window > (1u << 20)) {
    return config_error(fmt::format(
        "sizes exceed the caps (dim {}, hidden {}, layers {}, vocab {}, context {}, head {}, "
        "heads {}, query scale base {}, window {})",
        dim, hidden_dim, n_layers, vocab_size, context_length, head_dim, n_heads,
        query_scale_base, sliding_window));
  }
  if (n_heads % n_kv_heads != 0 || head_dim % 2 != 0) {
    return config_error(fmt::format(
        "heads {} / kv heads {} / head size {}: the KV heads must divide the heads and the head "
        "size be even",
        n_heads, n_kv_heads, head_dim));
  }
  if (sliding_layers.size() != n_layers) {
    return config_error(fmt::format("{} sliding-window flags for {} layers",
                                    sliding_layers.size(), n_layers));
  }
  for (const auto& [name, text] : {std::pair{"norm_eps", &norm_eps},
                                   {"rope_theta", &rope_theta},
                                   {"rope_theta_local", &rope_theta_local},
                                   {"rope_scale", &rope_scale}}) {
    auto value = CanonicalRational::parse_decimal(*text);
    if (!value || value->numerator() <= 0) {
      return config_error(fmt::format("{} `{}` must be > 0", name, *text));
    }
  }
  return {};
}

Result<PreparedModelFamily> build_gemma3_family(const Gemma3Config& c) {
  FERRITE_RETURN_IF_ERROR(c.validate());
  const auto kv_row = checked_mul(c.kv_dim(), uint64_t{sizeof(float)});
  if (!kv_row) return config_error("kv_dim overflows");
  const WeightList weights = gemma3_weights(c);
  for (const auto& [id, format_id] : c.block_formats) {
    const GgmlBlockFormat* format = ggml_block_format(format_id);
    auto it = std::lower_bound(weights.begin(), weights.end(), id,
                               [](const auto& w, const std::string& key) { return w.first < key; });
    if (format == nullptr || it == weights.end() || it->first != id || it->second.size() != 2 ||
        it->second[1] % format->values_per_block != 0) {
      return config_error(fmt::format(
          "weight `{}` cannot be stored as `{}` (a known block format, on a matrix whose rows "
          "are whole blocks)",
          id, format_id));
    }
  }

  ProgramBuilder b("family.gemma3");
  const ValueRef tokens = b.input(kDecoderTokens);
  const ValueRef positions = b.input(kDecoderPositions);
  std::map<std::string, ValueRef> weight;
  for (const auto& [id, dims] : weights) weight[id] = add_weight(b, id, dims, c.block_formats);

  b.block("block.embed");
  const ValueRef embedded = token_embedding(b, {"node.token_embd", "value.embed"}, tokens,
                                            weight["weight.token_embd"]);
  ValueRef x = scale(b, {"node.embed_scale", "value.embed_scaled"}, embedded, c.embedding_scale());
  for (uint64_t i = 0; i < c.n_layers; ++i) {
    const std::string blk = fmt::format("blk.{}.", i);
    auto at = [&](const char* node, const char* output) {
      return Named{"node." + blk + node, "value." + blk + output};
    };
    auto w = [&](const char* name) { return weight["weight." + blk + name]; };
    ValueRef caches[2];
    for (int k = 0; k < 2; ++k) {
      const std::string kind = k == 0 ? "k_cache" : "v_cache";
      caches[k] = b.state("state." + blk + kind, "value." + blk + kind, f32({c.kv_dim()}),
                          StateLifetime::kSequence,
                          StateCapacityTokenScaled{*kv_row, c.context_length},
                          StateInitialization::kZero);
    }
    const bool sliding = c.sliding_layers[i];
    const RopeAttributes rope_attributes{
        c.head_dim, sliding ? c.rope_theta_local : c.rope_theta, "half_split"};
    b.block(fmt::format("block.layer.{}", i));
    const ValueRef norm = rms_norm(b, at("attn_norm", "attn_norm"), x, w("attn_norm"), c.norm_eps);
    ValueRef q = linear(b, at("attn_q", "q"), norm, w("attn_q"));
    ValueRef k = linear(b, at("attn_k", "k"), norm, w("attn_k"));
    const ValueRef v = linear(b, at("attn_v", "v"), norm, w("attn_v"));
    q = head_rms_norm(b, at("attn_q_norm", "q_norm"), q, w("attn_q_norm"), c.norm_eps, c.head_dim);
    k = head_rms_norm(b, at("attn_k_norm", "k_norm"), k, w("attn_k_norm"), c.norm_eps, c.head_dim);
    auto turn = [&](const char* node, const char* output, ValueRef in) {
      if (sliding || c.rope_scale == "1") {
        return rope(b, at(node, output), in, positions, rope_attributes);
      }
      return rope_scaled(b, at(node, output), in, positions, rope_attributes, c.rope_scale);
    };
    q = turn("rope_q", "q_rope", q);
    k = turn("rope_k", "k_rope", k);
    const ValueRef att = sliding_attention(
        b, at("attention", "attention"), q, k, v, positions, caches[0], caches[1],
        {{c.n_heads, c.n_kv_heads, c.head_dim}, c.query_scale_base,
         sliding ? c.sliding_window : 0});
    const ValueRef att_out = linear(b, at("attn_output", "attn_output"), att, w("attn_output"));
    const ValueRef att_post = rms_norm(b, at("post_attention_norm", "attn_post_norm"), att_out,
                                       w("post_attention_norm"), c.norm_eps);
    const ValueRef residual = add(b, at("attn_residual", "attn_residual"), x, att_post);
    const ValueRef ffn_in = rms_norm(b, at("ffn_norm", "ffn_norm"), residual, w("ffn_norm"),
                                     c.norm_eps);
    const ValueRef gate = linear(b, at("ffn_gate", "ffn_gate"), ffn_in, w("ffn_gate"));
    const ValueRef up = linear(b, at("ffn_up", "ffn_up"), ffn_in, w("ffn_up"));
    const ValueRef glu = geglu(b, at("geglu", "geglu"), gate, up);
    const ValueRef down = linear(b, at("ffn_down", "ffn_down"), glu, w("ffn_down"));
    const ValueRef ffn_post = rms_norm(b, at("post_ffw_norm", "ffn_post_norm"), down,
                                       w("post_ffw_norm"), c.norm_eps);
    x = add(b, at("ffn_residual", "ffn_residual"), residual, ffn_post);
  }
  b.block("block.head");
  const ValueRef last = take_last_token(
      b, {"node.take_last_token", "value.last_token", NodeWork::kTokensOfInput}, x);
  const ValueRef norm = rms_norm(b, {"node.output_norm", "value.output_norm", NodeWork::kFixed},
                                 last, weight["weight.output_norm"], c.norm_eps);
  b.output(linear(b, {"node.output", std::string(kDecoderLogits), NodeWork::kFixed}, norm,
                  weight["weight.output"]));

  std::string pattern;
  for (bool sliding : c.sliding_layers) pattern += sliding ? 's' : 'g';
  nlohmann::json config = {{"dim", c.dim},
                           {"hidden_dim", c.hidden_dim},
                           {"n_layers", c.n_layers},
                           {"n_heads", c.n_heads},
                           {"n_kv_heads", c.n_kv_heads},
                           {"head_dim", c.head_dim},
                           {"vocab_size", c.vocab_size},
                           {"context_length", c.context_length},
                           {"norm_eps", c.norm_eps},
                           {"rope_theta", c.rope_theta},
                           {"rope_theta_local", c.rope_theta_local},
                           {"rope_scale", c.rope_scale},
                           {"sliding_window", c.sliding_window},
                           {"layer_pattern", pattern},
                           {"query_scale_base", c.query_scale_base},
                           {"embedding_scale", c.embedding_scale()},
                           {"tied_output", c.tied_output}};
  if (!c.block_formats.empty()) config["block_formats"] = c.block_formats;
  return std::move(b).finish(
      {WeightFormatId::literal(c.block_formats.empty() ? std::string_view("weight-format.dense")
                                                       : kGgmlBlocksWeightFormatId),
       WeightLayoutId::literal("weight-layout.gemma3"), {1, 0}},
      std::move(config));
}

namespace {

// Layer i is global when i % period == period - 1 (llama.cpp's
// set_swa_pattern; Hugging Face's `(i + 1) % sliding_window_pattern`);
// period 0 or 1 ... every layer sliding for 0, none for 1.
std::vector<bool> periodic_pattern(uint64_t layers, uint64_t period) {
  std::vector<bool> out;
  const uint64_t bounded = std::min<uint64_t>(layers, 1024 + 1);  // validate() refuses more
  for (uint64_t i = 0; i < bounded; ++i) out.push_back(period == 0 || i % period < period - 1);
  return out;
}

}  // namespace

Result<Gemma3Config> gemma3_config_from_gguf(const GgufModel& m, const CheckpointTensors& stored) {
  auto key = [](const char* name) { return fmt::format("gemma3.{}", name); };
  auto refuse = [&](const std::string& name, std::string why) {
    return make_error(ErrorCode::kInvalidModelConfig, "{}: `{}` {}", m.source, name, why)
        .with_field("key", name);
  };
  Gemma3Config c;
  FERRITE_ASSIGN_OR_RETURN(c.dim, m.get_unsigned(key("embedding_length")));
  FERRITE_ASSIGN_OR_RETURN(c.hidden_dim, m.get_unsigned(key("feed_forward_length")));
  FERRITE_ASSIGN_OR_RETURN(c.n_layers, m.get_unsigned(key("block_count")));
  FERRITE_ASSIGN_OR_RETURN(c.n_heads, m.get_unsigned(key("attention.head_count")));
  c.n_kv_heads = c.n_heads;
  if (m.find(key("attention.head_count_kv")) != nullptr) {
    FERRITE_ASSIGN_OR_RETURN(c.n_kv_heads, m.get_unsigned(key("attention.head_count_kv")));
  }
  FERRITE_ASSIGN_OR_RETURN(c.context_length, m.get_unsigned(key("context_length")));
  FERRITE_ASSIGN_OR_RETURN(c.head_dim, m.get_unsigned(key("attention.key_length")));
  if (m.find(key("attention.value_length")) != nullptr) {
    FERRITE_ASSIGN_OR_RETURN(uint64_t value_length, m.get_unsigned(key("attention.value_length")));
    if (value_length != c.head_dim) {
      return refuse(key("attention.value_length"),
                    fmt::format("is {}, but attention.key_length is {} (unequal key and value "
                                "sizes are not supported)",
                                value_length, c.head_dim));
    }
  }
  // llama.cpp's rule: scores scale by 1/sqrt(key_length), except the 27B
  // (62 layers), whose query_pre_attn_scalar is embedding_length / heads.
  c.query_scale_base = c.head_dim;
  if (c.n_layers == 62 && c.n_heads != 0) c.query_scale_base = c.dim / c.n_heads;
  FERRITE_ASSIGN_OR_RETURN(double eps, m.get_float(key("attention.layer_norm_rms_epsilon")));
  c.norm_eps = decimal_text(eps);
  c.rope_theta = "10000";
  if (m.find(key("rope.freq_base")) != nullptr) {
    FERRITE_ASSIGN_OR_RETURN(double theta, m.get_float(key("rope.freq_base")));
    c.rope_theta = decimal_text(theta);
  }
  if (m.find(key("rope.freq_base_swa")) != nullptr) {
    FERRITE_ASSIGN_OR_RETURN(double theta, m.get_float(key("rope.freq_base_swa")));
    c.rope_theta_local = decimal_text(theta);
  }
  // Linear RoPE scaling of the global layers (the 4B/12B/27B: factor 8), as
  // llama.cpp reads it: rope.scaling.factor, else rope.scale_linear; 0 or 1
  // is none. Another scaling type is refused.
  for (const char* name : {"rope.scaling.factor", "rope.scale_linear"}) {
    if (m.find(key(name)) == nullptr) continue;
    FERRITE_ASSIGN_OR_RETURN(double factor, m.get_float(key(name)));
    if (!std::isfinite(factor) || factor < 0.0 || (factor > 0.0 && factor < 1.0)) {
      return refuse(key(name), fmt::format("is {}: a linear RoPE scaling factor is >= 1", factor));
    }
    if (factor > 1.0) c.rope_scale = decimal_text(factor);
    break;
  }
  if (m.find(key("rope.scaling.type")) != nullptr) {
    FERRITE_ASSIGN_OR_RETURN(std::string type, m.get_string(key("rope.scaling.type")));
    if (type != "linear" && type != "none") {
      return refuse(key("rope.scaling.type"),
                    fmt::format("is `{}`: only linear RoPE scaling is supported", type));
    }
    if (type == "none") c.rope_scale = "1";
  }
  if (m.find(key("final_logit_softcapping")) != nullptr) {
    FERRITE_ASSIGN_OR_RETURN(double cap, m.get_float(key("final_logit_softcapping")));
    if (cap != 0.0) {
      return refuse(key("final_logit_softcapping"),
                    fmt::format("is {}: logit soft-capping is not supported", cap));
    }
  }
  if (m.find(key("attention.sliding_window")) != nullptr) {
    FERRITE_ASSIGN_OR_RETURN(c.sliding_window, m.get_unsigned(key("attention.sliding_window")));
  }
  if (c.sliding_window == 0) {
    c.sliding_layers.assign(std::min<uint64_t>(c.n_layers, 1025), false);
  } else if (const GgufValue* pattern = m.find(key("attention.sliding_window_pattern"));
             pattern == nullptr) {
    c.sliding_layers = periodic_pattern(c.n_layers, 6);
  } else if (const GgufArray* flags = pattern->as<GgufArray>(); flags != nullptr) {
    const auto* bools = flags->as<bool>();
    if (bools == nullptr || bools->size() != c.n_layers) {
      return refuse(key("attention.sliding_window_pattern"),
                    fmt::format("must be a period or one bool per layer ({})", c.n_layers));
    }
    c.sliding_layers = *bools;
  } else {
    FERRITE_ASSIGN_OR_RETURN(uint64_t period,
                             m.get_unsigned(key("attention.sliding_window_pattern")));
    c.sliding_layers = periodic_pattern(c.n_layers, period);
  }
  FERRITE_ASSIGN_OR_RETURN(const auto* tokens, m.get_array<std::string>("tokenizer.ggml.tokens"));
  c.vocab_size = tokens->size();
  c.tied_output = !stored.has("output.weight");
  for (const auto& [name, format_id] : stored.block_formats) {
    if (!name.ends_with(".weight")) continue;
    c.block_formats["weight." + name.substr(0, name.size() - 7)] = format_id;
  }
  return c;
}

Result<Gemma3Config> gemma3_config_from_hf(const HfConfig& json) {
  for (const std::string& architecture : json.architectures()) {
    if (architecture == "Gemma3ForConditionalGeneration") {
      return json.invalid("architectures",
                          "is Gemma3ForConditionalGeneration: the vision-language checkpoint "
                          "(vision tower, `text_config`) is not supported; Ferrite reads the "
                          "text model alone (Gemma3ForCausalLM, model_type gemma3_text)");
    }
  }
  Gemma3Config c;
  FERRITE_ASSIGN_OR_RETURN(c.dim, json.positive_integer("hidden_size"));
  FERRITE_ASSIGN_OR_RETURN(c.hidden_dim, json.positive_integer("intermediate_size"));
  FERRITE_ASSIGN_OR_RETURN(c.n_layers, json.positive_integer("num_hidden_layers"));
  FERRITE_ASSIGN_OR_RETURN(c.n_heads, json.positive_integer("num_attention_heads"));
  FERRITE_ASSIGN_OR_RETURN(c.n_kv_heads, json.positive_integer("num_key_value_heads", 4));
  FERRITE_ASSIGN_OR_RETURN(c.head_dim, json.positive_integer("head_dim", 256));
  FERRITE_ASSIGN_OR_RETURN(c.vocab_size, json.positive_integer("vocab_size"));
  FERRITE_ASSIGN_OR_RETURN(c.context_length,
                           json.positive_integer("max_position_embeddings", 131072));
  FERRITE_ASSIGN_OR_RETURN(c.query_scale_base,
                           json.positive_integer("query_pre_attn_scalar", c.head_dim));
  FERRITE_ASSIGN_OR_RETURN(double eps, json.positive_number("rms_norm_eps", 1e-6));
  FERRITE_ASSIGN_OR_RETURN(double theta, json.positive_number("rope_theta", 1000000.0));
  FERRITE_ASSIGN_OR_RETURN(double local, json.positive_number("rope_local_base_freq", 10000.0));
  FERRITE_ASSIGN_OR_RETURN(c.tied_output, json.boolean("tie_word_embeddings", true));
  c.norm_eps = decimal_text(eps);
  c.rope_theta = decimal_text(theta);
  c.rope_theta_local = decimal_text(local);
  FERRITE_ASSIGN_OR_RETURN(std::string activation,
                           json.text("hidden_activation", "gelu_pytorch_tanh"));
  if (activation != "gelu_pytorch_tanh") {
    return json.invalid("hidden_activation",
                        fmt::format("is `{}`; Gemma 3's GeGLU uses gelu_pytorch_tanh", activation));
  }
  for (const char* cap : {"final_logit_softcapping", "attn_logit_softcapping"}) {
    if (json.has(cap)) return json.invalid(cap, "is set: logit soft-capping is not supported");
  }
  if (json.has("rope_parameters")) {
    return json.invalid("rope_parameters",
                        "is not read (state rope_theta / rope_local_base_freq instead)");
  }
  FERRITE_ASSIGN_OR_RETURN(std::optional<HfConfig> scaling, json.object("rope_scaling"));
  if (scaling) {
    // {"rope_type": "linear", "factor": 8.0} (older files: "type").
    FERRITE_ASSIGN_OR_RETURN(std::string type, scaling->text("rope_type", ""));
    if (type.empty()) {
      FERRITE_ASSIGN_OR_RETURN(type, scaling->text("type", "linear"));
    }
    FERRITE_ASSIGN_OR_RETURN(double factor, scaling->positive_number("factor", 1.0));
    if (type != "linear" && type != "default") {
      return json.invalid("rope_scaling",
                          fmt::format("has type `{}`: only linear RoPE scaling is supported", type));
    }
    if (factor < 1.0) {
      return json.invalid("rope_scaling", fmt::format("has factor {} (must be >= 1)", factor));
    }
    if (type == "linear" && factor > 1.0) c.rope_scale = decimal_text(factor);
  }
  FERRITE_ASSIGN_OR_RETURN(c.sliding_window, json.positive_integer("sliding_window", 4096));
  FERRITE_ASSIGN_OR_RETURN(std::vector<std::string> layer_types, json.text_array("layer_types"));
  if (!layer_types.empty()) {
    if (layer_types.size() != c.n_layers) {
      return json.invalid("layer_types", fmt::format("has {} entries for {} layers",
                                                     layer_types.size(), c.n_layers));
    }
    for (const std::string& type : layer_types) {
      if (type != "sliding_attention" && type != "full_attention") {
        return json.invalid("layer_types", fmt::format("holds `{}` (expected sliding_attention "
                                                       "or full_attention)",
                                                       type));
      }
      c.sliding_layers.push_back(type == "sliding_attention");
    }
  } else {
    FERRITE_ASSIGN_OR_RETURN(uint64_t period, json.positive_integer("sliding_window_pattern", 6));
    c.sliding_layers = periodic_pattern(c.n_layers, period);
  }
  if (c.n_heads % c.n_kv_heads != 0) {
    return json.invalid("num_key_value_heads",
                        fmt::format("{} does not divide num_attention_heads {}", c.n_kv_heads,
                                    c.n_heads));
  }
  return c;
}

std::optional<std::string> gemma3_gguf_tensor_name(std::string_view hf, uint64_t n_layers) {
  static const std::map<std::string, std::string, std::less<>> fixed{
      {"model.embed_tokens.weight", "token_embd.weight"},
      {"model.norm.weight", "output_norm.weight"},
      {"lm_head.weight", "output.weight"}};
  if (auto it = fixed.find(hf); it != fixed.end()) return it->second;
  static const std::map<std::string, std::string, std::less<>> layer{
      {"input_layernorm.weight", "attn_norm.weight"},
      {"self_attn.q_proj.weight", "attn_q.weight"},
      {"self_attn.k_proj.weight", "attn_k.weight"},
      {"self_attn.v_proj.weight", "attn_v.weight"},
      {"self_attn.o_proj.weight", "attn_output.weight"},
      {"self_attn.q_norm.weight", "attn_q_norm.weight"},
      {"self_attn.k_norm.weight", "attn_k_norm.weight"},
      {"post_attention_layernorm.weight", "post_attention_norm.weight"},
      {"pre_feedforward_layernorm.weight", "ffn_norm.weight"},
      {"post_feedforward_layernorm.weight", "post_ffw_norm.weight"},
      {"mlp.gate_proj.weight", "ffn_gate.weight"},
      {"mlp.up_proj.weight", "ffn_up.weight"},
      {"mlp.down_proj.weight", "ffn_down.weight"}};
  constexpr std::string_view kPrefix = "model.layers.";
  if (!hf.starts_with(kPrefix)) return std::nullopt;
  const std::string_view rest = hf.substr(kPrefix.size());
  const size_t dot = rest.find('.');
  if (dot == std::string_view::npos || dot == 0) return std::nullopt;
  const std::string_view digits = rest.substr(0, dot);
  // Canonical decimal, at most 19 digits (fits in u64).
  if (digits.size() > 19 || (digits.size() > 1 && digits.front() == '0')) return std::nullopt;
  uint64_t index = 0;
  for (const char ch : digits) {
    if (ch < '0' || ch > '9') return std::nullopt;
    index = index * 10 + static_cast<uint64_t>(ch - '0');
  }
  if (index >= n_layers) return std::nullopt;
  auto it = layer.find(rest.substr(dot + 1));
  if (it == layer.end()) return std::nullopt;
  return fmt::format("blk.{}.{}", index, it->second);
}

namespace {

// Every tensor the program reads, checked before it is built (the walk
// stops at the first missing name, so it is bounded by the file).
Result<void> check_tensors(std::any& any_config, const CheckpointTensors& served) {
  auto& c = std::any_cast<Gemma3Config&>(any_config);
  if (served.fallbacks.contains("output.weight")) c.tied_output = true;
  auto missing = [&](const std::string& name) -> Result<void> {
    if (served.has(name)) return {};
    return make_error(ErrorCode::kInvalidModelConfig,
                      "{}: the model declares {} layers, but tensor `{}` is missing", served.source,
                      c.n_layers, name)
        .with_field("tensor", name);
  };
  for (const char* name : {"token_embd.weight", "output_norm.weight", "output.weight"}) {
    FERRITE_RETURN_IF_ERROR(missing(name));
  }
  for (uint64_t layer = 0; layer < c.n_layers; ++layer) {
    for (const char* part : kLayerTensors) {
      FERRITE_RETURN_IF_ERROR(missing(fmt::format("blk.{}.{}.weight", layer, part)));
    }
  }
  if (auto embd = c.block_formats.find("weight.token_embd");
      c.tied_output && embd != c.block_formats.end()) {
    c.block_formats["weight.output"] = embd->second;
  }
  return {};
}

}  // namespace

FamilyRoom gemma3_family_room() {
  return FamilyRoom{
      .name = "gemma3",
      .gguf_architectures = {"gemma3"},
      .hf_architectures = {"Gemma3ForCausalLM", "Gemma3ForConditionalGeneration"},
      .config_from_llama2c = {},
      .config_from_gguf = [](const GgufModel& m, const CheckpointTensors& stored)
          -> Result<std::any> {
        FERRITE_ASSIGN_OR_RETURN(Gemma3Config c, gemma3_config_from_gguf(m, stored));
        return c;
      },
      .config_from_hf = [](const HfConfig& json) -> Result<std::any> {
        FERRITE_ASSIGN_OR_RETURN(Gemma3Config c, gemma3_config_from_hf(json));
        return c;
      },
      .hf_tensor_name =
          [](std::string_view hf_name, const std::any& config) {
            return gemma3_gguf_tensor_name(hf_name,
                                           std::any_cast<const Gemma3Config&>(config).n_layers);
          },
      .vocab_size =
          [](const std::any& config) {
            return std::any_cast<const Gemma3Config&>(config).vocab_size;
          },
      .context_length =
          [](const std::any& config) {
            return std::any_cast<const Gemma3Config&>(config).context_length;
          },
      .build_program =
          [](const std::any& any_config, uint64_t context_limit) {
            Gemma3Config config = std::any_cast<const Gemma3Config&>(any_config);
            config.context_length = std::min(config.context_length, context_limit);
            return build_gemma3_family(config);
          },
      .tensor_fallbacks = {{"output.weight", "token_embd.weight"}},
      .tensor_slices = {},
      .check_tensors = check_tensors,
      // Gemma's RMSNorm weights: stored as w, applied as 1 + w.
      .hf_tensor_offset = [](std::string_view gguf_name) {
        return gguf_name.ends_with("norm.weight") ? 1.0f : 0.0f;
      }};
}

Result<void> register_family_gemma3(FamilyRegistry& registry) {
  return registry.add(gemma3_family_room());
}

}  // namespace ferrite
