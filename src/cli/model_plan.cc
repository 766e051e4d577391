#include "cli/model_plan.h"

#include <unistd.h>

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "cli/plan_explanation.h"
#include "cli/plan_sources.h"
#include "cli/progress.h"
#include "ferrite/core/checked_math.h"
#include "ferrite/core/json_reader.h"
#include "ferrite/core/parallel_indices.h"
#include "ferrite/format/weight_quality_file.h"
#include "ferrite/materializers/ggml_block_materializer.h"
#include "ferrite/operations/sequence_slots.h"
#include "ferrite/plan/plan_verify.h"
#include "ferrite/runtime/generation.h"
#include "ferrite/runtime/kv_block_pool.h"
#include "ferrite/runtime/weight_digest.h"
#include "providers/builtin/builtin_providers.h"

namespace ferrite::cli {
namespace {

// The members of `run_settings` rebuild_model_plan reads, typed.
struct RecordedSettings {
  std::optional<uint64_t> context;
  std::optional<uint64_t> token_capacity;
  std::optional<uint64_t> sequence_slots;
  std::vector<std::string> providers;
  std::optional<uint64_t> memory_bytes;
  std::optional<std::string> weights;
};

Result<RecordedSettings> recorded_settings(const nlohmann::json& payload) {
  auto found = payload.find("run_settings");
  if (found == payload.end()) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "the plan records no run settings (`$.payload.run_settings`): it was not "
                      "compiled from a model file; compile one with `ferrite compile MODEL -o "
                      "PLAN.json`");
  }
  const nlohmann::json& s = *found;
  if (!s.is_object()) {
    return make_error(ErrorCode::kSerialization, "`$.payload.run_settings` must be an object");
  }
  RecordedSettings out;
  auto number = [&](const char* key, std::optional<uint64_t>& into) -> Result<void> {
    auto it = s.find(key);
    if (it == s.end()) return {};
    if (!it->is_number_unsigned() || it->get<uint64_t>() == 0) {
      return make_error(ErrorCode::kSerialization,
                        "`$.payload.run_settings.{}` must be a positive integer", key);
    }
    into = it->get<uint64_t>();
    return {};
  };
  FERRITE_RETURN_IF_ERROR(number("context_length", out.context));
  FERRITE_RETURN_IF_ERROR(number("token_capacity", out.token_capacity));
  FERRITE_RETURN_IF_ERROR(number("sequence_slots", out.sequence_slots));
  FERRITE_RETURN_IF_ERROR(number("memory_bytes", out.memory_bytes));
  if (auto it = s.find("providers"); it != s.end()) {
    if (!it->is_array()) {
      return make_error(ErrorCode::kSerialization,
                        "`$.payload.run_settings.providers` must be an array of names");
    }
    for (const auto& name : *it) {
      if (!name.is_string()) {
        return make_error(ErrorCode::kSerialization,
                          "`$.payload.run_settings.providers` must be an array of names");
      }
      out.providers.push_back(name.get<std::string>());
    }
  }
  if (auto it = s.find("weights"); it != s.end() && !it->is_null()) {
    if (!it->is_string()) {
      return make_error(ErrorCode::kSerialization,
                        "`$.payload.run_settings.weights` must be a format name or null");
    }
    out.weights = it->get<std::string>();
  }
  return out;
}

// The approval a plan carries, read as an approval file would be.
Result<std::optional<WeightQualityApproval>> recorded_approval(const nlohmann::json& payload) {
  auto found = payload.find("weight_quality_approval");
  if (found == payload.end()) return std::optional<WeightQualityApproval>();
  const nlohmann::json file{{"format", kWeightQualityFileFormat},
                            {"format_version", kWeightQualityFileFormatVersion},
                            {"approval", *found}};
  FERRITE_ASSIGN_OR_RETURN(WeightQualityApproval approval, read_weight_quality_text(file.dump()),
                           "the plan's `$.payload.weight_quality_approval`");
  return std::optional<WeightQualityApproval>(std::move(approval));
}

