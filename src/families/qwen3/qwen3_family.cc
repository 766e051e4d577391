#include "families/qwen3/qwen3_family.h"

#include <algorithm>
#include <string>

#include <fmt/format.h>

namespace ferrite {
namespace {

// The Llama names, and `model.layers.N.self_attn.{q,k}_norm.weight` →
// `blk.N.attn_{q,k}_norm.weight`.
std::optional<std::string> qwen3_tensor_name(std::string_view hf, uint64_t n_layers) {
  for (const auto& [norm, proj, gguf_proj, gguf_norm] :
       {std::tuple{"self_attn.q_norm.weight", "self_attn.q_proj.weight", "attn_q.weight",
                   "attn_q_norm.weight"},
        std::tuple{"self_attn.k_norm.weight", "self_attn.k_proj.weight", "attn_k.weight",
                   "attn_k_norm.weight"}}) {
    const std::string_view suffix(norm);
    if (!hf.ends_with(suffix)) continue;
    const std::string as_proj = std::string(hf.substr(0, hf.size() - suffix.size())) + proj;
    auto name = llama_gguf_tensor_name(as_proj, n_layers);
    if (!name || !name->ends_with(gguf_proj)) return std::nullopt;
    return name->substr(0, name->size() - std::string_view(gguf_proj).size()) + gguf_norm;
  }
  return llama_gguf_tensor_name(hf, n_layers);
}

Result<std::any> from_gguf(const GgufModel& m, const CheckpointTensors& stored) {
  FERRITE_ASSIGN_OR_RETURN(LlamaConfig config, llama_config_from_gguf(m, stored, "qwen3"));
  config.rope_convention = "half_split";
  config.qk_norm = true;
  return config;
}

Result<std::any> from_hf(const HfConfig& json) {
  FERRITE_ASSIGN_OR_RETURN(LlamaConfig config, llama_config_from_hf(json));
  config.family = "qwen3";
  config.qk_norm = true;
  FERRITE_ASSIGN_OR_RETURN(config.attention_head_dim,
                           json.positive_integer("head_dim", config.dim / config.n_heads));
  return config;
}

}  // namespace

FamilyRoom qwen3_family_room() {
  return FamilyRoom{
      .name = "qwen3",
      .gguf_architectures = {"qwen3"},
      .hf_architectures = {"Qwen3ForCausalLM"},
      .config_from_llama2c = {},
      .config_from_gguf = from_gguf,
      .config_from_hf = from_hf,
      .hf_tensor_name =
          [](std::string_view hf_name, const std::any& config) {
            return qwen3_tensor_name(hf_name, std::any_cast<const LlamaConfig&>(config).n_layers);
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
      .check_tensors = check_llama_tensors,
      .hf_tensor_offset = {}};
}

Result<void> register_family_qwen3(FamilyRegistry& registry) {
  return registry.add(qwen3_family_room());
}

}  // namespace ferrite
