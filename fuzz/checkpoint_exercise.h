// fuzz/checkpoint_exercise.h — what the model-file targets do with a
// checkpoint that opened (families/llama/llama_checkpoint.h).
//
// Contract: `exercise_checkpoint(checkpoint)` builds the `llama` family from
// the checkpoint's config (build_llama_family) and, when every weight
// component together needs at most kMaxFilledBytes, asks the checkpoint's
// WeightSource to fill each one (shape checks, F16/BF16 conversion); with a
// vocabulary it also builds a Tokenizer and encodes and decodes a fixed text.
// `exercise_family_checkpoint` does the same for a checkpoint any family room
// of the builtin registry opened (open_checkpoint), through the room's
// build_program.
// Every error is ignored: the targets look for crashes, leaks and hangs, not
// for rejections.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "families/llama/llama_checkpoint.h"
#include "families/builtin/builtin_families.h"
#include "families/llama/llama_family.h"
#include "ferrite/families/checkpoint.h"
#include "ferrite/runtime/tokenizer.h"

namespace ferrite_fuzz {

inline constexpr uint64_t kMaxFilledBytes = uint64_t{16} << 20;

inline void exercise_vocabulary(const ferrite::Vocabulary& vocabulary) {
  auto tokenizer = ferrite::Tokenizer::create(vocabulary);
  if (!tokenizer) return;
  auto ids = tokenizer->encode("Once upon a time, a f\xc3\xbczzy \xff cat.");
  if (ids) (void)tokenizer->decode(*ids);
}

// Fills every weight component of `schema` from `weights` when they need at
// most kMaxFilledBytes together (shape checks, F16/BF16 conversion, block copies).
inline void fill_weights(const ferrite::WeightSchema& schema, const ferrite::WeightSource& weights) {
  const auto& components = schema.components;
  uint64_t total = 0;
  for (const auto& component : components) {
    auto bytes = component.physical_bytes();
    if (!bytes || *bytes > kMaxFilledBytes - total) return;
    total += *bytes;
  }
  std::vector<std::byte> buffer;
  for (const auto& component : components) {
    buffer.assign(static_cast<size_t>(*component.physical_bytes()), std::byte{0});
    (void)weights.fill(component, buffer);
  }
}

inline void exercise_checkpoint(const ferrite::LlamaCheckpoint& checkpoint) {
  if (checkpoint.vocabulary) exercise_vocabulary(*checkpoint.vocabulary);
  auto family = ferrite::build_llama_family(checkpoint.config);
  if (!family || checkpoint.weights == nullptr) return;
  fill_weights(family->weight_schema(), *checkpoint.weights);
}

// Every family room Ferrite ships (llama, qwen2, qwen3, phi3, gemma3, …):
// built once per process.
inline const ferrite::FamilyRegistry* builtin_family_registry() {
  static const auto registry = ferrite::builtin_families();
  return registry ? &*registry : nullptr;
}

// A checkpoint any room opened: its vocabulary, the room's decoder program
// (at most 64 positions) and its weights.
inline void exercise_family_checkpoint(const ferrite::Checkpoint& checkpoint) {
  if (checkpoint.vocabulary) exercise_vocabulary(*checkpoint.vocabulary);
  if (checkpoint.family == nullptr || !checkpoint.family->build_program) return;
  auto family = checkpoint.family->build_program(checkpoint.config, 64);
  if (!family || checkpoint.weights == nullptr) return;
  fill_weights(family->weight_schema(), *checkpoint.weights);
}

}  // namespace ferrite_fuzz