// Why a rebuild may differ at `path`, for the refusal message.
std::string_view difference_hint(std::string_view path) {
  if (path.starts_with("$.payload.run_settings.instruction_set")) {
    return "the plan was compiled for another instruction set (another CPU, or --isa)";
  }
  if (path.starts_with("$.payload.run_settings.source_weights_sha256")) {
    return "the plan was compiled for other weights";
  }
  if (path.starts_with("$.payload.run_settings.context_length") ||
      path.starts_with("$.payload.run_settings.token_capacity") ||
      path.starts_with("$.payload.run_settings.memory_bytes") ||
      path.starts_with("$.payload.run_settings.weights")) {
    return "the command line asks for other settings than the plan was compiled with; drop them "
           "to use the plan's";
  }
  if (path.starts_with("$.payload.run_settings.providers") ||
      path.starts_with("$.payload.capability_catalog_fingerprint")) {
    return "the plan was compiled for other providers";
  }
  if (path.starts_with("$.payload.prepared_family_fingerprint") ||
      path.starts_with("$.payload.program_fingerprint") ||
      path.starts_with("$.payload.family_id")) {
    return "the plan was compiled for another model";
  }
  return "the plan was compiled by another build of ferrite, or edited";
}

// `requested` or the plan's approval, and the materializer either names.
Result<void> select_weights(const ModelPlanSettings& settings,
                            std::optional<WeightQualityApproval> recorded,
                            ProgramPlanCompileOptions& options) {
  std::optional<WeightMaterializerId> id;
  if (settings.weights) {
    FERRITE_ASSIGN_OR_RETURN(id, block_materializer_option("--weights", *settings.weights));
  }
  if (settings.quality_approval || !recorded) {
    return select_weight_materializer(std::move(id), settings.quality_approval, options);
  }
  if (!id) id = recorded->materializer_id;
  options.require_weight_materializer(std::move(*id), std::move(*recorded));
  return {};
}

