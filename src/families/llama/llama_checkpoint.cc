#include "families/llama/llama_checkpoint.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>

#include <fmt/format.h>


namespace ferrite {
namespace {

// Every tensor a Llama of `config` reads must be present, checked before the
// (linear in the declared layer count) program is built: a small file
// declaring hundreds of layers fails here, at the first missing name. The
// walk stops there, so it is bounded by the file's tensor count.
Result<void> require_llama_tensors(const LlamaConfig& config, const CheckpointTensors& served) {
  auto missing = [&](const std::string& name) -> Result<void> {
    if (served.has(name)) return {};
    return make_error(ErrorCode::kInvalidModelConfig,
                      "{}: the model declares {} layers, but tensor `{}` is missing", served.source,
                      config.n_layers, name)
        .with_field("tensor", name);
  };
  for (const char* name : {"token_embd.weight", "output_norm.weight", "output.weight"}) {
    FERRITE_RETURN_IF_ERROR(missing(name));
  }
  if (config.rope_freq_factors) FERRITE_RETURN_IF_ERROR(missing("rope_freqs.weight"));
  for (uint64_t layer = 0; layer < config.n_layers; ++layer) {
    for (const char* part : {"attn_norm", "attn_q", "attn_k", "attn_v", "attn_output",
                             "ffn_norm", "ffn_gate", "ffn_up", "ffn_down"}) {
      FERRITE_RETURN_IF_ERROR(missing(fmt::format("blk.{}.{}.weight", layer, part)));
    }
    if (config.qkv_bias) {
      for (const char* part : {"attn_q", "attn_k", "attn_v"}) {
        FERRITE_RETURN_IF_ERROR(missing(fmt::format("blk.{}.{}.bias", layer, part)));
      }
    }
    if (config.qk_norm) {
      for (const char* part : {"attn_q_norm", "attn_k_norm"}) {
        FERRITE_RETURN_IF_ERROR(missing(fmt::format("blk.{}.{}.weight", layer, part)));
      }
    }
  }
  return {};
}

Result<std::any> from_llama2c(const Llama2cConfig& c) {
  return LlamaConfig{.dim = c.dim,
                     .hidden_dim = c.hidden_dim,
                     .n_layers = c.n_layers,
                     .n_heads = c.n_heads,
                     .n_kv_heads = c.n_kv_heads,
                     .vocab_size = c.vocab_size,
                     .context_length = c.seq_len,
                     .norm_eps = "1/100000",
                     .rope_theta = "10000",
                     .rope_convention = "interleaved",
                     .tied_output = c.shared_classifier,
                     .block_formats = {}};
}

Result<std::any> from_gguf(const GgufModel& m, const CheckpointTensors& stored) {
  FERRITE_ASSIGN_OR_RETURN(LlamaConfig config, llama_config_from_gguf(m, stored, "llama"));
  config.rope_convention = "interleaved";
  // Llama 3 files carry the frequency factors of their rope scaling.
  config.rope_freq_factors = stored.has("rope_freqs.weight");
  return config;
}

Result<std::any> from_hf(const HfConfig& json) {
  FERRITE_ASSIGN_OR_RETURN(LlamaConfig config, llama_config_from_hf(json));
  return config;
}

// The GGUF name the loader serves a Hugging Face tensor under, or nullopt for
// tensors it does not use: the three fixed names, and
// `model.layers.N.<part>` for a canonical decimal N < n_layers. Walking the
// file's tensors (at most kSafetensorsMaxTensors) instead of generating the
// names of every layer a config declares keeps the work bounded by the file:
// a config.json declaring 10^12 layers must not allocate 10^13 names.
}  // namespace

std::optional<std::string> llama_gguf_tensor_name(std::string_view hf, uint64_t n_layers) {
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
      {"post_attention_layernorm.weight", "ffn_norm.weight"},
      {"mlp.gate_proj.weight", "ffn_gate.weight"},
      {"mlp.up_proj.weight", "ffn_up.weight"},
      {"mlp.down_proj.weight", "ffn_down.weight"}};
  constexpr std::string_view kPrefix = "model.layers.";
  if (!hf.starts_with(kPrefix)) return std::nullopt;
  const std::string_view rest = hf.substr(kPrefix.size());
  const size_t dot = rest.find('.');
  if (dot == std::string_view::npos || dot == 0) return std::nullopt;
  const std::string_view digits = rest.substr(0, dot);
  // Canonical decimal (no leading zero), at most 19 digits so it fits in u64.
  if (digits.size() > 19 || (digits.size() > 1 && digits.front() == '0')) return std::nullopt;
  uint64_t index = 0;
  for (const char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    index = index * 10 + static_cast<uint64_t>(c - '0');
  }
  if (index >= n_layers) return std::nullopt;
  auto it = layer.find(rest.substr(dot + 1));
  if (it == layer.end()) return std::nullopt;
  return fmt::format("blk.{}.{}", index, it->second);
}

