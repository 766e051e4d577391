// ferrite/families/family_registry.h — model families, found by what a
// checkpoint says it is.
//
// Contract: a model family room (src/families/<name>/) describes itself with
// one `FamilyRoom`: its name, the GGUF `general.architecture` values and the
// Hugging Face config.json `architectures` entries it reads, and its mapping
// from each checkpoint format's configuration (llama2.c header, GGUF
// metadata, config.json) to its own config, which the room keeps as a
// `std::any` (e.g. a LlamaConfig). A mapping left empty means the family
// cannot read that format. `FamilyRegistry` holds rooms by name; adding a room
// whose name or architecture is already taken is kInvalidArgument naming it.
// Lookups return nullptr when nothing matches.
//
// Every room builds its program with the decoder interface of
// runtime/generation.h (`build_program`), so the CLI, the runtime and the
// server run any family without knowing it; `context_length` and
// `vocab_size` are what they need to know of its config.
//
// The tensor names a room sees are GGUF names (llama2.c's reader already
// uses them; a Hugging Face tensor is offered to `hf_tensor_name`, which
// returns its GGUF name or nullopt when the family does not read it).
//
// Example:
//   FamilyRegistry registry;
//   FERRITE_RETURN_IF_ERROR(registry.add(llama_family_room()));
//   const FamilyRoom* room = registry.find_gguf_architecture("llama");
#pragma once

#include <any>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ferrite/core/status.h"
#include "ferrite/models/gguf_reader.h"
#include "ferrite/models/hf_config.h"
#include "ferrite/models/llama2c_reader.h"
#include "ferrite/program/prepared_model_family.h"

namespace ferrite {

// What the generic checkpoint loader knows about a file's tensors (names as
// the file stores them, or as served once renamed), for the family's config
// mapping and its completeness check.
struct CheckpointTensors {
  std::string source;                                // the file, for messages
  std::set<std::string, std::less<>> names;          // every tensor
  std::map<std::string, std::string> block_formats;  // tensor name → block format id (GGUF)
  std::set<std::string, std::less<>> fallbacks;      // served through a tensor fallback
  bool has(std::string_view name) const { return names.contains(name); }
};

// A served tensor cut from a stored matrix: rows [first_row, first_row +
// rows) of `source` (row-major, outermost first; a block-quantized matrix's
// rows are whole block rows, so a slice stays in its blocks). E.g. phi3's
// fused `attn_qkv` served as `attn_q`, `attn_k`, `attn_v`.
struct TensorRowSlice {
  std::string name;
  std::string source;
  uint64_t first_row = 0;
  uint64_t rows = 0;
};

struct FamilyRoom {
  std::string name;                             // "llama"
  std::vector<std::string> gguf_architectures;  // general.architecture values
  std::vector<std::string> hf_architectures;    // config.json "architectures" entries

  // Config mappings (empty: the family does not read that format).
  std::function<Result<std::any>(const Llama2cConfig&)> config_from_llama2c;
  std::function<Result<std::any>(const GgufModel&, const CheckpointTensors&)> config_from_gguf;
  // The room reads the config.json keys it maps (models/hf_config.h).
  std::function<Result<std::any>(const HfConfig& config_json)> config_from_hf;
  // A Hugging Face tensor name → its GGUF name, or nullopt when unused.
  std::function<std::optional<std::string>(std::string_view hf_name, const std::any& config)>
      hf_tensor_name;
  // Tokens in the vocabulary the config declares (sizes a llama2.c tokenizer file).
  std::function<uint64_t(const std::any& config)> vocab_size;
  // Positions the config declares (the model's trained context).
  std::function<uint64_t(const std::any& config)> context_length;
  // The decoder program of a config (runtime/generation.h's interface), its
  // position-sized states (KV caches) for min(context_limit, context_length)
  // positions. kInvalidModelConfig when the config is out of the family's range.
  std::function<Result<PreparedModelFamily>(const std::any& config, uint64_t context_limit)>
      build_program;
  // Served tensors that may be missing from a file: (name, the tensor served
  // instead), e.g. a tied classifier {"output.weight", "token_embd.weight"}.
  std::vector<std::pair<std::string, std::string>> tensor_fallbacks;
  // Row slices the config serves (applied before the fallbacks; a slice may
  // replace its own source, as phi3's gate+up `ffn_up` → `ffn_up`). A source
  // that is missing is skipped (the completeness check names what is then
  // missing); one too short for its slices is kInvalidModelConfig naming it.
  std::function<std::vector<TensorRowSlice>(const std::any& config)> tensor_slices;
  // After the tensors are known (GGUF names, fallbacks applied): every tensor
  // each program of this config reads must be there — checked before the
  // program is built, so a small file declaring many layers fails fast. May
  // complete the config (e.g. a tied classifier's storage format).
  std::function<Result<void>(std::any& config, const CheckpointTensors& served)> check_tensors;
  // A value added to every element of a Hugging Face tensor served under
  // this GGUF name, in f32 after the conversion (empty or 0: none). Gemma's
  // RMSNorm weights are stored as w and applied as 1 + w; GGUF files store
  // 1 + w (llama.cpp's converter adds the 1), so the gemma3 room serves the
  // Hugging Face ones with 1 added and both read the same program.
  std::function<float(std::string_view gguf_name)> hf_tensor_offset;
};

class FamilyRegistry {
 public:
  Result<void> add(FamilyRoom room);

  const FamilyRoom* find(std::string_view name) const;
  const FamilyRoom* find_gguf_architecture(std::string_view architecture) const;
  const FamilyRoom* find_hf_architecture(std::string_view architecture) const;
  // The rooms that read a format ("llama2.c", "gguf", "safetensors").
  std::vector<const FamilyRoom*> readers_of(std::string_view format) const;
  std::vector<std::string> names() const;

 private:
  std::map<std::string, FamilyRoom, std::less<>> rooms_;
};

}  // namespace ferrite
