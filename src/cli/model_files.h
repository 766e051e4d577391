// cli/model_files.h — a model file, opened through the family registry.
//
// Contract: `open_model(path, tokenizer, context_limit)` opens a checkpoint
// (llama2.c `.bin` with an optional tokenizer `.bin`, `.gguf`, or a Hugging
// Face directory / `.safetensors` file; families/checkpoint.h) with every
// built-in family (`builtin_families()`), and asks the family room the file
// names to build its decoder program for min(context_limit, the model's
// context) positions. Nothing here knows a family: a new room under
// src/families/ is runnable by `ferrite run`, `compile`, `explain`, `verify`
// and `approve-weights` as soon as it is registered. Errors are the
// checkpoint's and the room's, unchanged.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(OpenedModel model, open_model("stories260K.gguf", std::nullopt, 512));
//   // model.family is the prepared program; model.checkpoint.weights serves its weights.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>

#include "ferrite/families/checkpoint.h"
#include "ferrite/program/prepared_model_family.h"

namespace ferrite::cli {

struct OpenedModel {
  // The registry checkpoint.family points into (kept alive with it).
  std::unique_ptr<const FamilyRegistry> families;
  Checkpoint checkpoint;       // family room, config, weights, vocabulary
  PreparedModelFamily family;  // the room's decoder program
  uint64_t context_length = 0;  // positions the program's states hold
  uint64_t vocab_size = 0;
};

Result<OpenedModel> open_model(const std::filesystem::path& path,
                               const std::optional<std::filesystem::path>& tokenizer,
                               uint64_t context_limit);

}  // namespace ferrite::cli
