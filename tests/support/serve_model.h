// tests/support/serve_model.h — a llama model compiled for serving tests:
// the plan for cpu.reference alone or cpu.fast (falling back to
// cpu.reference), and S executors of it sharing one copy of the weights.
#pragma once

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "families/llama/llama_checkpoint.h"
#include "ferrite/operations/sequence_slots.h"
#include "ferrite/plan/program_plan_compiler.h"
#include "ferrite/runtime/generation.h"
#include "ferrite/runtime/kv_block_pool.h"
#include "ferrite/runtime/tokenizer.h"
#include "providers/cpu_fast/cpu_fast.h"
#include "providers/cpu_reference/cpu_reference.h"

namespace ferrite::testing {

inline std::filesystem::path shared_models_dir() {
  return std::filesystem::path(FERRITE_SOURCE_DIR) / ".." / "shared" / "models";
}

struct ServeModel {
  LlamaCheckpoint checkpoint;
  PreparedModelFamily family;
  CpuProviderRegistry providers;
  std::optional<ExecutablePlan> executable;
  std::optional<Tokenizer> tokenizer;
  uint64_t context_length = 0;
  // The same model in sequence-slot form, for a serving engine (set by the
  // tests that need both; see engine_executor).
  std::shared_ptr<const ServeModel> sequence_form;

  // The first executor loads the weights; the others share them.
  Result<std::vector<std::unique_ptr<Executor>>> executors(uint32_t count) const {
    std::vector<std::unique_ptr<Executor>> out;
    for (uint32_t i = 0; i < count; ++i) {
      if (out.empty()) {
        FERRITE_ASSIGN_OR_RETURN(auto first,
                                 Executor::load(*executable, family, providers, *checkpoint.weights));
        out.push_back(std::move(first));
      } else {
        FERRITE_ASSIGN_OR_RETURN(
            auto next, Executor::load_sharing_weights(*out.front(), *executable, family, providers));
        out.push_back(std::move(next));
      }
    }
    return out;
  }

  // `count` executors for serving: all share one copy of the weights (the
  // first loads it) and page their KV caches in one store of `blocks` blocks
  // of `block_tokens` positions (0 blocks: a whole context per executor).
  // With `sequence_slots` S, each executor runs S sequences (a plan of the
  // sequence-slot form; `blocks` 0 then covers count × S contexts).
  Result<std::vector<std::unique_ptr<Executor>>> paged_executors(uint32_t count,
                                                                  uint64_t block_tokens = 16,
                                                                  uint64_t blocks = 0,
                                                                  uint64_t sequence_slots = 1) const {
    if (blocks == 0) {
      blocks = count * sequence_slots * KvBlockPool::blocks_covering(context_length, block_tokens);
    }
    FERRITE_ASSIGN_OR_RETURN(auto store,
                             KvBlockStore::create(executable->execution_plan(), block_tokens, blocks,
                                                  providers.allocator(), sequence_slots));
    const WeightMaterializerRegistry identity = WeightMaterializerRegistry::identity_only();
    FERRITE_ASSIGN_OR_RETURN(ExecutionWeightPlan execution_weights,
                             identity.select(family, WeightMaterializerSelection{}));
    std::vector<std::unique_ptr<Executor>> out;
    FERRITE_ASSIGN_OR_RETURN(
        auto first, Executor::load(*executable, family, providers, *checkpoint.weights,
                                   execution_weights,
                                   *identity.find(execution_weights.materializer().id), store));
    out.push_back(std::move(first));
    for (uint32_t i = 1; i < count; ++i) {
      FERRITE_ASSIGN_OR_RETURN(auto next, Executor::load_sharing_weights(
                                              *out.front(), *executable, family, providers, store));
      out.push_back(std::move(next));
    }
    return out;
  }
};

// The one executor a serving engine runs: the plan must be the sequence-slot
// form (compile_serve_model with `sequences` ≥ `slots`); its KV cache is paged
// in a store of `slots` sequence slots and `blocks` blocks of `block_tokens`
// (0 blocks: a whole context per slot).
inline Result<std::unique_ptr<Executor>> engine_executor(const ServeModel& model, uint32_t slots,
                                                         uint64_t block_tokens = 16,
                                                         uint64_t blocks = 0) {
  FERRITE_ASSIGN_OR_RETURN(auto executors,
                           model.paged_executors(1, block_tokens, blocks, slots));
  return std::move(executors.front());
}

// The decoder's logits after the executor's last step (empty on error).
inline std::vector<float> decoder_logits(const Executor& ex) {
  auto out = ex.output_f32(ProgramValueId::literal(kDecoderLogits));
  return out ? std::vector<float>(out->begin(), out->end()) : std::vector<float>();
}

// Equal bit for bit, and not empty.
inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return !a.empty() && a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// `fast`: cpu.fast preferred (2 threads), else cpu.reference alone.
// `sequences` S > 0: the program's sequence-slot form (operations/sequence_slots.h)
// for S sequences of `capacity` tokens in all per step.
inline Result<std::unique_ptr<ServeModel>> compile_serve_model(const std::filesystem::path& path,
                                                               uint64_t capacity, bool fast,
                                                               uint64_t sequences = 0) {
  FERRITE_ASSIGN_OR_RETURN(auto checkpoint, open_llama_checkpoint(path, std::nullopt));
  FERRITE_ASSIGN_OR_RETURN(auto family, build_llama_family(checkpoint.config));
  if (sequences != 0) {
    FERRITE_ASSIGN_OR_RETURN(family, decoder_with_sequence_slots(family));
  }
  auto model = std::unique_ptr<ServeModel>(
      new ServeModel{std::move(checkpoint), std::move(family), {}, std::nullopt, std::nullopt, 0,
                     nullptr});
  FERRITE_RETURN_IF_ERROR(add_cpu_reference_providers(model->providers));
  if (fast) {
    FERRITE_RETURN_IF_ERROR(
        add_cpu_fast_providers(model->providers, {.threads = 2, .isa = std::nullopt}));
  }
  FERRITE_ASSIGN_OR_RETURN(auto target,
                           model->providers.target(host_cpu_device(uint64_t{1} << 32)));
  auto inputs = decoder_compile_inputs(capacity);
  if (sequences != 0) inputs = sequence_compile_inputs(std::move(inputs), sequences);
  FERRITE_ASSIGN_OR_RETURN(auto options, ProgramPlanCompileOptions::create(std::move(inputs)));
  if (fast) prefer_providers(kCpuFastProviderPrefix, model->family, options);
  const RuntimePolicy policy{PolicyId::literal("policy.test"), {1, 0}, uint64_t{1} << 32, 0,
                             std::max<uint64_t>(sequences, 1), capacity,
                             {DynamicStorageProfile::linear_contiguous()}};
  FERRITE_ASSIGN_OR_RETURN(auto compiled,
                           ProgramPlanCompiler::compile(model->family, target.catalog, policy,
                                                        target.estimators,
                                                        WeightMaterializerRegistry::identity_only(),
                                                        options));
  model->executable.emplace(std::move(compiled.executable));
  if (model->checkpoint.vocabulary) {
    FERRITE_ASSIGN_OR_RETURN(auto tokenizer, Tokenizer::create(*model->checkpoint.vocabulary));
    model->tokenizer.emplace(std::move(tokenizer));
  }
  model->context_length = model->checkpoint.config.context_length;
  return model;
}

}  // namespace ferrite::testing
