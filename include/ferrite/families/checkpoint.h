// ferrite/families/checkpoint.h — open a checkpoint file of any supported
// format as (family, config, weights, vocabulary).
//
// Contract: `open_checkpoint(registry, path, tokenizer)` picks the format from
// the path and the family from what the file says it is:
//   * a llama2.c checkpoint (`.bin`; the tokenizer `.bin` is `tokenizer`,
//     optional): the one registered family that reads llama2.c headers;
//   * a GGUF v3 file (`.gguf`; F32/F16/BF16 tensors; Q8_0, Q4_0, Q4_1, Q5_0,
//     Q5_1, Q4_K, Q5_K and Q6_K matrices; other types refused by name):
//     the family registered for its `general.architecture` (else
//     kInvalidModelConfig naming the architecture); the vocabulary from
//     `tokenizer.ggml.*` (special token ids above u32 are kInvalidModelConfig,
//     never truncated);
//   * a Hugging Face directory with `config.json` and `model.safetensors`
//     (F32/F16/BF16), or the `.safetensors` file in one: the family of the
//     first config.json `architectures` entry that is registered; with no
//     such entry, the one family that reads config.json, if exactly one does.
//     Only the file's own tensors are walked and renamed by the family, so the
//     work is bounded by the file, not by the layer count config.json declares.
// The family's room maps the format's configuration to its config
// (family_registry.h) and checks that every tensor it reads is present. The
// returned `WeightSource` serves each component by its first checkpoint name
// that the file has, checks the tensor's shape against the component (GGUF
// shapes are innermost-first and are compared reversed), copies block
// matrices as stored and converts F16/BF16 to f32; a missing tensor or a
// shape mismatch is an error naming the tensor. Files stay memory-mapped for
// the lifetime of the source.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(Checkpoint checkpoint,
//                            open_checkpoint(registry, "stories260K.gguf", std::nullopt));
//   const auto& config = std::any_cast<const LlamaConfig&>(checkpoint.config);
#pragma once

#include <any>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "ferrite/families/family_registry.h"
#include "ferrite/runtime/executor.h"
#include "ferrite/runtime/tokenizer.h"

namespace ferrite {

struct Checkpoint {
  std::string format;  // "llama2.c", "gguf", "safetensors"
  const FamilyRoom* family = nullptr;
  std::any config;     // the room's config type
  std::unique_ptr<WeightSource> weights;
  std::optional<Vocabulary> vocabulary;
};

Result<Checkpoint> open_checkpoint(const FamilyRegistry& registry,
                                   const std::filesystem::path& path,
                                   const std::optional<std::filesystem::path>& tokenizer);

// Exact decimal text of a float read from a file (for RMS eps / RoPE theta).
std::string decimal_text(double value);

}  // namespace ferrite
