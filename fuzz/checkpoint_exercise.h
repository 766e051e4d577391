// fuzz/checkpoint_exercise.h — what the model-file targets do with a
// checkpoint that opened (families/llama/llama_checkpoint.h).
//
// Contract: `exercise_checkpoint(checkpoint)` builds the `llama` family from
// the checkpoint's config (build_llama_family) and, when every weight
// component together needs at most kMaxFilledBytes, asks the checkpoint's
// WeightSource to fill each one (shape checks, F16/BF16 conversion); with a
// vocabulary it also builds a Tokenizer and encodes and decodes a fixed text.
// Every error is ignored: the targets look for crashes, leaks and hangs, not
// for rejections.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "families/llama/llama_checkpoint.h"
#include "families/llama/llama_family.h"
#include "ferrite/runtime/tokenizer.h"

namespace ferrite_fuzz {

inline constexpr uint64_t kMaxFilledBytes = uint64_t{16} << 20;

inline void exercise_vocabulary(const ferrite::Vocabulary& vocabulary) {
  auto tokenizer = ferrite::Tokenizer::create(vocabulary);
  if (!tokenizer) return;
  auto ids = tokenizer->encode("Once upon a time, a f\xc3\xbczzy \xff cat.");
  if (ids) (void)tokenizer->decode(*ids);
}

inline void exercise_checkpoint(const ferrite::LlamaCheckpoint& checkpoint) {
  if (checkpoint.vocabulary) exercise_vocabulary(*checkpoint.vocabulary);
  auto family = ferrite::build_llama_family(checkpoint.config);
  if (!family || checkpoint.weights == nullptr) return;
  const auto& components = family->weight_schema().components;
  uint64_t total = 0;
  for (const auto& component : components) {
    auto bytes = component.physical_bytes();
    if (!bytes || *bytes > kMaxFilledBytes - total) return;
    total += *bytes;
  }
  std::vector<std::byte> buffer;
  for (const auto& component : components) {
    buffer.assign(static_cast<size_t>(*component.physical_bytes()), std::byte{0});
    (void)checkpoint.weights->fill(component, buffer);
  }
}

}  // namespace ferrite_fuzz
