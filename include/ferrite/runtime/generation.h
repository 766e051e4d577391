// ferrite/runtime/generation.h — prompt in, tokens out, on a loaded executor.
//
// Contract: every model family's program offers one decoder interface:
// inputs kDecoderTokens and kDecoderPositions (u32[T], T bounded by the
// capacity the caller compiles for: `decoder_compile_inputs(T)`), output
// kDecoderLogits (f32[1, vocab], the last token's). `generate` runs such a
// plan on a loaded executor: it resets
// the states (a new sequence), prefills the prompt in chunks of at most the
// plan's token capacity (positions 0..n-1), then decodes one token per step
// at the next position, choosing each token with `sampler` and calling
// `on_token(id)` as soon as it is chosen (streaming). It stops after `steps`
// new tokens, at `stop_token` or one of `stop_tokens` (not emitted), or at the context length. The
// prompt must be non-empty and fit the context. Timing covers executor
// steps only (prefill and decode measured separately). Memory: every buffer
// is taken before the first step (one prefill chunk's positions, the ids,
// `sampler.reserve(vocab)`); no prefill chunk, decode step or sampled token
// allocates (the kernels' scratch is planned; tests/runtime/llama_forward_test.cc
// counts operator new over the whole generation).
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto stats, generate(*executor, prompt, 64, sampler, eos, 512,
//                                                 [&](uint32_t id) { return print(id); }));
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string_view>
#include <vector>

#include "ferrite/runtime/executor.h"
#include "ferrite/runtime/sampler.h"

namespace ferrite {

inline constexpr std::string_view kDecoderTokens = "value.tokens";
inline constexpr std::string_view kDecoderPositions = "value.positions";
inline constexpr std::string_view kDecoderLogits = "value.logits";

// The decoder's two inputs, each u32[token_capacity], contiguous.
std::map<ProgramValueId, ProgramTensorSpec> decoder_compile_inputs(uint64_t token_capacity);

struct GenerationStats {
  uint64_t prompt_tokens = 0;
  uint64_t generated_tokens = 0;
  // Single-token executor steps after the prefill: generated_tokens - 1 at
  // most (the first token comes from the prefill's logits). Decode speed is
  // decode_steps / decode_seconds.
  uint64_t decode_steps = 0;
  double prefill_seconds = 0;
  double decode_seconds = 0;
  std::vector<uint32_t> tokens;  // the generated ids
  bool context_full = false;     // stopped because every position was used
};

Result<GenerationStats> generate(Executor& executor, std::span<const uint32_t> prompt,
                                 uint64_t steps, Sampler& sampler, std::optional<uint32_t> stop_token,
                                 uint64_t context_length,
                                 const std::function<Result<void>(uint32_t)>& on_token);

// The same, stopping at any of `stop_tokens` (a tokenizer's end-of-generation
// set; not emitted).
Result<GenerationStats> generate(Executor& executor, std::span<const uint32_t> prompt,
                                 uint64_t steps, Sampler& sampler,
                                 std::span<const uint32_t> stop_tokens, uint64_t context_length,
                                 const std::function<Result<void>(uint32_t)>& on_token);

}  // namespace ferrite
