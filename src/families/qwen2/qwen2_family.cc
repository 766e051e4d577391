#include "families/qwen2/qwen2_family.h"

#include <algorithm>
#include <string>

namespace ferrite {
namespace {

// `from` → `to` at the end of `name`, or nullopt when it does not end so.
std::optional<std::string> swap_suffix(std::string_view name, std::string_view from,
                                       std::string_view to) {
  if (!name.ends_with(from)) return std::nullopt;
  return std::string(name.substr(0, name.size() - from.size())) + std::string(to);
}

// The Llama names, and `model.layers.N.self_attn.{q,k,v}_proj.bias` →
// `blk.N.attn_{q,k,v}.bias`.
std::optional<std::string> qwen2_tensor_name(std::string_view hf, uint64_t n_layers) {
  if (auto weight = swap_suffix(hf, "_proj.bias", "_proj.weight")) {
    auto gguf = llama_gguf_tensor_name(*weight, n_layers);
    if (!gguf) return std::nullopt;
    return swap_suffix(*gguf, ".weight", ".bias");
  }
  return llama_gguf_tensor_name(hf, n_layers);
}

Result<std::any> from_gguf(const GgufModel& m, const CheckpointTensors& stored) {
  FERRITE_ASSIGN_OR_RETURN(LlamaConfig config, llama_config_from_gguf(m, stored, "qwen2"));
  config.rope_convention = "half_split";
  config.qkv_bias = stored.has("blk.0.attn_q.bias");
  return config;
}

Result<std::any> from_hf(const HfConfig& json) {
  FERRITE_ASSIGN_OR_RETURN(LlamaConfig config, llama_config_from_hf(json));
  config.family = "qwen2";
  config.qkv_bias = true;
  return config;
}

}  // namespace

FamilyRoom qwen2_family_room() {
  return FamilyRoom{
      .name = "qwen2",
      .gguf_architectures = {"qwen2"},
      .hf_architectures = {"Qwen2ForCausalLM"},
      .config_from_llama2c = {},
      .config_from_gguf = from_gguf,
      .config_from_hf = from_hf,
      .hf_tensor_name =
          [](std::string_view hf_name, const std::any& config) {
            return qwen2_tensor_name(hf_name, std::any_cast<const LlamaConfig&>(config).n_layers);
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

Result<void> register_family_qwen2(FamilyRegistry& registry) {
  return registry.add(qwen2_family_room());
}

}  // namespace ferrite