Result<ModelPlan> compile_with(const std::string& model_path, const ModelPlanSettings& settings,
                               std::optional<WeightQualityApproval> recorded_approval,
                               WeightsDigest digest) {
  const uint64_t context_limit = settings.context.value_or(kDefaultModelContext);
  if (context_limit == 0) {
    return make_error(ErrorCode::kInvalidArgument, "--context must be at least 1");
  }
  FERRITE_ASSIGN_OR_RETURN(OpenedModel model,
                           open_model(model_path, settings.tokenizer, context_limit));
  FERRITE_ASSIGN_OR_RETURN(ProviderRegistry registry, builtin_providers());
  const std::vector<std::string> requested =
      settings.providers.empty() ? std::vector<std::string>{"fast"} : settings.providers;
  FERRITE_ASSIGN_OR_RETURN(std::vector<std::string> names, split_provider_names(requested));
  const ProviderSettings provider_settings{.threads = settings.threads, .isa = settings.isa};
  FERRITE_ASSIGN_OR_RETURN(ProviderSelection selection, registry.select(names, provider_settings));
  FERRITE_ASSIGN_OR_RETURN(std::string isa,
                           selection.chosen.front()->instruction_set(provider_settings));
  const uint64_t machine = machine_memory_bytes();
  const uint64_t memory = settings.memory_bytes.value_or(machine);
  if (memory == 0) return make_error(ErrorCode::kInvalidArgument, "--memory must be positive");
  FERRITE_ASSIGN_OR_RETURN(CompilationTarget target,
                           selection.kernels.target(host_cpu_device(memory)));
  // The sequence-slot form: S sequences per step, every one with a token.
  const uint64_t sequences = settings.sequence_slots.value_or(1);
  if (sequences == 0 || sequences > kMaxCommandLineSequenceSlots) {
    return make_error(ErrorCode::kInvalidArgument, "sequence slots must be 1 to {}, not {}",
                      kMaxCommandLineSequenceSlots, sequences);
  }
  const uint64_t capacity = std::clamp<uint64_t>(
      std::max(settings.token_capacity.value_or(kDefaultModelTokenCapacity), sequences), 1,
      model.context_length);
  auto inputs = decoder_compile_inputs(capacity);
  if (settings.sequence_slots) {
    if (sequences > capacity) {
      return make_error(ErrorCode::kInvalidArgument,
                        "{} sequence slots need a step of at least {} tokens; the context holds {}",
                        sequences, sequences, model.context_length);
    }
    FERRITE_ASSIGN_OR_RETURN(model.family, decoder_with_sequence_slots(model.family));
    inputs = sequence_compile_inputs(std::move(inputs), sequences);
  }
  FERRITE_ASSIGN_OR_RETURN(auto options, ProgramPlanCompileOptions::create(std::move(inputs)));
  selection.prefer(model.family, options);
  // The compile runs on as many threads as the kernels may use, at most
  // kMaxCompileThreads (0: the CPUs this process may use); the plan's bytes
  // do not depend on it.
  options.set_compile_threads(std::min(settings.threads, kMaxCompileThreads));
  FERRITE_RETURN_IF_ERROR(select_weights(settings, std::move(recorded_approval), options));
  nlohmann::json weights_digest = nullptr;
  if (digest == WeightsDigest::kMeasure) {
    ProgressBar bar(settings.progress, "hashing weights",
                    weight_source_bytes(model.family.weight_schema()));
    ProgressWeightSource counted(*model.checkpoint.weights, bar);
    FERRITE_ASSIGN_OR_RETURN(weights_digest,
                             source_weights_sha256(model.family.weight_schema(), counted));
  }
  nlohmann::json run_settings{
      {"context_length", model.context_length},
      {"token_capacity", capacity},
      {"maximum_active_sequences", sequences},
      {"providers", names},
      {"instruction_set", isa},
      {"memory_bytes", memory},
      {"weights", settings.weights ? nlohmann::json(*settings.weights) : nlohmann::json(nullptr)},
      {"source_weights_sha256", weights_digest}};
  // Only sequence-slot plans record the form (one-sequence plans keep their bytes).
  if (settings.sequence_slots) run_settings["sequence_slots"] = sequences;
  FERRITE_RETURN_IF_ERROR(options.record_run_settings(run_settings));
  const RuntimePolicy policy{PolicyId::literal("policy.cpu-run"), {1, 0}, memory, 0, sequences,
                             capacity, {DynamicStorageProfile::linear_contiguous()}};
  FERRITE_ASSIGN_OR_RETURN(WeightMaterializerRegistry materializers,
                           default_weight_materializers());
  auto compiled = ProgramPlanCompiler::compile(model.family, target.catalog, policy,
                                               target.estimators, materializers, options);
  if (!compiled &&
      compiled.error().code() == ErrorCode::kWeightMaterializerQualityApprovalRequired &&
      !settings.quality_approval) {
    const Status& status = compiled.error();
    return make_error(status.code(),
                      "{}; measure the error with `ferrite approve-weights {} --weights {} -o "
                      "APPROVAL.json`, review it, and pass --quality-approval APPROVAL.json",
                      status.message(), model_path, settings.weights.value_or("FORMAT"));
  }
  FERRITE_RETURN_IF_ERROR(compiled);
  if (digest == WeightsDigest::kMeasure) {
    // The weights are at hand: an approval (given, or carried by a plan
    // file) is measured again, never trusted as written.
    const ExecutionWeightPlan& execution_weights = compiled->resolution.execution_weights;
    const WeightSource& weights = *model.checkpoint.weights;
    FERRITE_RETURN_IF_ERROR(verify_quality_approval(
        model.family,
        [&](const WeightComponentSpec& c, std::span<std::byte> to) { return weights.fill(c, to); },
        execution_weights, *materializers.find(execution_weights.materializer().id)));
  }
  return ModelPlan{std::move(model),         std::move(selection.kernels),
                   std::move(selection.description), std::move(materializers),
                   std::move(*compiled),     std::move(run_settings),
                   settings.progress};
}

// A memory bound no plan reaches: fit figures are computed under it.
constexpr uint64_t kUnboundedMemory = uint64_t{1} << 60;
constexpr uint64_t kMaximumFitContext = uint64_t{1} << 20;

// The plan's memory at `context` positions, by kind, with no memory bound.
Result<MemoryFit> memory_at(const std::string& model_path, ModelPlanSettings settings,
                            uint64_t context) {
  settings.context = context;
  settings.memory_bytes = kUnboundedMemory;
  FERRITE_ASSIGN_OR_RETURN(ModelPlan plan,
                           compile_with(model_path, settings, std::nullopt, WeightsDigest::kSkip));
  MemoryFit fit;
  fit.context_length = plan.model.context_length;
  const PlanMemorySummary& memory = plan.plan().memory();
  for (const PlanResourceSummary& r : memory.resources) {
    uint64_t* into = &fit.activation_bytes;
    switch (r.kind) {
      case PlanResourceKind::kStatic:
        into = r.usage == BufferUsage::kWeights ? &fit.weights_bytes : &fit.workspace_bytes;
        break;
      case PlanResourceKind::kState: into = &fit.state_bytes; break;
      case PlanResourceKind::kActivation: into = &fit.activation_bytes; break;
      case PlanResourceKind::kWorkspace: into = &fit.workspace_bytes; break;
    }
    auto sum = checked_add(*into, r.size_bytes);
    if (!sum) return make_error(ErrorCode::kInvalidExecutionPlan, "plan memory overflows u64");
    *into = *sum;
  }
  fit.total_bytes = memory.allocated_bytes;
  return fit;
}

}  // namespace

