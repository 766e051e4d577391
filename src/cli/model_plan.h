// cli/model_plan.h — a model file's plan: compiled from run settings, or
// accepted from a plan file only by rebuilding it and comparing.
//
// Contract: `compile_model_plan(model_path, settings, digest)` opens the model
// through the family registry (cli/model_files.h), chooses the providers by
// name (default `fast`, with its fallbacks; providers/builtin) for this
// machine, and compiles the family's program with one policy,
// `policy.cpu-run` v1.0: capacity = the memory (`--memory`, default this
// machine's physical memory) with no reserve, 1 active sequence, the token
// capacity as maximum scheduled tokens, linear contiguous storage. Token
// inputs hold `token_capacity` tokens (default kDefaultModelTokenCapacity,
// clamped to 1..context); the program's states hold min(context, the model's
// context) positions (default kDefaultModelContext). `--weights q8_0|q4_0`
// selects the approximate block materializer, which needs the approval
// (`quality_approval`, a file from `ferrite approve-weights`). `ferrite run`,
// `compile`, `explain` and `verify` all compile a model this way, so the same
// settings give the same plan bytes in each.
// The plan records the settings as payload `run_settings`
// (compile_options.h), with the facts of this machine that the plan depends
// on:
// With sequence slots S (`serve`), the program is the decoder's sequence-slot
// form, the policy's maximum active sequences is S and the settings add
// "sequence_slots": S (a plan without it is the one-sequence form).
//   {"context_length": 512, "token_capacity": 64, "maximum_active_sequences": 1,
//    "providers": ["fast"], "instruction_set": "avx512",
//    "memory_bytes": 25181339648, "weights": null | "q8_0",
//    "source_weights_sha256": SHA | null}
// `source_weights_sha256` (runtime/weight_digest.h) is measured unless
// `digest` is kSkip (`explain` of a model reads no weight; its plan records
// null); when measured, a quality approval is also measured again
// (verify_quality_approval: an understated statistic is refused, naming the
// component and both values). Threads are not recorded: they do not change
// results.
//
// `rebuild_model_plan(plan_text, model_path, given)` is how a plan file is
// accepted (`run --plan`, `verify PLAN MODEL`): the file must be intact
// (plan_verify.h read_plan_wire: schema, hash); its `run_settings` supply
// every setting not `given` on the command line (the approval comes from the
// plan's `weight_quality_approval`), except the instruction set and the
// weights digest, which are always this machine's and this model's; a plan
// whose memory exceeds this machine's is refused. The plan is then compiled
// again from the model and this binary's providers, and accepted only when
// the canonical texts are identical; otherwise InvalidExecutionPlan naming
// the first differing JSON path and both values — in `run_settings` first
// (the recipe explains every other difference), then anywhere
// (compare_plan_wire) — with a hint for the common causes: a setting given
// on the command line, another instruction set, other weights, another
// model, another build or a hand edit. Nothing in the file decides
// anything: its settings are only inputs to the trusted rebuild, which
// must reproduce it byte for byte.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(ModelPlan plan, compile_model_plan("m.gguf", {}, WeightsDigest::kMeasure));
//   FERRITE_ASSIGN_OR_RETURN(std::unique_ptr<Executor> executor, plan.load());
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/model_files.h"
#include "cli/plan_sources.h"
#include "ferrite/compiler/weight_materializer.h"
#include "ferrite/plan/program_plan_compiler.h"
#include "ferrite/runtime/executor.h"

namespace ferrite::cli {

inline constexpr uint64_t kDefaultModelContext = 4096;
inline constexpr uint64_t kDefaultModelTokenCapacity = 64;
// The most sequence slots `compile --sequence-slots` and `serve --parallel`
// accept: a bound on what one command line asks a plan and its KV pool to
// hold, well inside the runtime's own (KvBlockStore::kMaxSequenceSlots).
inline constexpr uint64_t kMaxCommandLineSequenceSlots = 256;

// What a user chooses; unset members take the defaults above (or, when a
// plan file is rebuilt, the plan's).
struct ModelPlanSettings {
  std::optional<std::string> tokenizer;  // llama2.c tokenizer file; not part of the plan
  std::optional<uint64_t> context;
  std::optional<uint64_t> token_capacity;
  // S: compile the decoder's sequence-slot form (operations/sequence_slots.h)
  // for S sequences per step (`ferrite serve --parallel S`); the token
  // capacity is then at least S. Unset: the one-sequence form of `run`.
  std::optional<uint64_t> sequence_slots;
  std::vector<std::string> providers;  // names, possibly "a,b"; empty: {"fast"}
  std::optional<std::string> isa;
  // Kernel threads, and the compile's (0: one per hardware thread; the
  // compile: the CPUs this process may use); not part of the plan.
  uint32_t threads = 0;
  std::optional<std::string> weights;           // "q8_0" / "q4_0"
  std::optional<std::string> quality_approval;  // approval file path
  std::optional<uint64_t> memory_bytes;         // default: this machine's memory
  // Where to draw progress bars while hashing and loading weights
  // (cli/progress.h `progress_stream`); nullptr: none. Not part of the plan.
  std::ostream* progress = nullptr;
};

enum class WeightsDigest { kMeasure, kSkip };

struct ModelPlan {
  OpenedModel model;
  CpuProviderRegistry providers;  // the chosen providers' kernels
  std::string kernels;            // "cpu.fast (avx512, 2 threads)"
  WeightMaterializerRegistry materializers;
  ProgramPlanCompilation compiled;
  nlohmann::json run_settings;  // as recorded in the plan
  std::ostream* progress = nullptr;  // the settings' progress stream, for load()