namespace {

Result<void> check_tensors(std::any& any_config, const CheckpointTensors& served) {
  auto& config = std::any_cast<LlamaConfig&>(any_config);
  // A classifier served from the embedding table is tied.
  if (served.fallbacks.contains("output.weight")) config.tied_output = true;
  FERRITE_RETURN_IF_ERROR(require_llama_tensors(config, served));
  if (auto embd = config.block_formats.find("weight.token_embd");
      config.tied_output && embd != config.block_formats.end()) {
    config.block_formats["weight.output"] = embd->second;  // served from the same blocks
  }
  return {};
}

}  // namespace

Result<LlamaConfig> llama_config_from_gguf(const GgufModel& m, const CheckpointTensors& stored,
                                           std::string_view arch) {
  auto key = [&](const char* name) { return fmt::format("{}.{}", arch, name); };
  LlamaConfig config;
  FERRITE_ASSIGN_OR_RETURN(config.dim, m.get_unsigned(key("embedding_length")));
  FERRITE_ASSIGN_OR_RETURN(config.hidden_dim, m.get_unsigned(key("feed_forward_length")));
  FERRITE_ASSIGN_OR_RETURN(config.n_layers, m.get_unsigned(key("block_count")));
  FERRITE_ASSIGN_OR_RETURN(config.n_heads, m.get_unsigned(key("attention.head_count")));
  config.n_kv_heads = config.n_heads;
  if (m.find(key("attention.head_count_kv")) != nullptr) {
    FERRITE_ASSIGN_OR_RETURN(config.n_kv_heads, m.get_unsigned(key("attention.head_count_kv")));
  }
  FERRITE_ASSIGN_OR_RETURN(config.context_length, m.get_unsigned(key("context_length")));
  // The head size: key_length when stated and not dim / heads (Qwen3);
  // value_length and the rotated width must equal it.
  if (m.find(key("attention.key_length")) != nullptr) {
    FERRITE_ASSIGN_OR_RETURN(uint64_t key_length, m.get_unsigned(key("attention.key_length")));
    if (config.n_heads == 0 || key_length * config.n_heads != config.dim) {
      config.attention_head_dim = key_length;
    }
  }
  for (const char* name : {"attention.value_length", "rope.dimension_count"}) {
    if (m.find(key(name)) == nullptr) continue;
    FERRITE_ASSIGN_OR_RETURN(uint64_t value, m.get_unsigned(key(name)));
    if (value != config.head_dim()) {
      return make_error(ErrorCode::kInvalidModelConfig,
                        "{}: `{}` is {}, but the head size is {} (a different value or rotated "
                        "width is not supported)",
                        m.source, key(name), value, config.head_dim())
          .with_field("key", key(name));
    }
  }
  FERRITE_ASSIGN_OR_RETURN(double eps, m.get_float(key("attention.layer_norm_rms_epsilon")));
  config.norm_eps = decimal_text(eps);
  if (m.find(key("rope.freq_base")) != nullptr) {
    FERRITE_ASSIGN_OR_RETURN(double theta, m.get_float(key("rope.freq_base")));
    config.rope_theta = decimal_text(theta);
  }
  FERRITE_ASSIGN_OR_RETURN(const auto* tokens, m.get_array<std::string>("tokenizer.ggml.tokens"));
  config.vocab_size = tokens->size();
  config.tied_output = !stored.has("output.weight");
  // A block-quantized matrix is stored in the same format by the family.
  for (const auto& [name, format_id] : stored.block_formats) {
    if (!name.ends_with(".weight")) continue;  // (1-D tensors are never blocks)
    config.block_formats["weight." + name.substr(0, name.size() - 7)] = format_id;
  }
  config.family = std::string(arch);
  return config;
}

Result<void> check_llama_tensors(std::any& config, const CheckpointTensors& served) {
  return check_tensors(config, served);
}

