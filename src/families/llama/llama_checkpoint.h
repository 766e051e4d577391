// families/llama/llama_checkpoint.h — open a Llama checkpoint of any supported
// format as (config, weights, vocabulary).
//
// Contract: `open_llama_checkpoint(path, tokenizer_path)` accepts
//   * a llama2.c checkpoint (`.bin`; the tokenizer `.bin` is `tokenizer_path`,
//     optional — without it the run prints token ids);
//   * a GGUF v3 file (`.gguf`; F32/F16/BF16 tensors; the config from the
//     `llama.*` keys, the vocabulary from `tokenizer.ggml.*`; special token
//     ids above u32 are kInvalidModelConfig, never truncated);
//   * a Hugging Face directory with `config.json` and `model.safetensors`
//     (F32/F16/BF16), tensors renamed to GGUF names; RoPE is half-split. Only
//     the file's own tensors are walked (`model.layers.N.*` with a canonical
//     N below num_hidden_layers), so the work is bounded by the file, not by
//     the layer count config.json declares.
// llama2.c and GGUF use the interleaved-pair RoPE convention. The returned
// `WeightSource` serves each component by its first checkpoint name that the
// file has, checks the tensor's shape against the component (GGUF shapes are
// innermost-first and are compared reversed) and converts F16/BF16 to f32; a
// missing tensor or a shape mismatch is an error naming the tensor. Files
// stay memory-mapped for the lifetime of the source.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto checkpoint, open_llama_checkpoint("stories260K.gguf", {}));
//   FERRITE_ASSIGN_OR_RETURN(auto family, build_llama_family(checkpoint.config));
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "families/llama/llama_family.h"
#include "ferrite/runtime/executor.h"
#include "ferrite/runtime/tokenizer.h"

namespace ferrite {

struct LlamaCheckpoint {
  std::string format;  // "llama2.c", "gguf", "safetensors"
  LlamaConfig config;
  std::unique_ptr<WeightSource> weights;
  std::optional<Vocabulary> vocabulary;
};

Result<LlamaCheckpoint> open_llama_checkpoint(const std::filesystem::path& path,
                                              const std::optional<std::filesystem::path>& tokenizer);

// Exact decimal text of a float read from a file (for RMS eps / RoPE theta).
std::string decimal_text(double value);

}  // namespace ferrite