Result<MemoryFit> model_memory_fit(const std::string& model_path,
                                   const ModelPlanSettings& settings) {
  const uint64_t usable = settings.memory_bytes.value_or(machine_memory_bytes());
  FERRITE_ASSIGN_OR_RETURN(
      MemoryFit fit, memory_at(model_path, settings, settings.context.value_or(kDefaultModelContext)));
  FERRITE_ASSIGN_OR_RETURN(MemoryFit longest, memory_at(model_path, settings, kMaximumFitContext));
  fit.model_context_length = longest.context_length;
  fit.usable_bytes = usable;
  fit.fits = fit.total_bytes <= usable;
  auto total_at = [&](uint64_t context) -> Result<uint64_t> {
    FERRITE_ASSIGN_OR_RETURN(MemoryFit at, memory_at(model_path, settings, context));
    return at.total_bytes;
  };
  if (longest.total_bytes <= usable) {
    fit.largest_fitting_context = longest.context_length;
    return fit;
  }
  FERRITE_ASSIGN_OR_RETURN(uint64_t at_one, total_at(1));
  if (at_one > usable) return fit;  // largest_fitting_context stays 0
  // total(c) ≈ at_one + per_position × (c - 1): estimate, then confirm.
  const uint64_t span = longest.context_length - 1;
  const uint64_t growth = longest.total_bytes - at_one;  // > usable - at_one ≥ 0
  const long double room = static_cast<long double>(usable - at_one);  // an estimate only
  uint64_t low = 1;
  uint64_t high = longest.context_length - 1;  // the longest does not fit
  const uint64_t estimate =
      1 + static_cast<uint64_t>(room * static_cast<long double>(span) / static_cast<long double>(growth));
  if (estimate >= low && estimate <= high) {
    FERRITE_ASSIGN_OR_RETURN(uint64_t total, total_at(estimate));
    if (total <= usable) {
      low = estimate;
      // Alignment can only make the estimate short by a little: look up a step.
      if (estimate < high) {
        FERRITE_ASSIGN_OR_RETURN(uint64_t next, total_at(estimate + 1));
        if (next > usable) high = estimate;
      }
    } else {
      high = estimate - 1;
    }
  }
  while (low < high) {  // largest c in [low, high] with total(c) ≤ usable; total(low) fits
    const uint64_t middle = low + (high - low + 1) / 2;
    FERRITE_ASSIGN_OR_RETURN(uint64_t total, total_at(middle));
    if (total <= usable) {
      low = middle;
    } else {
      high = middle - 1;
    }
  }
  fit.largest_fitting_context = low;
  return fit;
}

nlohmann::json to_json(const MemoryFit& fit) {
  return nlohmann::json{{"context_length", fit.context_length},
                        {"model_context_length", fit.model_context_length},
                        {"weights_bytes", fit.weights_bytes},
                        {"state_bytes", fit.state_bytes},
                        {"activation_bytes", fit.activation_bytes},
                        {"workspace_bytes", fit.workspace_bytes},
                        {"total_bytes", fit.total_bytes},
                        {"usable_bytes", fit.usable_bytes},
                        {"fits", fit.fits},
                        {"largest_fitting_context", fit.largest_fitting_context}};
}

std::string render_text(const MemoryFit& fit) {
  std::string text = fmt::format(
      "memory before loading, at context {}: weights {} · states (KV cache) {} · activations {} "
      "· workspaces {} · total {} of {} usable: {}\n",
      fit.context_length, human_bytes(fit.weights_bytes), human_bytes(fit.state_bytes),
      human_bytes(fit.activation_bytes), human_bytes(fit.workspace_bytes),
      human_bytes(fit.total_bytes), human_bytes(fit.usable_bytes),
      fit.fits ? "fits" : "does NOT fit");
  if (fit.largest_fitting_context == 0) {
    text += "largest context that fits: none (even one position needs more than is usable)\n";
  } else {
    text += fmt::format("largest context that fits: {}{}\n", fit.largest_fitting_context,
                        fit.largest_fitting_context == fit.model_context_length
                            ? " (all of the model's context)"
                            : fmt::format(" of the model's {}", fit.model_context_length));
  }
  return text;
}