Result<LlamaConfig> llama_config_from_hf(const HfConfig& json) {
  LlamaConfig config;
  FERRITE_ASSIGN_OR_RETURN(config.dim, json.positive_integer("hidden_size"));
  FERRITE_ASSIGN_OR_RETURN(config.hidden_dim, json.positive_integer("intermediate_size"));
  FERRITE_ASSIGN_OR_RETURN(config.n_layers, json.positive_integer("num_hidden_layers"));
  FERRITE_ASSIGN_OR_RETURN(config.n_heads, json.positive_integer("num_attention_heads"));
  FERRITE_ASSIGN_OR_RETURN(config.n_kv_heads,
                           json.positive_integer("num_key_value_heads", config.n_heads));
  FERRITE_ASSIGN_OR_RETURN(config.vocab_size, json.positive_integer("vocab_size"));
  FERRITE_ASSIGN_OR_RETURN(config.context_length,
                           json.positive_integer("max_position_embeddings", 2048));
  FERRITE_ASSIGN_OR_RETURN(double eps, json.positive_number("rms_norm_eps", 1e-6));
  FERRITE_ASSIGN_OR_RETURN(double theta, json.positive_number("rope_theta", 10000.0));
  FERRITE_ASSIGN_OR_RETURN(config.tied_output, json.boolean("tie_word_embeddings", false));
  config.norm_eps = decimal_text(eps);
  config.rope_theta = decimal_text(theta);
  config.rope_convention = "half_split";
  if (config.dim % config.n_heads != 0) {
    return json.invalid("hidden_size", fmt::format("{} is not divisible by num_attention_heads {}",
                                                   config.dim, config.n_heads));
  }
  if (config.n_heads % config.n_kv_heads != 0) {
    return json.invalid("num_key_value_heads",
                        fmt::format("{} does not divide num_attention_heads {}", config.n_kv_heads,
                                    config.n_heads));
  }
  return config;
}

FamilyRoom llama_config_room(std::string name, std::string hf_architecture,
                             decltype(FamilyRoom::config_from_gguf) from_gguf,
                             decltype(FamilyRoom::config_from_hf) from_hf,
                             LlamaTensorNamer tensor_name) {
  std::vector<std::string> gguf_architectures{name};
  return FamilyRoom{
      .name = std::move(name),
      .gguf_architectures = std::move(gguf_architectures),
      .hf_architectures = {std::move(hf_architecture)},
      .config_from_llama2c = {},
      .config_from_gguf = std::move(from_gguf),
      .config_from_hf = std::move(from_hf),
      .hf_tensor_name =
          [tensor_name](std::string_view hf_name, const std::any& config) {
            return tensor_name(hf_name, std::any_cast<const LlamaConfig&>(config).n_layers);
          },
      .vocab_size =
          [](const std::any& config) {
            return std::any_cast<const LlamaConfig&>(config).vocab_size;
          },
      .context_length =
          [](const std::any& config) {
            return std::any_cast<const LlamaConfig&>(config).context_length;
          },
      .build_program =
          [](const std::any& any_config, uint64_t context_limit) {
            LlamaConfig config = std::any_cast<const LlamaConfig&>(any_config);
            config.context_length = std::min(config.context_length, context_limit);
            return build_llama_family(config);
          },
      .tensor_fallbacks = {{"output.weight", "token_embd.weight"}},
      .tensor_slices = {},
      .check_tensors = check_tensors,
      .hf_tensor_offset = {}};
}

FamilyRoom llama_family_room() {
  FamilyRoom room =
      llama_config_room("llama", "LlamaForCausalLM", from_gguf, from_hf, llama_gguf_tensor_name);
  room.config_from_llama2c = from_llama2c;
  return room;
}

Result<void> register_family_llama(FamilyRegistry& registry) {
  return registry.add(llama_family_room());
}

Result<LlamaCheckpoint> open_llama_checkpoint(const std::filesystem::path& path,
                                              const std::optional<std::filesystem::path>& tokenizer) {
  FamilyRegistry registry;
  FERRITE_RETURN_IF_ERROR(register_family_llama(registry));
  FERRITE_ASSIGN_OR_RETURN(Checkpoint checkpoint, open_checkpoint(registry, path, tokenizer));
  return LlamaCheckpoint{.format = std::move(checkpoint.format),
                         .config = std::any_cast<LlamaConfig>(std::move(checkpoint.config)),
                         .weights = std::move(checkpoint.weights),
                         .vocabulary = std::move(checkpoint.vocabulary)};
}

}  // namespace ferrite