  const ExecutionPlan& plan() const { return compiled.plan(); }
  // Executor::load of the plan with the model's weights and the plan's
  // execution weights and materializer.
  // With `kv`, the executor's KV cache is paged in it (runtime/executor.h).
  Result<std::unique_ptr<Executor>> load(std::shared_ptr<KvBlockStore> kv = nullptr) const;
};

uint64_t machine_memory_bytes();

Result<ModelPlan> compile_model_plan(const std::string& model_path,
                                     const ModelPlanSettings& settings, WeightsDigest digest);

Result<ModelPlan> rebuild_model_plan(std::string_view plan_text, const std::string& model_path,
                                     const ModelPlanSettings& given);

// The model settings of `compile`/`explain`/`verify` for a model file given
// as their PROGRAM (`sources.quality_approval` becomes the approval), after
// refusing program-only options (refuse_program_options_for_models);
// `refuse_model_options` refuses model options (InvalidArgument naming
// the first) when PROGRAM is a program file.
Result<ModelPlanSettings> model_settings(const PlanSourceArgs& sources, ModelPlanSettings model);
Result<void> refuse_model_options(const ModelPlanSettings& model);

// "Does it fit?" before any weight is read (`ferrite explain MODEL`): the
// plan's memory by kind — weights (static), KV and other states,
// activations, workspaces — and their total (the executor allocates exactly
// the plan's resources), against the usable memory (`--memory`, default
// this machine's); and the largest context (≤ the model's) whose plan fits.
// The figures come from plans compiled without a memory bound, so they are
// known even when the plan does not fit (then `fits` is false). Totals are
// affine in the context (states and context-sized workspaces grow by a
// fixed number of bytes per position, up to alignment), so the largest
// context is found from two compiles and confirmed (and, if alignment
// makes the estimate too large, searched down) by compiling at it.
struct MemoryFit {
  uint64_t context_length = 0;        // positions the plan was compiled for
  uint64_t model_context_length = 0;  // what the model declares (capped at 2^20)
  uint64_t weights_bytes = 0;
  uint64_t state_bytes = 0;
  uint64_t activation_bytes = 0;
  uint64_t workspace_bytes = 0;
  uint64_t total_bytes = 0;
  uint64_t usable_bytes = 0;
  bool fits = false;
  uint64_t largest_fitting_context = 0;  // 0: not even one position fits
};
Result<MemoryFit> model_memory_fit(const std::string& model_path, const ModelPlanSettings& settings);
nlohmann::json to_json(const MemoryFit& fit);
std::string render_text(const MemoryFit& fit);

// What `ferrite serve --parallel S [--kv-tokens T]` holds (serve/engine.h),
// from `fit`, the memory fit of the model's sequence-slot plan for S
// sequences (settings.sequence_slots = S): one copy of the weights; the
// activations and workspaces of the one executor, sized for a step of every
// slot; and the one KV block pool every slot pages its KV cache in —
// ceil(T / kServeKvBlockTokens) blocks (T defaults to S × context: S ×
// ceil(context / kServeKvBlockTokens) blocks) of kServeKvBlockTokens
// positions, each block the K and V rows of every layer for its positions
// (state bytes per position × block tokens).
inline constexpr uint64_t kServeKvBlockTokens = 16;
struct ServingFit {
  uint32_t slots = 0;
  uint64_t block_tokens = kServeKvBlockTokens;
  uint64_t block_bytes = 0;
  uint64_t blocks = 0;       // in the pool
  uint64_t pool_tokens = 0;  // positions the pool holds
  uint64_t pool_bytes = 0;
  uint64_t step_bytes = 0;   // activations and workspaces of the one executor
  uint64_t total_bytes = 0;  // weights + pool + step
  uint64_t usable_bytes = 0;
  bool fits = false;
};
Result<ServingFit> serving_fit(const MemoryFit& fit, uint32_t slots,
                               std::optional<uint64_t> kv_tokens = std::nullopt);
nlohmann::json to_json(const ServingFit& fit);
std::string render_text(const ServingFit& fit);

// Reads a plan file (at most kMaxPlanFileBytes) for rebuild_model_plan.
Result<ModelPlan> rebuild_model_plan_file(const std::string& plan_path,
                                          const std::string& model_path,
                                          const ModelPlanSettings& given);

}  // namespace ferrite::cli