Result<ServingFit> serving_fit(const MemoryFit& fit, uint32_t slots,
                               std::optional<uint64_t> kv_tokens) {
  if (slots == 0 || fit.context_length == 0 || (kv_tokens && *kv_tokens == 0)) {
    return make_error(ErrorCode::kInvalidArgument,
                      "serving needs at least 1 slot, 1 position and 1 KV position");
  }
  ServingFit out;
  out.slots = slots;
  out.usable_bytes = fit.usable_bytes;
  const uint64_t per_sequence = KvBlockPool::blocks_covering(fit.context_length, out.block_tokens);
  // The states are the KV cache: token-scaled, state_bytes / context per position.
  const uint64_t per_position = fit.state_bytes / fit.context_length;
  auto block = checked_mul(per_position, out.block_tokens);
  auto blocks = kv_tokens ? std::optional<uint64_t>(
                                KvBlockPool::blocks_covering(*kv_tokens, out.block_tokens))
                          : checked_mul(per_sequence, uint64_t{slots});
  auto pool_tokens = blocks ? checked_mul(*blocks, out.block_tokens) : std::nullopt;
  auto pool = block && blocks ? checked_mul(*block, *blocks) : std::nullopt;
  auto step = checked_add(fit.activation_bytes, fit.workspace_bytes);
  auto total = step && pool ? checked_add(fit.weights_bytes, *step) : std::nullopt;
  if (total) total = checked_add(*total, *pool);
  if (!pool_tokens || !pool || !total) {
    return make_error(ErrorCode::kInvalidArgument, "{} slots of this plan overflow 64-bit sizes",
                      slots);
  }
  out.block_bytes = *block;
  out.blocks = *blocks;
  out.pool_tokens = *pool_tokens;
  out.pool_bytes = *pool;
  out.step_bytes = *step;
  out.total_bytes = *total;
  out.fits = out.total_bytes <= out.usable_bytes;
  return out;
}

nlohmann::json to_json(const ServingFit& fit) {
  return nlohmann::json{{"slots", fit.slots},
                        {"kv_block_tokens", fit.block_tokens},
                        {"kv_block_bytes", fit.block_bytes},
                        {"kv_blocks", fit.blocks},
                        {"kv_pool_tokens", fit.pool_tokens},
                        {"kv_pool_bytes", fit.pool_bytes},
                        {"step_bytes", fit.step_bytes},
                        {"total_bytes", fit.total_bytes},
                        {"usable_bytes", fit.usable_bytes},
                        {"fits", fit.fits}};
}

std::string render_text(const ServingFit& fit) {
  return fmt::format(
      "serving (`ferrite serve --parallel {}`): one KV pool of {} blocks × {} positions ({} per "
      "block) = {} positions, {}, paged by every slot · activations and workspaces of one step "
      "of every slot {} · weights once · total {} of {} usable: {}\n",
      fit.slots, fit.blocks, fit.block_tokens, human_bytes(fit.block_bytes), fit.pool_tokens,
      human_bytes(fit.pool_bytes), human_bytes(fit.step_bytes), human_bytes(fit.total_bytes),
      human_bytes(fit.usable_bytes), fit.fits ? "fits" : "does NOT fit");
}

uint64_t machine_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return uint64_t{1} << 32;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
}

Result<std::unique_ptr<Executor>> ModelPlan::load(std::shared_ptr<KvBlockStore> kv) const {
  const ExecutionWeightPlan& execution_weights = compiled.resolution.execution_weights;
  const WeightMaterializer* materializer = materializers.find(execution_weights.materializer().id);
  if (materializer == nullptr) {
    return make_error(ErrorCode::kInvalidExecutionPlan, "materializer `{}` is not registered",
                      execution_weights.materializer().id.str());
  }
  ProgressBar bar(progress, "loading weights", weight_source_bytes(model.family.weight_schema()));
  ProgressWeightSource counted(*model.checkpoint.weights, bar);
  return Executor::load(compiled.executable, model.family, providers, counted, execution_weights,
                        *materializer, std::move(kv));
}

Result<ModelPlan> compile_model_plan(const std::string& model_path,
                                     const ModelPlanSettings& settings, WeightsDigest digest) {
  return compile_with(model_path, settings, std::nullopt, digest);
}

