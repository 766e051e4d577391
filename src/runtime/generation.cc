#include "ferrite/runtime/generation.h"

#include <algorithm>

#include <chrono>
#include <numeric>

#include <fmt/format.h>

namespace ferrite {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

std::map<ProgramValueId, ProgramTensorSpec> decoder_compile_inputs(uint64_t token_capacity) {
  const ProgramTensorSpec spec{{token_capacity}, ElementType::kU32, ContiguousLayout{}};
  return {{ProgramValueId::literal(kDecoderTokens), spec},
          {ProgramValueId::literal(kDecoderPositions), spec}};
}

Result<GenerationStats> generate(Executor& executor, std::span<const uint32_t> prompt,
                                 uint64_t steps, Sampler& sampler, std::optional<uint32_t> stop_token,
                                 uint64_t context_length,
                                 const std::function<Result<void>(uint32_t)>& on_token) {
  const std::span<const uint32_t> stops =
      stop_token ? std::span<const uint32_t>(&*stop_token, 1) : std::span<const uint32_t>();
  return generate(executor, prompt, steps, sampler, stops, context_length, on_token);
}

Result<GenerationStats> generate(Executor& executor, std::span<const uint32_t> prompt,
                                 uint64_t steps, Sampler& sampler,
                                 std::span<const uint32_t> stop_tokens, uint64_t context_length,
                                 const std::function<Result<void>(uint32_t)>& on_token) {
  if (prompt.empty()) return make_error(ErrorCode::kInvalidArgument, "the prompt has no tokens");
  if (prompt.size() > context_length) {
    return make_error(ErrorCode::kInvalidArgument, "the prompt has {} tokens; the context holds {}",
                      prompt.size(), context_length);
  }
  const auto tokens_id = ProgramValueId::literal(kDecoderTokens);
  const auto positions_id = ProgramValueId::literal(kDecoderPositions);
  const auto logits_id = ProgramValueId::literal(kDecoderLogits);
  const uint64_t capacity = executor.token_capacity();
  GenerationStats stats;
  stats.prompt_tokens = prompt.size();
  stats.tokens.reserve(steps);
  std::vector<uint32_t> positions(capacity);
  {
    // Every buffer of the loop is taken here: nothing allocates per token.
    FERRITE_ASSIGN_OR_RETURN(std::span<const float> logits, executor.output_f32(logits_id));
    sampler.reserve(logits.size());
  }
  executor.reset_states();

  auto start = Clock::now();
  for (uint64_t done = 0; done < prompt.size();) {
    const uint64_t n = std::min<uint64_t>(capacity, prompt.size() - done);
    std::iota(positions.begin(), positions.begin() + static_cast<std::ptrdiff_t>(n),
              static_cast<uint32_t>(done));
    FERRITE_RETURN_IF_ERROR(executor.write_input(tokens_id, prompt.subspan(done, n)));
    FERRITE_RETURN_IF_ERROR(executor.write_input(positions_id, std::span(positions.data(), n)));
    FERRITE_RETURN_IF_ERROR(executor.run(n));
    done += n;
  }
  stats.prefill_seconds = seconds_since(start);

  uint64_t position = prompt.size();
  start = Clock::now();
  for (uint64_t step = 0; step < steps; ++step) {
    FERRITE_ASSIGN_OR_RETURN(std::span<const float> logits, executor.output_f32(logits_id));
    FERRITE_ASSIGN_OR_RETURN(uint32_t next, sampler.sample(logits));
    if (std::find(stop_tokens.begin(), stop_tokens.end(), next) != stop_tokens.end()) break;
    stats.tokens.push_back(next);
    ++stats.generated_tokens;
    FERRITE_RETURN_IF_ERROR(on_token(next));
    if (step + 1 == steps) break;
    if (position >= context_length) {  // `next` would need position `context_length`
      stats.context_full = true;
      break;
    }
    const uint32_t pos = static_cast<uint32_t>(position);
    FERRITE_RETURN_IF_ERROR(executor.write_input(tokens_id, std::span(&next, 1)));
    FERRITE_RETURN_IF_ERROR(executor.write_input(positions_id, std::span(&pos, 1)));
    FERRITE_RETURN_IF_ERROR(executor.run(1));
    ++stats.decode_steps;
    ++position;
  }
  stats.decode_seconds = seconds_since(start);
  return stats;
}

}  // namespace ferrite
