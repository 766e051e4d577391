// families/llama/llama_checkpoint.h — the `llama` family's room entry: how
// checkpoints of each format map onto a LlamaConfig.
//
// Contract: `llama_family_room()` is the llama family for the registry
// (ferrite/families/family_registry.h): GGUF architecture `llama`, Hugging
// Face `LlamaForCausalLM`, and llama2.c headers; its config mapping
//   * llama2.c: the header (eps 1e-5, theta 10000; a shared classifier ties
//     the output);
//   * GGUF: the `llama.*` keys (head_count_kv defaults to head_count,
//     rope.freq_base to 10000), the vocabulary size from
//     `tokenizer.ggml.tokens`, a classifier tied when `output.weight` is
//     absent, and Q8_0/Q4_0/Q4_1/Q5_0/Q5_1/Q4_K/Q5_K/Q6_K matrices stored in their own block format;
//   * config.json (`llama_config_from_hf`): required hidden_size,
//     intermediate_size, num_hidden_layers, num_attention_heads, vocab_size;
//     optional with the Hugging Face defaults num_key_value_heads
//     (= num_attention_heads), max_position_embeddings (2048), rms_norm_eps
//     (1e-6), rope_theta (10000), tie_word_embeddings (false); hidden_size
//     divisible by the heads and heads by the KV heads (kInvalidModelConfig
//     naming the key); RoPE is half-split;
// its tensor names (GGUF names; Hugging Face `model.layers.N.*` renamed, for
// a canonical N below num_hidden_layers), and its completeness check (every
// tensor the program reads, before the program is built).
// `register_family_llama(registry)` adds it (called by the generated builtin
// list, see src/families/CMakeLists.txt). `open_llama_checkpoint(path,
// tokenizer)` opens a checkpoint with a registry of this family alone
// (families/checkpoint.h) and returns its LlamaConfig.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto checkpoint, open_llama_checkpoint("stories260K.gguf", {}));
//   FERRITE_ASSIGN_OR_RETURN(auto family, build_llama_family(checkpoint.config));
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "families/llama/llama_family.h"
#include "ferrite/families/checkpoint.h"
#include "ferrite/families/family_registry.h"

namespace ferrite {

struct LlamaCheckpoint {
  std::string format;  // "llama2.c", "gguf", "safetensors"
  LlamaConfig config;
  std::unique_ptr<WeightSource> weights;
  std::optional<Vocabulary> vocabulary;
};

FamilyRoom llama_family_room();

// A room whose config is a LlamaConfig (llama, qwen2, qwen3, phi3): one GGUF
// and one Hugging Face architecture name, the given config readers, HF tensor
// names through `tensor_name` (with the config's layer count), the tied
// output fallback, llama's tensor checks, and build_llama_family with the
// context clamped. A room overrides what differs (tensor_slices, ...).
using LlamaTensorNamer = std::optional<std::string> (*)(std::string_view hf_name,
                                                         uint64_t n_layers);
FamilyRoom llama_config_room(std::string name, std::string hf_architecture,
                             decltype(FamilyRoom::config_from_gguf) from_gguf,
                             decltype(FamilyRoom::config_from_hf) from_hf,
                             LlamaTensorNamer tensor_name);
Result<LlamaConfig> llama_config_from_hf(const HfConfig& config_json);
// The Llama-style GGUF keys under `<arch>.` (embedding_length,
// feed_forward_length, block_count, attention.head_count[_kv],
// context_length, attention.layer_norm_rms_epsilon, rope.freq_base;
// attention.key_length as the head size when it is not dim / heads;
// attention.value_length and rope.dimension_count, when stated, must equal
// the head size: kInvalidModelConfig naming the key), the
// vocabulary size, a tied classifier when `output.weight` is absent and the
// block formats; `family` = arch. Shared with the rooms whose decoder is a
// Llama variant (qwen2, qwen3), which set their own variant fields.
Result<LlamaConfig> llama_config_from_gguf(const GgufModel& m, const CheckpointTensors& stored,
                                           std::string_view arch);
// The Llama room's Hugging Face → GGUF tensor names (nullopt: unused), and
// the room's check_tensors (ties, then every tensor the config's program
// reads, variants included), for those rooms too.
std::optional<std::string> llama_gguf_tensor_name(std::string_view hf_name, uint64_t n_layers);
Result<void> check_llama_tensors(std::any& config, const CheckpointTensors& served);
Result<void> register_family_llama(FamilyRegistry& registry);

Result<LlamaCheckpoint> open_llama_checkpoint(const std::filesystem::path& path,
                                              const std::optional<std::filesystem::path>& tokenizer);

}  // namespace ferrite