Result<ModelPlan> rebuild_model_plan(std::string_view plan_text, const std::string& model_path,
                                     const ModelPlanSettings& given) {
  FERRITE_ASSIGN_OR_RETURN(StreamedJson wire, read_plan_wire(plan_text));
  const nlohmann::json& payload = wire.document()["payload"];
  FERRITE_ASSIGN_OR_RETURN(RecordedSettings recorded, recorded_settings(payload));
  ModelPlanSettings settings = given;
  if (!settings.context) settings.context = recorded.context;
  if (!settings.token_capacity) settings.token_capacity = recorded.token_capacity;
  if (!settings.sequence_slots) settings.sequence_slots = recorded.sequence_slots;
  if (settings.providers.empty()) settings.providers = recorded.providers;
  if (!settings.weights) settings.weights = recorded.weights;
  if (!settings.memory_bytes) settings.memory_bytes = recorded.memory_bytes;
  const uint64_t machine = machine_memory_bytes();
  if (settings.memory_bytes && *settings.memory_bytes > machine) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "the plan was compiled for {} bytes of memory; this machine has {}",
                      *settings.memory_bytes, machine)
        .with_field("json_path", "$.payload.run_settings.memory_bytes");
  }
  std::optional<WeightQualityApproval> approval;
  if (!given.quality_approval) {
    FERRITE_ASSIGN_OR_RETURN(approval, recorded_approval(payload));
  }
  FERRITE_ASSIGN_OR_RETURN(ModelPlan rebuilt, compile_with(model_path, settings, std::move(approval),
                                                           WeightsDigest::kMeasure));
  // The settings are the recipe: a difference there explains every other
  // (a context given on the command line resizes the KV cache, ...), so it
  // is named first.
  const nlohmann::json& expected = rebuilt.plan().header()["run_settings"];
  const std::string setting =
      first_json_difference(expected, payload["run_settings"], "$.payload.run_settings");
  if (!setting.empty()) {
    constexpr std::string_view kPrefix = "$.payload.run_settings.";
    const std::string key = setting.size() > kPrefix.size() ? setting.substr(kPrefix.size()) : "";
    const std::string name = key.substr(0, key.find_first_of(".["));
    const auto value = [&](const nlohmann::json& recipe) {
      if (name.empty()) return recipe.dump();
      return recipe.is_object() && recipe.contains(name) ? recipe[name].dump()
                                                         : std::string("(absent)");
    };
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "plan differs from the trusted rebuild at {}: expected {}, found {}; {}",
                      setting, value(expected), value(payload["run_settings"]),
                      difference_hint(setting))
        .with_field("json_path", setting);
  }
  if (auto same = compare_plan_wire(rebuilt.plan(), wire, plan_text); !same) {
    const Status& status = same.error();
    auto path = status.fields().find("json_path");
    const std::string at = path == status.fields().end() ? "$" : path->second;
    return make_error(status.code(), "{}; {}", status.message(), difference_hint(at))
        .with_field("json_path", at);
  }
  return rebuilt;
}

Result<ModelPlanSettings> model_settings(const PlanSourceArgs& sources, ModelPlanSettings model) {
  FERRITE_RETURN_IF_ERROR(refuse_program_options_for_models(sources));
  if (sources.quality_approval) model.quality_approval = sources.quality_approval;
  return model;
}

Result<void> refuse_model_options(const ModelPlanSettings& model) {
  const GivenOption model_only[] = {{model.tokenizer.has_value(), "--tokenizer"},
                                    {model.context.has_value(), "--context"},
                                    {model.token_capacity.has_value(), "--capacity"},
                                    {model.sequence_slots.has_value(), "--sequence-slots"},
                                    {!model.providers.empty(), "--provider"},
                                    {model.isa.has_value(), "--isa"},
                                    {model.weights.has_value(), "--weights"},
                                    {model.memory_bytes.has_value(), "--memory"}};
  return refuse_given_options(model_only,
                              "is for model files; a program file is compiled for its "
                              "--catalog, --policy and --input");
}

Result<ModelPlan> rebuild_model_plan_file(const std::string& plan_path,
                                          const std::string& model_path,
                                          const ModelPlanSettings& given) {
  FERRITE_ASSIGN_OR_RETURN(std::string text, read_text_file(plan_path, kMaxPlanFileBytes));
  return rebuild_model_plan(text, model_path, given);
}

}  // namespace ferrite::cli
