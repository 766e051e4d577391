// ferrite/runtime/generation.h — prompt in, tokens out, on a loaded executor.
//
// Contract: `generate` runs a Llama-family plan (inputs `value.tokens`,
// `value.positions`; output `value.logits`) on a loaded executor: it resets
// the states (a new sequence), prefills the prompt in chunks of at most the
// plan's token capacity (positions 0..n-1), then decodes one token per step
// at the next position, choosing each token with `sampler` and calling
// `on_token(id)` as soon as it is chosen (streaming). It stops after `steps`
// new tokens, at `stop_token` (not emitted), or at the context length. The
// prompt must be non-empty and fit the context. Timing covers executor
// steps only (prefill and decode measured separately).
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto stats, generate(*executor, prompt, 64, sampler, eos, 512,
//                                                 [&](uint32_t id) { return print(id); }));
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "ferrite/runtime/executor.h"
#include "ferrite/runtime/sampler.h"

namespace ferrite {

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

}  // namespace ferrite
