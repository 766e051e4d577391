#include "families/phi3/phi3_family.h"

#include <algorithm>
#include <string>

#include <fmt/format.h>

namespace ferrite {
namespace {

// The Llama names, and the fused `self_attn.qkv_proj.weight` →
// `attn_qkv.weight`, `mlp.gate_up_proj.weight` → `ffn_up.weight`.
std::optional<std::string> phi3_tensor_name(std::string_view hf, uint64_t n_layers) {
  for (const auto& [fused, stand_in, gguf_stand_in, gguf_fused] :
       {std::tuple{"self_attn.qkv_proj.weight", "self_attn.q_proj.weight", "attn_q.weight",
                   "attn_qkv.weight"},
        std::tuple{"mlp.gate_up_proj.weight", "mlp.up_proj.weight", "ffn_up.weight",
                   "ffn_up.weight"}}) {
    const std::string_view suffix(fused);
    if (!hf.ends_with(suffix)) continue;
    const std::string as = std::string(hf.substr(0, hf.size() - suffix.size())) + stand_in;
    auto name = llama_gguf_tensor_name(as, n_layers);
    if (!name || !name->ends_with(gguf_stand_in)) return std::nullopt;
    return name->substr(0, name->size() - std::string_view(gguf_stand_in).size()) + gguf_fused;
  }
  // The unfused names are not Phi-3's.
  if (hf.ends_with("_proj.weight") &&
      (hf.find("self_attn.q_proj") != std::string_view::npos ||
       hf.find("self_attn.k_proj") != std::string_view::npos ||
       hf.find("self_attn.v_proj") != std::string_view::npos ||
       hf.find("mlp.gate_proj") != std::string_view::npos ||
       hf.find("mlp.up_proj") != std::string_view::npos)) {
    return std::nullopt;
  }
  return llama_gguf_tensor_name(hf, n_layers);
}

std::vector<TensorRowSlice> phi3_slices(const std::any& any_config) {
  const auto& c = std::any_cast<const LlamaConfig&>(any_config);
  std::vector<TensorRowSlice> out;
  // Bounded by the layers the config declares; the completeness check that
  // follows stops at the first missing tensor, so a huge declared count
  // costs these small records only (layers ≤ 1024 is checked when the
  // program is built; cap the walk here too).
  const uint64_t layers = std::min<uint64_t>(c.n_layers, 1024);
  for (uint64_t i = 0; i < layers; ++i) {
    const std::string b = fmt::format("blk.{}.", i);
    out.push_back({b + "attn_q.weight", b + "attn_qkv.weight", 0, c.q_dim()});
    out.push_back({b + "attn_k.weight", b + "attn_qkv.weight", c.q_dim(), c.kv_dim()});
    out.push_back({b + "attn_v.weight", b + "attn_qkv.weight", c.q_dim() + c.kv_dim(), c.kv_dim()});
    out.push_back({b + "ffn_gate.weight", b + "ffn_up.weight", 0, c.hidden_dim});
    out.push_back({b + "ffn_up.weight", b + "ffn_up.weight", c.hidden_dim, c.hidden_dim});
  }
  return out;
}

// The fused matrices must hold exactly their parts.
Result<void> check_fused_rows(const GgufModel& m, const LlamaConfig& c) {
  for (const auto& t : m.tensors) {
    uint64_t expected = 0;
    if (t.name.ends_with(".attn_qkv.weight")) expected = c.q_dim() + 2 * c.kv_dim();
    if (t.name.ends_with(".ffn_up.weight")) expected = 2 * c.hidden_dim;
    if (expected != 0 && (t.dims.size() != 2 || t.dims[1] != expected)) {
      return make_error(ErrorCode::kInvalidModelConfig,
                        "{}: fused tensor `{}` must have {} rows (the config's parts)", m.source,
                        t.name, expected)
          .with_field("tensor", t.name);
    }
  }
  return {};
}

Result<std::any> from_gguf(const GgufModel& m, const CheckpointTensors& stored) {
  FERRITE_ASSIGN_OR_RETURN(LlamaConfig config, llama_config_from_gguf(m, stored, "phi3"));
  config.rope_convention = "half_split";
  for (const char* name : {"rope_factors_long.weight", "rope_factors_short.weight"}) {
    if (stored.has(name)) {
      return make_error(ErrorCode::kInvalidModelConfig,
                        "{}: tensor `{}`: Phi-3 LongRoPE (the 128k variants) is not supported",
                        stored.source, name)
          .with_field("tensor", name);
    }
  }
  FERRITE_RETURN_IF_ERROR(check_fused_rows(m, config));
  // A fused matrix's block format is its parts' (the slices keep the blocks).
  std::map<std::string, std::string> formats;
  for (const auto& [id, format] : config.block_formats) {
    if (id.ends_with(".attn_qkv")) {
      const std::string b = id.substr(0, id.size() - 8);
      for (const char* part : {"attn_q", "attn_k", "attn_v"}) formats[b + part] = format;
    } else if (id.ends_with(".ffn_up")) {
      const std::string b = id.substr(0, id.size() - 6);
      for (const char* part : {"ffn_gate", "ffn_up"}) formats[b + part] = format;
    } else {
      formats[id] = format;
    }
  }
  config.block_formats = std::move(formats);
  return config;
}

Result<std::any> from_hf(const HfConfig& json) {
  FERRITE_ASSIGN_OR_RETURN(LlamaConfig config, llama_config_from_hf(json));
  config.family = "phi3";
  return config;
}

}  // namespace

FamilyRoom phi3_family_room() {
  return FamilyRoom{
      .name = "phi3",
      .gguf_architectures = {"phi3"},
      .hf_architectures = {"Phi3ForCausalLM"},
      .config_from_llama2c = {},
      .config_from_gguf = from_gguf,
      .config_from_hf = from_hf,
      .hf_tensor_name =
          [](std::string_view hf_name, const std::any& config) {
            return phi3_tensor_name(hf_name, std::any_cast<const LlamaConfig&>(config).n_layers);
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
      .tensor_slices = phi3_slices,
      .check_tensors = check_llama_tensors,
      .hf_tensor_offset = {}};
}

Result<void> register_family_phi3(FamilyRegistry& registry) {
  return registry.add(phi3_family_room());
}

}  // namespace ferrite
